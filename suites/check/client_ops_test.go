package check

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// answeredWith is a with the answer's headers and body.
func answeredWith(a history.Attempt, h http.Header, body string) history.Attempt {
	a.RespHeader, a.RespBody = h, []byte(body)
	return a
}

// The grouping rule: within one identity, a key none of the operation's attempts carried, sent
// after the client was answered a 2xx, begins a new operation (#2, #3); after a failure, an
// answer never received, a restart with the operation pending, or before the 2xx was written, it
// stays in the operation; attempts for no operation belong to none.
func TestGroupClientOps(t *testing.T) {
	unknown := try(9, "r-9", "k9", AnswerUnknownPath, 5, 6)
	cases := []struct {
		name     string
		attempts []history.Attempt
		want     []string // each operation: its name, then its attempts' seqs
	}{
		{"resumed, then the operation asked again", []history.Attempt{
			try(1, "r-1", "k1", AnswerHeld, 0, 100), inLife(try(2, "r-1", "k1", AnswerReplay, 200, 201), 2),
			inLife(try(3, "r-1", "k2", AnswerSuccess, 202, 203), 2), inLife(try(4, "r-1", "k2", AnswerReplay, 300, 301), 2)},
			[]string{"r-1 | 100: 1 2", "r-1 | 100 #2: 3 4"}},
		{"a third time", []history.Attempt{try(1, "r-1", "k1", AnswerSuccess, 0, 1), try(2, "r-1", "k2", AnswerSuccess, 10, 11),
			try(3, "r-1", "k3", "503", 20, 21), try(4, "r-1", "k4", AnswerSuccess, 30, 31)},
			[]string{"r-1 | 100: 1", "r-1 | 100 #2: 2", "r-1 | 100 #3: 3 4"}},
		{"a new key after a failure stays", []history.Attempt{try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k2", AnswerSuccess, 50, 51)},
			[]string{"r-1 | 100: 1 2"}},
		{"a new key after a restart stays", []history.Attempt{try(1, "r-1", "k1", AnswerHeld, 0, 100), inLife(try(2, "r-1", "k2", AnswerSuccess, 200, 201), 2)},
			[]string{"r-1 | 100: 1 2"}},
		{"a key sent before the 2xx was written stays", []history.Attempt{try(1, "r-1", "k1", AnswerSuccess, 0, 30), try(2, "r-1", "k2", AnswerSuccess, 10, 11)},
			[]string{"r-1 | 100: 1 2"}},
		{"the same key after a 2xx stays", []history.Attempt{try(1, "r-1", "k1", AnswerSuccess, 0, 1), try(2, "r-1", "k1", AnswerReplay, 2, 3)},
			[]string{"r-1 | 100: 1 2"}},
		{"no key after a 2xx stays", []history.Attempt{try(1, "r-1", "", AnswerSuccess, 0, 1), try(2, "r-1", "", AnswerSuccess, 20, 21)},
			[]string{"r-1 | 100: 1 2"}},
		{"identities apart, in the order each began, no operation left out", []history.Attempt{try(2, "r-2", "k2", AnswerSuccess, 3, 4), unknown,
			try(1, "r-1", "k1", AnswerSuccess, 0, 1)},
			[]string{"r-1 | 100: 1", "r-2 | 100: 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, op := range GroupClientOps(nil, c.attempts, nil) {
				var seqs []string
				for _, a := range op.Attempts {
					seqs = append(seqs, strconv.FormatInt(a.Seq, 10))
				}
				got = append(got, op.Name()+": "+strings.Join(seqs, " "))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("operations %q, want %q", got, c.want)
			}
		})
	}
	stalls := GroupClientOps(nil, []history.Attempt{try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerSuccess, 50, 51)},
		func(from, to time.Time) time.Duration { return to.Sub(from) / 7 })
	if len(stalls) != 1 || !slices.Equal(stalls[0].Stalls, []time.Duration{0, 7 * time.Millisecond}) {
		t.Errorf("stalls %+v, want [0 7ms] (what the watch saw between the 503 and the retry)", stalls)
	}
}

// A client that resumes its pending operation with its key and then performs the operation asked
// for again under a new key passes restart-reuses-key: the new key after the 201 is a new
// operation, judged by nothing of the pending one's, and no "hammering" although it came 700 µs
// after the 201. One that restarts with a new key for the pending operation is still caught.
func TestRestartJudgesOnlyThePendingOperation(t *testing.T) {
	def := payOp(t)
	held := try(1, "r-1", "k1", AnswerHeld, 0, 100)
	group := func(as ...history.Attempt) ClientRun {
		ops := GroupClientOps(nil, as, nil)
		for i := range ops {
			ops[i].Def = def
		}
		return ClientRun{Client: "sdk", Ops: ops, Wanted: 1}
	}
	resumedThenAgain := group(held, inLife(try(2, "r-1", "k1", AnswerReplay, 200, 201), 2),
		inLife(withBody(try(3, "r-1", "k2", AnswerSuccess, 201, 202), `{"ref": "r-1", "amount": 100, "note": "again"}`), 2))
	expect(t, RestartReusesKey(resumedThenAgain, policy()), reports.Pass, nil, "")
	expect(t, SameKeyOnRetry(resumedThenAgain, policy()), reports.Pass, nil, "")
	lost := group(held, inLife(try(2, "r-1", "k2", AnswerSuccess, 200, 201), 2), inLife(try(3, "r-1", "k3", AnswerSuccess, 300, 301), 2))
	expect(t, RestartReusesKey(lost, policy()), reports.Fail, []string{"key-lost-on-restart seqs=1,2"}, "was sent with key k2, not the k1")
	hammer := group(try(1, "r-1", "k1", AnswerSuccess, 0, 1), try(2, "r-1", "k1", AnswerReplay, 1, 2))
	expect(t, SameKeyOnRetry(hammer, policy()), reports.Fail, []string{"no-backoff seqs=1,2"}, "was sent again 0s after a 201: hammering")
	another := group(try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k2", AnswerSuccess, 2, 3))
	r := SameKeyOnRetry(another, policy())
	expect(t, r, reports.Fail, []string{"no-backoff seqs=1,2", "key-changed-on-retry seqs=1,2", "duplicate-record seqs=1,2"}, "with another key (k2, not k1)")
	if strings.Contains(r.Message(), "hammering") {
		t.Errorf("a retry under another key is called hammering:\n%s", r.Message())
	}
}

// conditionalPolicy retries a 429 only when its code is lock_timeout, obeys Should-Retry, and
// makes at most three attempts.
func conditionalPolicy(p *targets.RetryPolicy) {
	p.MaxAttempts = 3
	p.RetriesWhen = []targets.RetryWhen{{Status: 429, JSONPath: "$.error.code", Equals: "lock_timeout", At: 4}}
	p.Retries = []string{"reset", "timeout", "5xx", "409"}
	p.ShouldRetryHeader = &targets.ShouldRetryHeader{Name: "Should-Retry", Retry: "true", Never: "false"}
}

// A condition met must be retried, one not met must not be; a should-retry header decides over
// the status both ways: a 503 it says false of is never resent, a 400 it says true of is retried.
func TestRetriesTransientReadsTheAnswer(t *testing.T) {
	def := payOp(t)
	met := answeredWith(try(1, "r-1", "k1", "429", 0, 1), nil, `{"error": {"code": "lock_timeout"}}`)
	unmet := answeredWith(try(3, "r-2", "k2", "429", 100, 101), nil, `{"error": {"type": "rate_limit"}}`)
	never := answeredWith(try(5, "r-3", "k3", "503", 200, 201), http.Header{"Should-Retry": {"false"}}, `{}`)
	retry := answeredWith(try(7, "r-4", "k4", "400", 300, 301), http.Header{"Should-Retry": {"true"}}, `{}`)
	after := func(a history.Attempt, seq int64, at int) history.Attempt {
		return try(seq, strings.Split(a.Identity, " | ")[0], a.Key, AnswerSuccess, at, at+1)
	}
	tests := []policyCase{
		{"as declared", clientRun(opOf(def, met, after(met, 2, 50)), opOf(def, unmet), opOf(def, never), opOf(def, retry, after(retry, 8, 350))),
			policy(conditionalPolicy), reports.Pass, nil, ""},
		{"the code ignored", clientRun(opOf(def, met, after(met, 2, 50)), opOf(def, unmet, after(unmet, 4, 150))),
			policy(conditionalPolicy), reports.Fail, []string{"undeclared-retry seqs=3,4"},
			"was retried after a 429 whose $.error.code is not lock_timeout, a condition of retry.retries the answer does not meet"},
		{"the code not read", clientRun(opOf(def, met), opOf(def, unmet)),
			policy(conditionalPolicy), reports.Fail, []string{"no-retry seqs=1"}, "was not retried after a 429 whose $.error.code is lock_timeout"},
		{"should-retry false ignored", clientRun(opOf(def, never, after(never, 6, 250))),
			policy(conditionalPolicy), reports.Fail, []string{"retried-rejection seqs=5,6"}, "rejected it with 503 with Should-Retry: false"},
		{"should-retry true ignored", clientRun(opOf(def, retry)),
			policy(conditionalPolicy), reports.Fail, []string{"no-retry seqs=7"}, "was not retried after a 400 with Should-Retry: true"},
	}
	runPolicyCases(t, tests, RetriesTransient)
	// no-retry-on-rejection reads the header too: a 400 it says true of is no rejection.
	expect(t, NoRetryOnRejection(clientRun(opOf(def, retry, after(retry, 8, 350))), policy(conditionalPolicy)), reports.Unknown, nil,
		"no operation got an answer the client declares never to resend")
}

// bounded and key-present read the configuration's whole policy: a client that does not retry a
// 503 stops after one attempt under a persistent 503 rightly, whatever its max_attempts; one that
// retries nothing has no retry to judge.
func TestPerConfigurationPoliciesAreRead(t *testing.T) {
	def := payOp(t)
	noFiveXX := func(p *targets.RetryPolicy) { p.Retries, p.MaxAttempts = []string{"reset", "429"}, 2 }
	once := clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1)))
	once.Reported = targets.ReportedFailed
	expect(t, Bounded(once, policy(noFiveXX)), reports.Pass, nil, "")
	expect(t, Bounded(once, policy(func(p *targets.RetryPolicy) { p.MaxAttempts = 2 })), reports.Fail, []string{"no-retry seqs=1,1"},
		"given up after 1 of the 2 attempts the client declares, under a persistent failure it declares it retries (the last a 503)")
	nothing := func(p *targets.RetryPolicy) { p.Retries = []string{"timeout"} }
	expect(t, KeyPresent(clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1))), policy(nothing)), reports.Skipped, nil, "")
}
