package check

import (
	"fmt"
	"slices"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// UncertainStaysPending judges a scenario of one operation whose first attempt the API processed
// and whose every attempt went unanswered (the first one's connection closed after processing,
// every later one's before) until the client stopped on its own; then the client was started
// again with the same state directory and answered as a correct API answers. When it stops, the
// client MUST report the operation pending, as it declares (clients[].outcome.pending): reporting
// it failed is uncertain-reported-as-failure (the API holds a record: a caller told it failed
// pays again), reporting it done is uncertain-reported-as-success, reporting nothing it declares
// is abandoned-operation. Started again, its first attempt MUST carry the pending operation's key
// (key-lost-on-restart; missing-key when either carries none) and body (body-changed-on-retry);
// one that never resends it abandoned it (abandoned-operation); and the operation MUST end with
// one record (duplicate-record). A client that declares persists_keys: false is not started again:
// only its report is judged. Every attempt is bounded (everyAttempt; the first of the second start
// exempt).
func UncertainStaysPending(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if !j.opsSent(r) {
		return j.result()
	}
	j.everyAttempt(r, p)
	op, first := r.uncertainOp()
	end := r.FirstStart
	if !p.PersistsKeys && end == nil { // not started again: its one start is judged
		end = &ClientEnd{Exit: r.Exit, Killed: r.Killed, Reported: r.Reported}
	}
	switch {
	case op == nil:
		j.unknownf("the API processed no attempt of the client's first start: the scenario did not run as planned")
		return j.result()
	case end == nil || end.Killed != "":
		j.unknownf("the client did not stop on its own (%s): whether it reports operation %s pending cannot be told", r.Killed, op.Name())
		return j.result()
	}
	before := slices.DeleteFunc(slices.Clone(op.Attempts), func(a history.Attempt) bool { return a.Life != first.Life })
	if i := slices.IndexFunc(before, func(a history.Attempt) bool { return !unanswered(a) }); i >= 0 {
		j.unknownf("attempt #%d of operation %s got %s before the client stopped: the scenario answers none", before[i].Seq, op.Name(), answerWords(before[i]))
		return j.result()
	}
	j.pendingReported(*end, op, before)
	if !p.PersistsKeys {
		j.r.Observef("the client declares persists_keys: false: whether it resumes the pending operation with its key when started again is not judged")
		return j.result()
	}
	why := ""
	if r.Killed != "" {
		why = " (" + r.Killed + ")"
	}
	j.resumed(op, first, fmt.Sprintf("started again with the same state directory, the client never resent operation %s, pending when it stopped%s", op.Name(), why))
	j.opRecords(*op)
	return j.result()
}

// uncertainOp is the operation whose attempt the API processed in the client's first start
// (closed after processing), and that attempt; nil when none was.
func (r ClientRun) uncertainOp() (*ClientOp, history.Attempt) {
	return r.firstAttempt(func(a history.Attempt) bool { return a.Life == 1 && a.Answer == AnswerDrop })
}

// pendingReported judges what the client reported when it stopped, none of operation op's
// attempts (before) answered.
func (j *judge) pendingReported(end ClientEnd, op *ClientOp, before []history.Attempt) {
	last := before[len(before)-1]
	seqs := []int64{before[0].Seq, last.Seq}
	if len(before) == 1 {
		seqs = seqs[:1]
	}
	unanswered := fmt.Sprintf("none of its %d attempt(s) was answered (the API processed the first)", len(before))
	switch end.Reported {
	case targets.ReportedPending:
	case targets.ReportedFailed:
		j.add(clientAnomaly(reports.KindUncertainReportedAsFailure, last, fmt.Sprintf(
			"the client %s though %s: a caller told it failed starts it again, and the API holds a record",
			reportedWords(op.Name(), end.Reported, end.Exit), unanswered), seqs...))
	case targets.ReportedOK:
		j.add(clientAnomaly(reports.KindUncertainReportedAsSuccess, last, fmt.Sprintf(
			"the client %s though %s: it cannot know that the API acted",
			reportedWords(op.Name(), end.Reported, end.Exit), unanswered), seqs...))
	default:
		j.add(clientAnomaly(reports.KindAbandonedOperation, last, fmt.Sprintf(
			"the client stopped without reporting operation %s pending as it declares (outcome.pending) though %s: it %s",
			op.Name(), unanswered, reportedWords(op.Name(), end.Reported, end.Exit)), seqs...))
	}
}
