package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
)

// EventPerRecord judges the events of operations each sent, replayed, raced and sent with
// another payload (and requests rejected without a key), event-per-record: every acknowledged
// operation MUST publish exactly one event id, within the declared time; nothing else MUST
// publish under another id; an operation that left no record (a rejection) MUST publish
// nothing; copies of one id MUST be equal outside the declared members.
func EventPerRecord(ops []EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	byOp, stray := j.partition(ops, ev)
	j.ghosts(stray, ev)
	for i, op := range ops {
		evs := byOp[i]
		ok, acked := firstSuccess(op.Attempts)
		switch {
		case op.noRecord() && len(evs) > 0:
			what := "left no record"
			if op.Rejected {
				what = "was rejected"
			}
			j.add(opAnomaly(reports.KindGhostEvent, op, fmt.Sprintf("%s ref %s %s and published %s %s: an event tied to no record",
				op.Op, op.Ref, what, ev.Name, evs[0].ID), eventSeqs(evs)...))
		case acked:
			j.oneID(op, evs, ok, ev, " (its replays, race losers and mismatch published it again)")
		default:
			if list, _ := ids(evs); len(list) > 1 {
				j.add(opAnomaly(reports.KindEventNewID, op, fmt.Sprintf("%s ref %s, never acknowledged, published %s under %d ids (%s)",
					op.Op, op.Ref, ev.Name, len(list), idList(list)), eventSeqs(evs)...))
			}
		}
		j.differs(op, evs, ev)
	}
	return j.result()
}
