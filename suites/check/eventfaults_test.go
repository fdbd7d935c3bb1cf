package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

// resumed is ev with the API able to publish again seconds after t0 (the restart after the last
// kill, the heal of the broker link).
func resumed(ev Events, at float64, by string) Events {
	ev.Resumed, ev.ResumedBy = t0.Add(time.Duration(at*float64(time.Second))), by
	return ev
}

// killed is ev with a kill that came while the test operation's attempt #1 was in flight (and
// its restart at once): the kills exercised what they name.
func killed(ev Events) Events { return withFaults(ev, fault("kill", "instance 9", 1.005, 1.006)) }

// The checkers of event-after-crash and event-under-broker-outage share their judgement (an
// acknowledged operation's event once the faults were over, under one id): each is run on every
// case, a kill or a cut before the time the API could publish again.
func TestEventsAfterFaults(t *testing.T) {
	created := `{"id":"ord_1"}`
	acked := op(sent(1, 201, created))
	tests := []struct {
		name    string
		ops     []EventOp
		ev      Events
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "published once the API was back, twice under one id", ops: []EventOp{acked},
			ev: resumed(seen(9, evt(10, "evt_a", "r1", 5.5), evt(11, "evt_a", "r1", 5.6)), 4, "the restart after the last kill"), verdict: reports.Pass},
		{name: "lost: nothing within the declared time after the API was back", ops: []EventOp{acked},
			ev: resumed(seen(9), 4, "the restart after the last kill"), verdict: reports.Fail, want: []string{"missing-event seqs=1"},
			says: []string{"published no event order.created within 2s after the restart after the last kill: the event was lost"}},
		{name: "late after the heal", ops: []EventOp{acked},
			ev: resumed(seen(9, evt(10, "evt_a", "r1", 7)), 4, "the heal of the broker link"), verdict: reports.Fail,
			want: []string{"missing-event seqs=1,10"}, says: []string{"came 3s after the heal of the broker link, not within 2s"}},
		{name: "not yet, looked too briefly after the restart", ops: []EventOp{acked},
			ev: resumed(seen(5), 4, "the restart after the last kill"), verdict: reports.Unknown,
			says: []string{"looked only 1s after the restart after the last kill"}},
		{name: "acknowledged after the last fault: due after its 2xx", ops: []EventOp{op(sent(6, 201, created))},
			ev: resumed(seen(9), 4, "the heal of the broker link"), verdict: reports.Fail,
			want: []string{"missing-event seqs=6"}, says: []string{"within 2s after its 2xx (#6)"}},
		{name: "a second id for a republication", ops: []EventOp{acked},
			ev: resumed(seen(9, evt(10, "evt_a", "r1", 3), evt(11, "evt_b", "r1", 5)), 4, "the heal of the broker link"), verdict: reports.Fail,
			want: []string{"event-new-id seqs=1,10,11"}, says: []string{"under 2 ids (evt_a, evt_b)"}},
		{name: "never acknowledged, nothing published", ops: []EventOp{op(noAnswer(1))},
			ev: resumed(seen(9), 4, "the restart after the last kill"), verdict: reports.Pass},
		{name: "never acknowledged, two ids", ops: []EventOp{op(noAnswer(1))},
			ev:      resumed(seen(9, evt(10, "evt_a", "r1", 5), evt(11, "evt_b", "r1", 5.1)), 4, "the restart after the last kill"),
			verdict: reports.Fail, want: []string{"event-new-id seqs=10,11"}},
		{name: "an event no operation of the spec names is left out", ops: []EventOp{acked},
			ev: resumed(seen(9, evt(9, "evt_x", "r7", 5), evt(10, "evt_a", "r1", 5)), 4, "the restart after the last kill"), verdict: reports.Pass},
		{name: "copies of one id that differ", ops: []EventOp{acked},
			ev: resumed(seen(9, evt(10, "evt_a", "r1", 5), eventBody(evt(11, "evt_a", "r1", 5.5), `{"id":"evt_a","data":{"ref":"r1","id":"ord_9"}}`)),
				4, "the restart after the last kill"), verdict: reports.Fail, want: []string{"event-differs field=$['data']['id'] seqs=10,11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, EventAfterCrash(tt.ops, killed(tt.ev)), tt.verdict, tt.want, tt.says...)
			expect(t, EventUnderBrokerOutage(tt.ops, tt.ev), tt.verdict, tt.want, tt.says...)
		})
	}
}
