package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// EventNotBeforeCommit judges the events of an operation whose first attempt failed and that
// was retried (event-not-before-commit): it MUST publish nothing while nothing is committed (an
// event observed before the first retry that could have committed, or with no such retry at
// all, is a ghost), and, once a retry succeeded, exactly one event id within the declared time.
func EventNotBeforeCommit(op EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	if len(op.Attempts) == 0 {
		return Unknownf("no request was sent")
	}
	first := op.Attempts[0]
	if !j.answered(first, "the first attempt") {
		return j.result()
	}
	if is2xx(first.Status) {
		return Unknownf("the first attempt (#%d) did not fail (it got %d): the failure could not be injected", first.Seq, first.Status)
	}
	byOp, stray := j.partition([]EventOp{op}, ev)
	j.ghosts(stray, []EventOp{op}, ev) // by record: an event about a record no answer named
	evs := byOp[0]
	from, could := mayCommit(op.Attempts[1:])
	var before, after []Event
	for _, e := range evs {
		if !could || e.At.Before(from.Start) {
			before = append(before, e)
		} else {
			after = append(after, e)
		}
	}
	if len(before) > 0 {
		j.add(opAnomaly(reports.KindGhostEvent, op, fmt.Sprintf("%s ref %s published %s %s %s: its first attempt failed (#%d, %d) and nothing was committed, "+
			"so the event was published before (or without) a commit; cause: %s", op.Op, op.Ref, ev.Name, before[0].ID, ghostWhen(from, could), first.Seq, first.Status,
			CauseBeforeCommit), append([]int64{first.Seq}, eventSeqs(before)...)...))
	}
	if ok, acked := firstSuccess(op.Attempts[1:]); acked {
		j.oneID(op, after, ok, ev)
	} else {
		j.newIDsUnacknowledged(op, after, ev)
	}
	j.differs(op, evs, ev)
	j.steps(ev.Steps)
	return j.result()
}

// mayCommit is the first retry that may have committed the operation: one answered with a 2xx,
// or one whose outcome is unknown.
func mayCommit(retries []history.Attempt) (history.Attempt, bool) {
	for _, a := range retries {
		if succeeded(a) || a.Outcome == history.Unknown {
			return a, true
		}
	}
	return history.Attempt{}, false
}

// ghostWhen says when a ghost event came: before the retry that may have committed, or with no
// such retry.
func ghostWhen(from history.Attempt, could bool) string {
	if could {
		return fmt.Sprintf("before its retry #%d began", from.Seq)
	}
	return "although no retry succeeded"
}
