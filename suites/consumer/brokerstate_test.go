package consumer

import (
	"strings"
	"testing"
)

// The evidence says "redelivered" only when the broker shows a redelivery: JetStream's
// num_redelivered, or nothing pending or ack pending after a fault left messages held; RabbitMQ
// handing its ready messages out again. Four messages ack pending on JetStream are not a
// redelivery, whatever the ready count says.
func TestRedeliveredOnlyWhenTheBrokerShowsIt(t *testing.T) {
	cases := []struct {
		name  string
		now   brokerHeld
		saw   bool
		shown bool
		says  string
	}{
		{"jetstream: 0 pending, 4 ack pending, none redelivered", brokerHeld{Ready: 0, Unacked: 4, Redelivered: 0, Consumers: -1}, false, false,
			"has not redelivered the 4 messages it held (now 0 pending, 4 ack pending, 0 redelivered)"},
		{"jetstream: redelivered, not acknowledged yet", brokerHeld{Unacked: 4, Redelivered: 4, Consumers: -1}, false, true,
			"redelivered messages of the 4 it held, not all acknowledged yet"},
		{"jetstream: a redelivery seen before", brokerHeld{Unacked: 1, Consumers: -1}, true, true, "not all acknowledged yet"},
		{"jetstream: all acknowledged", brokerHeld{Consumers: -1}, false, true, "redelivered the 4 messages it held and every one was acknowledged"},
		{"rabbitmq: handed out again", brokerHeld{Unacked: -1, Redelivered: -1, Consumers: 2}, false, true, "handed them out again, flagged redelivered"},
		{"rabbitmq: still ready", brokerHeld{Ready: 4, Unacked: -1, Redelivered: -1, Consumers: 2}, false, false,
			"has not handed out again the 4 messages it held (now 4 ready with 2 consumers (unacknowledged ones not told while consumers are attached))"},
		{"rabbitmq: no consumer, nothing left", brokerHeld{Redelivered: -1}, false, true, "every one was acknowledged (now 0 ready, 0 unacknowledged, no consumer)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			what, shown := redelivered(4, c.now, c.saw)
			if shown != c.shown || !strings.Contains(what, c.says) {
				t.Errorf("redelivered = %q, %v; want %v, saying %q", what, shown, c.shown, c.says)
			}
		})
	}
}
