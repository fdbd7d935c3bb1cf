package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// uncertainRun is a run of uncertain-stays-pending: the first start's attempts (the first
// processed and closed, the others closed before processing; 5 max attempts) whose client
// reported said, then the second start's attempts.
func uncertainRun(def *targets.ClientOperation, said targets.Reported, rerun ...history.Attempt) ClientRun {
	as := []history.Attempt{try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k1", AnswerCut, 100, 101),
		try(3, "r-1", "k1", AnswerCut, 300, 301), try(4, "r-1", "k1", AnswerCut, 700, 701), try(5, "r-1", "k1", AnswerCut, 1500, 1501)}
	for _, a := range rerun {
		as = append(as, inLife(a, 2))
	}
	r := clientRun(opOf(def, as...))
	r.FirstStart = &ClientEnd{Exit: 4, Reported: said}
	r.Reported = targets.ReportedOK
	return r
}

func TestUncertainStaysPending(t *testing.T) {
	def := payOp(t)
	resumed := try(6, "r-1", "k1", AnswerReplay, 3000, 3001)
	killed := uncertainRun(def, targets.ReportedPending)
	killed.FirstStart, killed.Killed, killed.Exit = nil, "the scenario's timeout passed", -1
	answered := uncertainRun(def, targets.ReportedPending, resumed)
	answered.Ops[0].Attempts[2] = try(3, "r-1", "k1", "503", 300, 301)
	tests := []clientCase{
		{"pending, then resumed with its key", uncertainRun(def, targets.ReportedPending, resumed), reports.Pass, nil, ""},
		{"reported failed", uncertainRun(def, targets.ReportedFailed, resumed), reports.Fail, []string{"uncertain-reported-as-failure seqs=1,5"},
			"reported operation r-1 | 100 failed (it exited 4) though none of its 5 attempt(s) was answered (the API processed the first)"},
		{"reported done", uncertainRun(def, targets.ReportedOK, resumed), reports.Fail, []string{"uncertain-reported-as-success seqs=1,5"},
			"as a success (it exited 4) though none of its 5 attempt(s) was answered"},
		{"reported nothing it declares", uncertainRun(def, targets.ReportedNone, resumed), reports.Fail, []string{"abandoned-operation seqs=1,5"},
			"stopped without reporting operation r-1 | 100 pending as it declares"},
		{"a new key on the rerun: two records", uncertainRun(def, targets.ReportedPending, try(6, "r-1", "k9", AnswerSuccess, 3000, 3001)),
			reports.Fail, []string{"key-lost-on-restart seqs=1,6", "duplicate-record seqs=1,6"}, "sent with key k9, not the k1 it was pending with"},
		{"another body on the rerun", uncertainRun(def, targets.ReportedPending,
			withBody(try(6, "r-1", "k1", AnswerReplay, 3000, 3001), `{"ref": "r-1", "amount": 100, "note": "again"}`)),
			reports.Fail, []string{"body-changed-on-retry what=$['note'] seqs=1,6"}, "after the restart operation r-1 | 100 was sent with $['note'] changed"},
		{"not resumed", uncertainRun(def, targets.ReportedPending), reports.Fail, []string{"abandoned-operation seqs=1"},
			"never resent operation r-1 | 100, pending when it stopped"},
		{"reported failed and forgot it", uncertainRun(def, targets.ReportedFailed), reports.Fail,
			[]string{"uncertain-reported-as-failure seqs=1,5", "abandoned-operation seqs=1"}, ""},
		{"never stopped", killed, reports.Unknown, nil, "did not stop on its own (the scenario's timeout"},
		{"an attempt answered", answered, reports.Unknown, nil, "attempt #3 of operation r-1 | 100 got a 503 before the client stopped"},
		{"nothing processed", clientRun(opOf(def, try(1, "r-1", "k1", AnswerCut, 0, 1))), reports.Unknown, nil, "processed no attempt"},
	}
	runClientCases(t, tests, withPolicy(UncertainStaysPending))
}

// bounded accepts a pending report where every attempt went unanswered, and only there.
func TestBoundedAcceptsPendingWhenUnanswered(t *testing.T) {
	def := payOp(t)
	dropped := []history.Attempt{try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k1", AnswerDrop, 100, 101),
		try(3, "r-1", "k1", AnswerDrop, 300, 301), try(4, "r-1", "k1", AnswerDrop, 700, 701), try(5, "r-1", "k1", AnswerDrop, 1500, 1501)}
	mixed := append([]history.Attempt{try(1, "r-1", "k1", "503", 0, 1)}, dropped[1:]...)
	said := func(as []history.Attempt, r targets.Reported) ClientRun {
		run := clientRun(opOf(def, as...))
		run.Reported, run.Exit = r, 4
		return run
	}
	tests := []clientCase{
		{"unanswered, reported pending", said(dropped, targets.ReportedPending), reports.Pass, nil, ""},
		{"unanswered, reported failed", said(dropped, targets.ReportedFailed), reports.Pass, nil, ""},
		{"unanswered, reported done", said(dropped, targets.ReportedOK), reports.Fail, []string{"abandoned-operation seqs=5"}, "as a success"},
		{"a 503 among them, reported pending", said(mixed, targets.ReportedPending), reports.Fail, []string{"abandoned-operation seqs=5"},
			"without reporting a failure: it reported operation r-1 | 100 pending (it exited 4)"},
	}
	runClientCases(t, tests, withPolicy(Bounded))
}

// a bare error reported pending is no success: the kind's harm (a caller told it went through)
// is absent.
func TestBareErrorReportedPending(t *testing.T) {
	def := payOp(t)
	r := reportedRun(def, try(1, "r-1", "k1", "503", 0, 1))
	r.Reported = targets.ReportedPending
	expect(t, BareError(r, policy()), reports.Pass, nil, "")
}
