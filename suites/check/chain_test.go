package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestChain(t *testing.T) {
	keyed := func(seq int64, key string, status int) history.Attempt {
		a := sent(seq, status, `{"id":"ord_1"}`)
		a.Key = key
		return a
	}
	event := func(seq int64, id string, effects int) ChainEvent {
		return ChainEvent{ID: id, Seq: seq, Copies: 1, Effects: Counted(effects)}
	}
	// One operation, its first answer lost (#1), its retry replayed (#2): one record, one event,
	// one effect.
	ok := ChainOp{Op: testOp, Ref: "r1", Reported: ChainSucceeded,
		Attempts: []history.Attempt{noAnswer(1), sent(2, 201, `{"id":"ord_1"}`)},
		Records:  records(1), Events: []ChainEvent{event(3, "evt_1", 1)}}
	with := func(change func(*ChainOp)) ChainRun {
		op := ok
		change(&op)
		return ChainRun{Ops: []ChainOp{op}}
	}
	tests := []struct {
		name    string
		run     ChainRun
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "one record, one event, one effect", run: ChainRun{Ops: []ChainOp{ok}}, verdict: reports.Pass},
		{name: "an event observed twice (a relay's redelivery) applied once", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{{ID: "evt_1", Seq: 3, Copies: 2, Effects: Counted(1)}}
		}), verdict: reports.Pass},
		{name: "a failed operation that left nothing", run: with(func(op *ChainOp) {
			op.Reported, op.Records, op.Events = ChainFailed, records(0), nil
		}), verdict: reports.Pass},
		{name: "a failed operation that took effect once", run: with(func(op *ChainOp) { op.Reported = ChainFailed }), verdict: reports.Pass},
		{name: "the client changed its key: two records", run: with(func(op *ChainOp) {
			op.Attempts = []history.Attempt{keyed(1, "k1", 201), keyed(2, "k2", 201)}
			op.Records, op.Events = records(2), []ChainEvent{event(3, "evt_1", 1), event(4, "evt_2", 1)}
		}), verdict: reports.Fail, want: []string{"chain-duplicate-effect hop=client seqs=1,2"}, says: []string{"carried 2 keys (k1, k2)"}},
		{name: "a failed operation that took effect twice", run: with(func(op *ChainOp) {
			op.Reported = ChainFailed
			op.Attempts = []history.Attempt{keyed(1, "k1", 201), keyed(2, "k2", 503)}
			op.Records, op.Events = records(2), []ChainEvent{event(3, "evt_1", 1), event(4, "evt_2", 1)}
		}), verdict: reports.Fail, want: []string{"chain-duplicate-effect hop=client seqs=1,2"}, says: []string{"which the client reported failed"}},
		{name: "the API executed one key twice", run: with(func(op *ChainOp) {
			op.Records, op.Events = records(2), []ChainEvent{event(3, "evt_1", 1), event(4, "evt_2", 1)}
		}), verdict: reports.Fail, want: []string{"chain-duplicate-effect hop=api seqs=1,2"}, says: []string{"the API executed it again"}},
		{name: "one record published under two ids", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{event(3, "evt_1", 1), event(4, "evt_2", 1)}
		}), verdict: reports.Fail, want: []string{"chain-duplicate-effect hop=api→broker seqs=3,4"}, says: []string{"2 event ids (evt_1, evt_2)"}},
		{name: "the consumer applied one event twice", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{{ID: "evt_1", Seq: 3, Copies: 2, Effects: Counted(2)}}
		}), verdict: reports.Fail, want: []string{"chain-duplicate-effect hop=consumer seqs=3"}, says: []string{"applied 2 times"}},
		{name: "acknowledged, no record", run: with(func(op *ChainOp) { op.Records, op.Events = records(0), nil }),
			verdict: reports.Fail, want: []string{"chain-lost-effect hop=api seqs=1,2"}},
		{name: "acknowledged, committed, never published", run: with(func(op *ChainOp) { op.Events = nil }),
			verdict: reports.Fail, want: []string{"chain-lost-effect hop=api→broker seqs=1,2"}, says: []string{"no event of it reached the broker"}},
		{name: "published, never applied", run: with(func(op *ChainOp) { op.Events = []ChainEvent{event(3, "evt_1", 0)} }),
			verdict: reports.Fail, want: []string{"chain-lost-effect hop=consumer seqs=3"}, says: []string{"never applied it"}},
		{name: "a webhook delivered once, not accepted, never delivered again", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{{ID: "evt_1", Seq: 3, Copies: 1, Unaccepted: true, Effects: Counted(0)}}
		}), verdict: reports.Fail, want: []string{"chain-lost-effect hop=api→broker seqs=3"}, says: []string{"never delivered it again"}},
		{name: "a webhook delivered again, never accepted, never applied", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{{ID: "evt_1", Seq: 3, Copies: 3, Unaccepted: true, Effects: Counted(0)}}
		}), verdict: reports.Fail, want: []string{"chain-lost-effect hop=consumer seqs=3"}, says: []string{"never applied it"}},
		{name: "a failed operation without an event is no loss", run: with(func(op *ChainOp) { op.Reported, op.Events = ChainFailed, nil }),
			verdict: reports.Pass},
		{name: "an unreported operation without an effect is no loss", run: with(func(op *ChainOp) {
			op.Reported, op.Events = ChainUnreported, []ChainEvent{event(3, "evt_1", 0)}
		}), verdict: reports.Pass},
		{name: "the records could not be counted", run: with(func(op *ChainOp) { op.Records = countFailed() }), verdict: reports.Unknown,
			says: []string{"connection refused"}},
		{name: "the effects could not be counted", run: with(func(op *ChainOp) {
			op.Events = []ChainEvent{{ID: "evt_1", Seq: 3, Copies: 1, Effects: Count{Taken: true, Err: "effects: 503"}}}
		}), verdict: reports.Unknown, says: []string{"effects: 503"}},
		{name: "no event seen while the events could not be observed", run: ChainRun{
			Ops: with(func(op *ChainOp) { op.Events = nil }).Ops, EventsUnseen: "the observer's queue was deleted"},
			verdict: reports.Unknown, says: []string{"the observer's queue was deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Chain(tt.run), tt.verdict, tt.want, tt.says...)
		})
	}
}
