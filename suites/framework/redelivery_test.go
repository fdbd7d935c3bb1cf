package framework

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// clockConsumer parses a one-consumer target of transport with the binding and extra fields.
func clockConsumer(t *testing.T, transport, binding, extra string) *targets.Consumer {
	t.Helper()
	src := "instances: [http://127.0.0.1:8080]\nconsumers:\n  - name: c\n    transport: " + transport + "\n" + binding +
		"    event: {body: '{\"id\": \"{{.EventID}}\"}'}\n    effects: {http: {path: /e, jsonpath: $.n}}\n" + extra
	tg, err := targets.Parse("t.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return tg.Consumers[0]
}

const (
	clockAMQP    = "    amqp: {url: \"amqp://127.0.0.1/\", exchange: x, routing_key: k, queue: q}\n"
	clockNATS    = "    nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, durable: d}\n"
	clockNATSNo  = "    nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e}\n"
	clockWebhook = "    path: /hooks\n"
)

// The redelivery clock of each transport: from the server's AckWait and BackOff on JetStream, at
// once or after redelivery_after on RabbitMQ, the harness's schedule on a webhook; the lock
// timeout added after a claim, and the margin always.
func TestRedeliveryClock(t *testing.T) {
	cases := []struct {
		name           string
		c              *targets.Consumer
		server         ServerRedelivery
		step, claimed  time.Duration
		source, reason string
	}{
		{"jetstream ackwait", clockConsumer(t, "nats", clockNATS, "    lock_timeout: 5s\n"), ServerRedelivery{AckWait: 30 * time.Second},
			30 * time.Second, 38 * time.Second, "JetStream AckWait 30s, as the server reports it", ""},
		{"jetstream backoff", clockConsumer(t, "nats", clockNATS, ""), ServerRedelivery{AckWait: time.Second, BackOff: []time.Duration{time.Second, 10 * time.Second, time.Hour}},
			10 * time.Second, 13 * time.Second, "JetStream BackOff [1s 10s 1h0m0s]", ""},
		{"jetstream backoff of one step", clockConsumer(t, "nats", clockNATS, ""), ServerRedelivery{BackOff: []time.Duration{2 * time.Second}},
			2 * time.Second, 5 * time.Second, "JetStream BackOff [2s]", ""},
		{"jetstream without a durable, declared", clockConsumer(t, "nats", clockNATSNo, "    redelivery_after: 4s\n"), ServerRedelivery{},
			4 * time.Second, 7 * time.Second, "declared redelivery_after 4s", ""},
		{"jetstream not read", clockConsumer(t, "nats", clockNATSNo, ""), ServerRedelivery{},
			30 * time.Second, 33 * time.Second, "JetStream's default AckWait 30s", ""},
		{"rabbitmq at once", clockConsumer(t, "amqp", clockAMQP, "    lock_timeout: 3s\n"), ServerRedelivery{},
			0, 6 * time.Second, "RabbitMQ redelivers at once", ""},
		{"rabbitmq retry queue", clockConsumer(t, "amqp", clockAMQP, "    redelivery_after: 20s\n    lock_timeout: 3s\n"), ServerRedelivery{},
			20 * time.Second, 26 * time.Second, "redelivery_after 20s", ""},
		{"webhook", clockConsumer(t, "webhook", clockWebhook, "    lock_timeout: 2s\n"), ServerRedelivery{},
			RetryInterval, RetryInterval + 5*time.Second, "the harness redelivers a webhook every 200ms", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRedeliveryClock(c.c, c.server)
			if r.Step != c.step || r.Wait(false) != c.step+RedeliveryMargin || r.Wait(true) != c.claimed {
				t.Errorf("step %v, wait %v, after a claim %v; want %v, %v, %v", r.Step, r.Wait(false), r.Wait(true), c.step, c.step+RedeliveryMargin, c.claimed)
			}
			if !strings.Contains(r.Source, c.source) {
				t.Errorf("source %q, want it to say %q", r.Source, c.source)
			}
		})
	}
}

// envWithAckWait is an environment whose one JetStream consumer's durable reported AckWait
// wait, under --max-redelivery-wait bound (0: the default).
func envWithAckWait(t *testing.T, wait, bound time.Duration) (*Env, *targets.Consumer) {
	c := clockConsumer(t, "nats", clockNATS, "    lock_timeout: 3s\n")
	s := Settings{MaxRedeliveryWait: bound}
	s.defaults()
	return &Env{Settings: s, Faults: &Faults{consumers: []*consumerKit{{c: c, ackWait: wait}}}}, c
}

// A JetStream consumer at the server's default AckWait (30 s) is judged under the default bound,
// and a spec that rests on its redelivery is skipped under --max-redelivery-wait 20s with the
// derived duration, the bound and the flag.
func TestRedeliverySkip(t *testing.T) {
	e, c := envWithAckWait(t, 30*time.Second, 0)
	if e.Settings.MaxRedeliveryWait != DefaultMaxRedeliveryWait {
		t.Fatalf("default bound %v, want %v", e.Settings.MaxRedeliveryWait, DefaultMaxRedeliveryWait)
	}
	if skip := e.RedeliverySkip(c, true); skip != "" {
		t.Errorf("under the default bound: skipped: %s", skip)
	}
	if got, want := e.RedeliveryWait(c, true), 36*time.Second; got != want {
		t.Errorf("wait after a claim %v, want %v", got, want)
	}
	e, c = envWithAckWait(t, 30*time.Second, 20*time.Second)
	skip := e.RedeliverySkip(c, false)
	for _, want := range []string{"33s", "JetStream AckWait 30s", "--max-redelivery-wait 20s"} {
		if !strings.Contains(skip, want) {
			t.Errorf("skip %q does not say %q", skip, want)
		}
	}
	if got := e.RedeliveryWait(c, false); got != 20*time.Second {
		t.Errorf("a wait over the bound is %v, want the bound 20s", got)
	}
}
