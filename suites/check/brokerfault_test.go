package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// brokerEvent is event evt_N, published as attempt #N, with its effects before and after a fault.
func brokerEvent(n int64, before, after int) BrokerEvent {
	key := "evt_" + string(rune('0'+n))
	return BrokerEvent{Publish: publication(key, n), Before: effectsOf(key, before), After: effectsOf(key, after)}
}

// brokerFault is a broker fault's observations: the events, what the broker held after the fault,
// and whether it held nothing at the end.
func brokerFault(held int, settled bool, evs ...BrokerEvent) BrokerFault {
	return BrokerFault{Events: evs, Held: held, Settled: settled}
}

// withEvent returns f with event i changed.
func withEvent(f BrokerFault, i int, change func(*BrokerEvent)) BrokerFault {
	f.Events = append([]BrokerEvent(nil), f.Events...)
	change(&f.Events[i])
	return f
}

func TestCrashBeforeAck(t *testing.T) {
	ok := brokerFault(4, true, brokerEvent(1, 1, 1), brokerEvent(2, 1, 1), brokerEvent(3, 1, 1), brokerEvent(4, 1, 1))
	tests := []struct {
		name    string
		f       BrokerFault
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "every redelivery was a duplicate", f: ok, verdict: reports.Pass},
		{name: "on RabbitMQ, which cannot tell the end's unacknowledged messages", f: func() BrokerFault { f := ok; f.Settled = false; return f }(),
			verdict: reports.Pass},
		{name: "an event applied only after the restart still counts once", f: withEvent(ok, 3, func(e *BrokerEvent) { e.Before = effectsOf("evt_4", 0) }),
			verdict: reports.Pass},
		{name: "no-dedupe: the redeliveries took effect again", f: brokerFault(4, true, brokerEvent(1, 1, 2), brokerEvent(2, 1, 2), brokerEvent(3, 1, 1), brokerEvent(4, 1, 1)),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1", "duplicate-record seqs=2"},
			says: []string{"event evt_1 took effect 2 times, want 1"}},
		{name: "a duplicate is a duplicate even when the broker held nothing", f: brokerFault(0, true, brokerEvent(1, 1, 2)),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "near miss: every ack got through, nothing was redelivered", f: brokerFault(0, true, brokerEvent(1, 1, 1), brokerEvent(2, 1, 1)),
			verdict: reports.Unknown, says: []string{"the broker held no message after the consumers were killed"}},
		{name: "near miss: nothing had taken effect before the kill", f: brokerFault(2, true, brokerEvent(1, 0, 1), brokerEvent(2, 0, 1)),
			verdict: reports.Unknown, says: []string{"no event had taken effect when the consumers were killed"}},
		{name: "the broker could not be asked", f: func() BrokerFault { f := ok; f.HeldErr = "connection refused"; return f }(),
			verdict: reports.Unknown, says: []string{"what the broker held after the consumers were killed could not be told: connection refused"}},
		{name: "an effect gone after the restart, all acknowledged: dropped", f: withEvent(ok, 1, func(e *BrokerEvent) { e.After = effectsOf("evt_2", 0) }),
			verdict: reports.Fail, want: []string{"dropped-event seqs=2"}},
		{name: "near miss: no effect while the broker may still hold it", f: func() BrokerFault {
			f := withEvent(ok, 1, func(e *BrokerEvent) { e.After = effectsOf("evt_2", 0) })
			f.Settled = false
			return f
		}(), verdict: reports.Unknown, says: []string{"event evt_2 was never acknowledged"}},
		{name: "a publication without a confirm", f: withEvent(ok, 0, func(e *BrokerEvent) { e.Publish = publication("evt_1", 1, history.Unknown) }),
			verdict: reports.Unknown, says: []string{"the publication of event 1 of 4 (attempt #1) got no answer"}},
		{name: "the effects could not be counted", f: withEvent(ok, 0, func(e *BrokerEvent) { e.After = effectsFailed() }),
			verdict: reports.Unknown, says: []string{"connection refused"}},
		{name: "nothing published", f: BrokerFault{}, verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, CrashBeforeAck(tt.f), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestBrokerLostAck(t *testing.T) {
	ok := brokerFault(1, true, brokerEvent(1, 1, 1))
	tests := []struct {
		name    string
		f       BrokerFault
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the redelivery after the reconnection was a duplicate", f: ok, verdict: reports.Pass},
		{name: "no-dedupe: the redelivery took effect again", f: brokerFault(1, true, brokerEvent(1, 1, 2)),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "near miss: the ack reached the broker before the cut", f: brokerFault(0, true, brokerEvent(1, 1, 1)),
			verdict: reports.Unknown, says: []string{"the broker held no message after the broker link was cut"}},
		{name: "near miss: the cut came before the consumer received it", f: brokerFault(1, true, brokerEvent(1, 0, 1)),
			verdict: reports.Unknown, says: []string{"event evt_1 had not taken effect when the broker link was cut"}},
		{name: "effect gone, redelivery acknowledged", f: brokerFault(1, true, brokerEvent(1, 1, 0)),
			verdict: reports.Fail, want: []string{"dropped-event seqs=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, BrokerLostAck(tt.f), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestCrashAfterAck(t *testing.T) {
	tests := []struct {
		name    string
		f       BrokerFault
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the broker kept the message and redelivered it: one effect", f: brokerFault(1, true, brokerEvent(1, 0, 1)), verdict: reports.Pass},
		{name: "on RabbitMQ, which cannot tell the end's unacknowledged messages", f: brokerFault(1, false, brokerEvent(1, 0, 1)), verdict: reports.Pass},
		{name: "ack-before-effect: delivered for the broker, never applied", f: brokerFault(0, true, brokerEvent(1, 0, 0)),
			verdict: reports.Fail, want: []string{"dropped-event seqs=1"},
			says: []string{"event evt_1 never took effect, and the broker considers its message delivered"}},
		{name: "near miss: delivered for the broker, and applied after all", f: brokerFault(0, true, brokerEvent(1, 0, 1)), verdict: reports.Pass},
		{name: "near miss: no effect yet, the broker still holds it", f: brokerFault(1, false, brokerEvent(1, 0, 0)),
			verdict: reports.Unknown, says: []string{"the broker still holds messages (1 after the kill): it may yet be applied"}},
		{name: "redelivered, acknowledged, never applied", f: brokerFault(1, true, brokerEvent(1, 0, 0)),
			verdict: reports.Fail, want: []string{"dropped-event seqs=1"}, says: []string{"the redelivery was taken for a duplicate"}},
		{name: "applied twice", f: brokerFault(1, true, brokerEvent(1, 0, 2)), verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "near miss: no effect, and the broker could not be asked", f: BrokerFault{Events: []BrokerEvent{brokerEvent(1, 0, 0)}, HeldErr: "timeout"},
			verdict: reports.Unknown, says: []string{"what the broker held after the kill could not be told: timeout"}},
		{name: "the effects could not be counted", f: brokerFault(0, true, BrokerEvent{Publish: publication("evt_1", 1), After: effectsFailed()}),
			verdict: reports.Unknown},
		{name: "the publication was not confirmed", f: brokerFault(0, true, BrokerEvent{Publish: publication("evt_1", 1, history.Failed), After: effectsOf("evt_1", 0)}),
			verdict: reports.Unknown, says: []string{"could not be sent"}},
		{name: "not one event", f: brokerFault(0, true), verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, CrashAfterAck(tt.f), tt.verdict, tt.want, tt.says...)
		})
	}
}

// crash-before-ack says how many events had taken effect when the consumers were killed, and
// why the harness stopped waiting: one of four (a consumer that takes one message at a time) is
// judged; none is unknown with the reason.
func TestCrashBeforeAckCountsTheEffectsBeforeTheKill(t *testing.T) {
	one := brokerFault(4, true, brokerEvent(1, 1, 1), brokerEvent(2, 0, 1), brokerEvent(3, 0, 1), brokerEvent(4, 0, 1))
	one.Waited = "no more took effect for 500ms"
	r := CrashBeforeAck(one)
	expect(t, r, reports.Pass, nil)
	if len(r.Observed) != 1 || r.Observed[0] != "1 of 4 events had taken effect when the consumers were killed (no more took effect for 500ms)" {
		t.Errorf("observed %q, want the count and the reason", r.Observed)
	}
	none := brokerFault(4, true, brokerEvent(1, 0, 1), brokerEvent(2, 0, 1))
	none.Waited = "1s passed since the first publication"
	expect(t, CrashBeforeAck(none), reports.Unknown, nil, "no event had taken effect when the consumers were killed (1s passed since the first publication)")
	dup := brokerFault(4, true, brokerEvent(1, 1, 2), brokerEvent(2, 0, 1))
	expect(t, CrashBeforeAck(dup), reports.Fail, []string{"duplicate-record seqs=1"})
}
