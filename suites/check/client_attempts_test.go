package check

import (
	"net/http"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Every attempt of every scenario is judged against the declared policy: the bound and
// hammering, whatever the scenario is named after.

// fourAttempts is the articles' policy with 4 attempts, and transport re-sends allowed.
func fourAttempts(resends int) targets.RetryPolicy {
	return policy(func(p *targets.RetryPolicy) { p.MaxAttempts, p.TransportResends = 4, resends })
}

// reportedRun is a one-operation run of as whose client reported its failure.
func reportedRun(def *targets.ClientOperation, as ...history.Attempt) ClientRun {
	return ClientRun{Client: "sdk", Ops: []ClientOp{opOf(def, as...)}, Wanted: 1, Exit: 1, Reported: targets.ReportedFailed}
}

func TestEveryAttemptBounded(t *testing.T) {
	def := payOp(t)
	// 503, a connection closed, then the same key 1 ms later (a transport's re-send), 503, 503.
	resent := []history.Attempt{try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerDrop, 300, 301),
		try(3, "r-1", "k1", "503", 302, 303), try(4, "r-1", "k1", "503", 900, 901), try(5, "r-1", "k1", "503", 1900, 1901)}
	otherBody := append([]history.Attempt(nil), resent...)
	otherBody[2] = withBody(otherBody[2], `{"ref": "r-1", "amount": 100, "note": "again"}`)
	tests := []policyCase{
		{"one extra immediate attempt after a reset", reportedRun(def, resent...), fourAttempts(0), reports.Fail,
			[]string{"no-backoff seqs=2,3", "unbounded-retries seqs=1,5"}, "was attempted 5 times, past the 4 declared (max_attempts)"},
		{"the same, its transport's re-send declared", reportedRun(def, resent...), fourAttempts(1), reports.Pass, nil, ""},
		{"a re-send with another body is a retry", reportedRun(def, otherBody...), fourAttempts(1), reports.Fail,
			[]string{"no-backoff seqs=2,3", "unbounded-retries seqs=1,5"}, "hammering (under 10ms), with the same key: a transport's re-send past the 1"},
		{"a 4th attempt within the bound", reportedRun(def, resent[0], resent[1], resent[3], resent[4]), fourAttempts(0), reports.Pass, nil, ""},
	}
	runPolicyCases(t, tests, Bounded)

	twice := clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerDrop, 100, 101),
		try(3, "r-1", "k1", AnswerDrop, 102, 103), try(4, "r-1", "k1", AnswerSuccess, 104, 105)))
	late := clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerDrop, 100, 101),
		try(3, "r-1", "k1", "503", 125, 126), try(4, "r-1", "k1", "503", 400, 401), try(5, "r-1", "k1", "503", 900, 901)))
	lateStalled := late
	lateStalled.Ops = []ClientOp{late.Ops[0]}
	lateStalled.Ops[0].Stalls = []time.Duration{0, 0, 20 * time.Millisecond, 0, 0}
	tooMany := clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", "503", 100, 101),
		try(3, "r-1", "k1", "503", 300, 301), try(4, "r-1", "k1", "503", 700, 701), try(5, "r-1", "k1", AnswerSuccess, 1500, 1501)))
	elsewhere := []policyCase{
		{"two re-sends, one declared", twice, fourAttempts(1), reports.Fail, []string{"no-backoff seqs=3,4"}, "sent again 1ms after a connection closed"},
		{"two re-sends, two declared", twice, fourAttempts(2), reports.Pass, nil, ""},
		{"a re-send 24 ms late, the harness stalled 20 ms of it", lateStalled, fourAttempts(1), reports.Pass, nil, ""},
		{"a re-send 24 ms late is a retry", late, fourAttempts(1), reports.Fail, []string{"unbounded-retries seqs=1,5"}, "attempted 5 times, past the 4"},
		{"past max_attempts in a key scenario", tooMany, fourAttempts(0), reports.Fail, []string{"unbounded-retries seqs=1,5"}, "attempted 5 times, past the 4"},
		{"a retry at once after a 503", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerSuccess, 4, 5))), policy(),
			reports.Fail, []string{"no-backoff seqs=1,2"}, "sent again 3ms after a 503: hammering"},
		{"a retry at once after a timeout: its end is the client's", clientRun(opOf(def, try(1, "r-1", "k1", AnswerHold, 0, 1000),
			try(2, "r-1", "k1", AnswerSuccess, 1002, 1003))), policy(), reports.Pass, nil, ""},
		{"the first attempt after a restart", clientRun(opOf(def, try(1, "r-1", "k1", AnswerDrop, 0, 1),
			inLife(try(2, "r-1", "k1", AnswerReplay, 3, 4), 2))), fourAttempts(0), reports.Pass, nil, ""},
	}
	runPolicyCases(t, elsewhere, KeyPresent)

	// A backoff that never retries sooner than 50 ms: a re-send 14 ms after a reset (a race
	// detector's, a loaded runner's) cannot be a retry it timed.
	linear := func(resends int) targets.RetryPolicy {
		return policy(func(p *targets.RetryPolicy) {
			p.MaxAttempts, p.TransportResends = 4, resends
			p.Backoff = targets.Backoff{Initial: 50 * time.Millisecond, Multiplier: 1, Max: 50 * time.Millisecond, Jitter: targets.JitterNone}
		})
	}
	slowResend := clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerDrop, 55, 56),
		try(3, "r-1", "k1", AnswerSuccess, 70, 71)))
	floor := []policyCase{
		{"a re-send 14 ms after a reset, under a backoff of 50 ms at least", slowResend, linear(1), reports.Pass, nil, ""},
		{"the same undeclared is a retry 14 ms early", slowResend, linear(0), reports.Fail, []string{"no-backoff seqs=2,3"}, "outside the declared backoff's [50ms, 50ms]"},
	}
	runPolicyCases(t, floor, Backoff)

	// After the close of a connection that had carried an earlier request (the only close after
	// which net/http re-sends on its own), a re-send delayed 40 ms by a loaded runner is still one.
	late40 := []history.Attempt{try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerDrop, 300, 301),
		try(3, "r-1", "k1", "503", 341, 342), try(4, "r-1", "k1", "503", 900, 901), try(5, "r-1", "k1", "503", 1900, 1901)}
	onReused := append([]history.Attempt(nil), late40...)
	onReused[1].Reused = true
	reused := []policyCase{
		{"a re-send 40 ms after a reused connection closed", reportedRun(def, onReused...), fourAttempts(1), reports.Pass, nil, ""},
		{"40 ms after a fresh connection closed is a retry", reportedRun(def, late40...), fourAttempts(1), reports.Fail,
			[]string{"unbounded-retries seqs=1,5"}, "attempted 5 times, past the 4"},
		// A retry the client timed 40 ms after a reused connection closed (its full jitter allows
		// it) cannot be told from a re-send: taken for one, it is not a give-up before the bound.
		{"stopped at 4 attempts, one of them maybe a re-send", reportedRun(def, onReused[:4]...), fourAttempts(1), reports.Pass, nil, ""},
		{"stopped at 3 attempts, one of them maybe a re-send", reportedRun(def, onReused[:3]...), fourAttempts(1), reports.Fail,
			[]string{"no-retry seqs=1,3"}, "given up after 2 of the 4 attempts the client declares (besides 1 transport re-send(s) the client declares, not counted)"},
	}
	runPolicyCases(t, reused, Bounded)
}

func TestBareError(t *testing.T) {
	def := payOp(t)
	plain := func(a history.Attempt) history.Attempt {
		a.RespHeader, a.RespBody = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte("Service Unavailable")
		return a
	}
	failing := []history.Attempt{plain(try(1, "r-1", "k1", "503", 0, 1)), plain(try(2, "r-1", "k1", "503", 100, 101)),
		plain(try(3, "r-1", "k1", "503", 300, 301)), plain(try(4, "r-1", "k1", "503", 700, 701)), plain(try(5, "r-1", "k1", "503", 1500, 1501))}
	told := func(r ClientRun, reported targets.Reported, exit int) ClientRun {
		r.Reported, r.Exit = reported, exit
		return r
	}
	empty := func(a history.Attempt) history.Attempt { a.RespBody = []byte("{}"); return a }
	tests := []policyCase{
		{"reported failed after retrying", reportedRun(def, failing...), policy(), reports.Pass, nil, ""},
		{"reported failed at once", reportedRun(def, failing[0]), policy(), reports.Pass, nil, ""},
		{"taken for a success", told(reportedRun(def, failing[0]), targets.ReportedOK, 0), policy(), reports.Fail, []string{"failure-reported-as-success seqs=1"},
			`reported operation r-1 | 100 as a success (it exited 0) though the API answered its 1 attempt(s) with a 503 Service Unavailable, text/plain; charset=utf-8, body "Service Unavailable"`},
		{"no way to report declared", told(reportedRun(def, failing[0]), targets.ReportedUntold, 0), policy(), reports.Unknown, nil, "declares no way to report"},
		{"a 422 {} resent with its key", reportedRun(def, empty(try(1, "r-1", "k1", "422", 0, 1)), empty(try(2, "r-1", "k1", "422", 100, 101))), policy(),
			reports.Fail, []string{"retried-rejection seqs=1,2"}, "after the API rejected it with 422"},
		{"retried past its bound", reportedRun(def, failing...), fourAttempts(0), reports.Fail, []string{"unbounded-retries seqs=1,5"}, "past the 4 declared"},
	}
	runPolicyCases(t, tests, BareError)
}
