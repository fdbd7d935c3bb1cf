package check

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The client checkers on hand-written histories of a scripted API: each attempt says when it
// arrived, what it carried and what the harness answered when.

// clientFile is a client whose operation's identity is its ref and amount.
const clientFile = `
name: client-test
clients:
  - name: sdk
    operations:
      - name: pay
        path: /v1/payments
        identity: [$.ref, $.amount]
`

// payOp is the operation of clientFile.
func payOp(t *testing.T) *targets.ClientOperation {
	t.Helper()
	tg, err := targets.Parse("client-test.yaml", []byte(clientFile), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return tg.Clients[0].Operations[0]
}

// ct0 is when the test histories start.
var ct0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// ms is ct0 plus n milliseconds.
func ms(n int) time.Time { return ct0.Add(time.Duration(n) * time.Millisecond) }

// try is an attempt of operation ref (amount 100): it arrived at +start ms with key and was
// answered (a status, or an answer such as drop) at +answered ms.
func try(seq int64, ref, key, answer string, start, answered int) history.Attempt {
	a := history.Attempt{Seq: seq, Op: "pay", Key: key, Method: "POST", URL: "/v1/payments", Start: ms(start), Answered: ms(answered),
		End: ms(answered), Identity: ref + " | 100", Answer: answer, Life: 1,
		ReqBody: fmt.Appendf(nil, `{"ref": %q, "amount": 100, "note": "first"}`, ref)}
	if n, err := strconv.Atoi(answer); err == nil {
		a.Status = n
	}
	switch answer {
	case AnswerSuccess, AnswerReplay:
		a.Status = 201
	}
	return a
}

// withRetryAfter is a with a Retry-After.
func withRetryAfter(a history.Attempt, d time.Duration) history.Attempt { a.RetryAfter = d; return a }

// withBody is a with another request body.
func withBody(a history.Attempt, body string) history.Attempt { a.ReqBody = []byte(body); return a }

// inLife is a sent by the client's n-th start.
func inLife(a history.Attempt, n int) history.Attempt { a.Life = n; return a }

// opOf groups attempts into one operation.
func opOf(def *targets.ClientOperation, as ...history.Attempt) ClientOp {
	return ClientOp{Def: def, Identity: as[0].Identity, Attempts: as}
}

// clientRun is a run of ops that sent every operation wanted and exited 0.
func clientRun(ops ...ClientOp) ClientRun {
	return ClientRun{Client: "sdk", Ops: ops, Wanted: len(ops)}
}

// policy is the articles' policy with changes.
func policy(change ...func(*targets.RetryPolicy)) targets.RetryPolicy {
	p := targets.DefaultRetryPolicy()
	for _, c := range change {
		c(&p)
	}
	return p
}

func TestRetriesTransient(t *testing.T) {
	def := payOp(t)
	retried := clientRun(
		opOf(def, try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k1", AnswerReplay, 60, 61)),
		opOf(def, try(3, "r-2", "k2", AnswerHold, 100, 3100), try(4, "r-2", "k2", AnswerSuccess, 3150, 3151)),
		opOf(def, try(5, "r-3", "k3", "503", 3200, 3201), try(6, "r-3", "k3", AnswerSuccess, 3300, 3301)))
	oneEach := clientRun(
		opOf(def, try(1, "r-1", "k1", AnswerDrop, 0, 1)),
		opOf(def, try(2, "r-2", "k2", "503", 10, 11)))
	tests := []policyCase{
		{"every failure retried", retried, policy(), reports.Pass, nil, ""},
		{"nothing retried", oneEach, policy(), reports.Fail, []string{"no-retry seqs=1", "no-retry seqs=2"}, "was not retried after a connection closed"},
		{"a policy that retries nothing given", clientRun(oneEach.Ops[0]), policy(func(p *targets.RetryPolicy) { p.Retries = nil }), reports.Unknown, nil,
			"nothing was judged"},
		{"a 503 the policy does not declare, not retried", clientRun(oneEach.Ops[1]), policy(func(p *targets.RetryPolicy) { p.Retries = nil }),
			reports.Pass, nil, ""},
		{"the last attempt allowed", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1))), policy(func(p *targets.RetryPolicy) { p.MaxAttempts = 1 }),
			reports.Pass, nil, ""},
		{"the client sent nothing", ClientRun{Client: "sdk", Wanted: 3, Killed: "the scenario's timeout passed"}, policy(), reports.Unknown, nil,
			"sent 0 of the 3 operations"},
	}
	runPolicyCases(t, tests, RetriesTransient)
}

func TestSameKeyOnRetry(t *testing.T) {
	def := payOp(t)
	tests := []clientCase{
		{"same key and body", clientRun(opOf(def, try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k1", "503", 50, 51),
			try(3, "r-1", "k1", AnswerReplay, 150, 151))), reports.Pass, nil, ""},
		{"a body reordered is the same body", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1),
			withBody(try(2, "r-1", "k1", AnswerSuccess, 50, 51), `{"note": "first", "amount": 100, "ref": "r-1"}`))), reports.Pass, nil, ""},
		{"a new key per retry", clientRun(opOf(def, try(1, "r-1", "k1", AnswerDrop, 0, 1), try(2, "r-1", "k2", AnswerSuccess, 50, 51))),
			reports.Fail, []string{"key-changed-on-retry seqs=1,2", "duplicate-record seqs=1,2"}, "carried key k2, not its first attempt's k1"},
		{"a field drifts", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1),
			withBody(try(2, "r-1", "k1", AnswerSuccess, 50, 51), `{"ref": "r-1", "amount": 100, "note": "second"}`))),
			reports.Fail, []string{"body-changed-on-retry what=$['note'] seqs=1,2"}, "changed $['note']"},
		{"nothing retried", clientRun(opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1))), reports.Unknown, nil, "retried no operation"},
	}
	runClientCases(t, tests, withPolicy(SameKeyOnRetry))
}

func TestNewKeyPerOperation(t *testing.T) {
	def := payOp(t)
	other := func(a history.Attempt) history.Attempt { a.Identity = "r-1 | 200"; return a }
	tests := []clientCase{
		{"a key each", clientRun(opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1)), opOf(def, try(2, "r-2", "k2", AnswerSuccess, 5, 6)),
			opOf(def, other(try(3, "r-1", "k3", AnswerSuccess, 10, 11)))), reports.Pass, nil, ""},
		{"one reference, one key", clientRun(opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1)), opOf(def, try(2, "r-2", "k2", AnswerSuccess, 5, 6)),
			opOf(def, other(try(3, "r-1", "k1", "422", 10, 11)))), reports.Fail, []string{"key-reused-across-operations seqs=1,3"},
			"were sent with the same key"},
		{"an operation missing", ClientRun{Client: "sdk", Wanted: 3, Ops: []ClientOp{opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1))}},
			reports.Unknown, nil, "sent 1 of the 3 operations"},
		{"the same-reference operation missing, named", ClientRun{Client: "sdk", Wanted: 3, Asked: []string{"r-1 | ?", "r-2 | ?", "r-1 | 200"},
			Ops: []ClientOp{opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1)), opOf(def, try(2, "r-2", "k2", AnswerSuccess, 5, 6))}},
			reports.Unknown, nil, "sent 2 of the 3 operations asked for; never sent: r-1 | 200"},
		{"two asked with one identity, one sent", ClientRun{Client: "sdk", Wanted: 2, Asked: []string{"r-1 | ?", "r-1 | ?"},
			Ops: []ClientOp{opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1))}},
			reports.Unknown, nil, "sent 1 of the 2 operations asked for; never sent: r-1 | ?"},
	}
	runClientCases(t, tests, withPolicy(NewKeyPerOperation))
}

func TestNoRetryOnRejection(t *testing.T) {
	def := payOp(t)
	tests := []clientCase{
		{"rejections not resent", clientRun(opOf(def, try(1, "r-1", "k1", "400", 0, 1)), opOf(def, try(2, "r-2", "k2", "422", 5, 6))),
			reports.Pass, nil, ""},
		{"a 422 resent", clientRun(opOf(def, try(1, "r-1", "k1", "400", 0, 1)), opOf(def, try(2, "r-2", "k2", "422", 5, 6),
			try(3, "r-2", "k2", "422", 100, 101))), reports.Fail, []string{"retried-rejection seqs=2,3"}, "after the API rejected it with 422"},
		{"resent with a new key: a new request", clientRun(opOf(def, try(1, "r-1", "k1", "400", 0, 1), try(2, "r-1", "k2", "400", 50, 51))),
			reports.Pass, nil, ""},
		{"nothing rejected", clientRun(opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1))), reports.Unknown, nil, "never to resend"},
	}
	runClientCases(t, tests, func(r ClientRun) Result { return NoRetryOnRejection(r, policy()) })
}

func TestRetryAfter(t *testing.T) {
	def := payOp(t)
	s := time.Second
	waited := clientRun(
		opOf(def, withRetryAfter(try(1, "r-1", "k1", "429", 0, 2), s), try(2, "r-1", "k1", AnswerSuccess, 1000, 1001)),
		opOf(def, withRetryAfter(try(3, "r-2", "k2", "503", 1100, 1101), s), try(4, "r-2", "k2", AnswerSuccess, 2150, 2151)))
	early := clientRun(opOf(def, withRetryAfter(try(1, "r-1", "k1", "409", 0, 1), s), try(2, "r-1", "k1", AnswerSuccess, 300, 301)))
	rfcOnly := policy(func(p *targets.RetryPolicy) { p.RetryAfterStatuses = []int{429, 503} })
	tests := []policyCase{
		{"waited (50 ms of slack)", waited, policy(), reports.Pass, nil, ""},
		{"retried early", early, policy(), reports.Fail, []string{"retry-before-retry-after seqs=1,2"}, "retried 299ms after a 409 with Retry-After 1s"},
		{"a 409 the policy does not retry is not judged", early, policy(func(p *targets.RetryPolicy) { p.Retries = []string{"5xx", "429"} }),
			reports.Unknown, nil, "no answer with a Retry-After"},
		{"no Retry-After given", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerSuccess, 50, 51))), policy(),
			reports.Unknown, nil, "no answer with a Retry-After"},
		{"a 409 outside honors_retry_after is not judged", early, rfcOnly, reports.Unknown, nil, "no answer with a Retry-After"},
		{"waited on 429 and 503, a 409 retried early outside honors_retry_after", clientRun(append(waited.Ops, early.Ops[0])...), rfcOnly,
			reports.Pass, nil, ""},
		{"a 429 in honors_retry_after retried early", clientRun(opOf(def, withRetryAfter(try(1, "r-1", "k1", "429", 0, 1), s),
			try(2, "r-1", "k1", AnswerSuccess, 300, 301))), rfcOnly, reports.Fail, []string{"retry-before-retry-after seqs=1,2"}, "after a 429 with Retry-After 1s"},
	}
	runPolicyCases(t, tests, RetryAfter)
}

// retriedAfter is operation ref failed with a 503 at start and retried delay ms after the answer.
func retriedAfter(def *targets.ClientOperation, seq int64, ref string, start, delay int) ClientOp {
	return opOf(def, try(seq, ref, ref+"-key", "503", start, start+1), try(seq+1, ref, ref+"-key", AnswerSuccess, start+1+delay, start+2+delay))
}

func TestBackoff(t *testing.T) {
	def := payOp(t)
	ops := func(delays ...int) ClientRun {
		var r ClientRun
		for i, d := range delays {
			r.Ops = append(r.Ops, retriedAfter(def, int64(2*i+1), fmt.Sprintf("r-%d", i+1), 1000*i, d))
		}
		r.Client, r.Wanted = "sdk", len(r.Ops)
		return r
	}
	// The articles' backoff: full jitter below 100 ms for the first retry, 200 ms for the second.
	none := policy(func(p *targets.RetryPolicy) { p.Backoff.Jitter = targets.JitterNone })
	upper := policy(func(p *targets.RetryPolicy) {
		p.Backoff.Jitter, p.Backoff.JitterMin, p.Backoff.JitterMax = targets.JitterRange, 0.75, 1
	})
	rfcNone := policy(func(p *targets.RetryPolicy) {
		p.Backoff.Jitter, p.RetryAfterStatuses = targets.JitterNone, []int{429, 503}
	})
	afterRA := func(delay int) ClientRun {
		return clientRun(opOf(def, withRetryAfter(try(1, "r-1", "k1", "409", 0, 1), time.Second), try(2, "r-1", "k1", AnswerSuccess, 1+delay, 2+delay)))
	}
	twice := ops(100)
	twice.Ops[0].Attempts = append(twice.Ops[0].Attempts, try(9, "r-1", "r-1-key", AnswerSuccess, 302, 303))
	twice.Ops[0].Attempts[1].Answer, twice.Ops[0].Attempts[1].Status = "503", 503
	early := ops(100)
	early.Ops[0].Attempts = append(early.Ops[0].Attempts, try(9, "r-1", "r-1-key", AnswerSuccess, 202, 203))
	early.Ops[0].Attempts[1].Answer, early.Ops[0].Attempts[1].Status = "503", 503
	stalled := ops(230)
	stalled.Ops[0].Stalls = []time.Duration{0, 110 * time.Millisecond}
	tooLate := ops(230)
	tooLate.Ops[0].Stalls = []time.Duration{0, 90 * time.Millisecond}
	tests := []policyCase{
		{"late by the harness's stall", stalled, none, reports.Pass, nil, ""},
		{"late past the harness's stall", tooLate, none, reports.Fail, []string{"no-backoff seqs=1,2"},
			"came 230ms after a 503 (90ms of it with the harness's process stalled, not counted), outside the declared backoff's [100ms, 100ms]"},
		{"jittered within the envelope", ops(12, 95, 40, 63, 27, 80), policy(), reports.Pass, nil, ""},
		{"in lockstep", ops(50, 52, 51, 50, 53, 51), policy(), reports.Fail, []string{"no-jitter seqs=2,4,6,8,10,12"}, "a spread of 2ms, under the 10ms"},
		// A loaded machine delayed two of eight: the fastest six still come in lockstep.
		{"in lockstep, the slowest delayed by a stall", ops(50, 51, 50, 52, 51, 50, 84, 97), policy(), reports.Fail, []string{"no-jitter seqs=2,4,6,8,10,12,14,16"},
			"the fastest 6 of the first retries of 8 operations came between 50ms and 52ms"},
		// A loaded machine delayed most of them: at the cap, none came in the lower three quarters.
		{"at the cap, spread by stalls", ops(100, 112, 121, 103, 124, 118, 115, 109), policy(), reports.Fail, []string{"no-jitter seqs=2,4,6,8,10,12,14,16"},
			"none of the first retries of 8 operations came in the lower three quarters of the declared full jitter's [0s, 100ms]: the fastest came 100ms"},
		{"jittered, the fastest just under the top quarter", ops(74, 95, 86, 99, 80, 91), policy(), reports.Pass, nil, ""},
		{"hammering", ops(3), none, reports.Fail, []string{"no-backoff seqs=1,2"}, "hammering (under 10ms)"},
		{"past the envelope", ops(130), none, reports.Fail, []string{"no-backoff seqs=1,2"}, "outside the declared backoff's [100ms, 100ms]"},
		{"late by a stall within a quarter of the envelope", ops(124), none, reports.Pass, nil, ""},
		{"the second retry doubles", twice, none, reports.Pass, nil, ""},
		{"the second retry does not double", early, none, reports.Fail, []string{"no-backoff seqs=2,9"}, "retry 2 of operation r-1 | 100 came 100ms"},
		{"a sample too small for jitter", ops(10, 90), policy(), reports.Unknown, nil, "jitter needs the first retries of 6"},
		{"no jitter declared, none given", ops(100, 101, 99), none, reports.Pass, nil, ""},
		{"a 75-100 % range, jittered", ops(77, 95, 86, 99, 80, 91), upper, reports.Pass, nil, ""},
		{"a 75-100 % range, all at the cap", ops(100, 101, 100, 103, 100, 102), upper, reports.Fail, []string{"no-jitter seqs=2,4,6,8,10,12"},
			"none of the first retries of 6 operations came in the lower three quarters of the declared 75-100 % jitter's [75ms, 100ms]"},
		{"a 75-100 % range, in lockstep below the top quarter", ops(80, 81, 80, 82, 81, 80), upper, reports.Fail, []string{"no-jitter seqs=2,4,6,8,10,12"},
			"a spread of 1ms, under the 5ms a 75-100 % jitter gives"},
		{"a 75-100 % range, a retry under it", ops(40), upper, reports.Fail, []string{"no-backoff seqs=1,2"}, "outside the declared backoff's [75ms, 100ms]"},
		{"a range of one fraction is no jitter", ops(90, 90, 90), policy(func(p *targets.RetryPolicy) {
			p.Backoff.Jitter, p.Backoff.JitterMin, p.Backoff.JitterMax = targets.JitterRange, 0.9, 0.9
		}), reports.Pass, nil, ""},
		{"a Retry-After the client does not honour: judged by the envelope", afterRA(1000), rfcNone, reports.Fail, []string{"no-backoff seqs=1,2"},
			"retry 1 of operation r-1 | 100 came 1s after a 409 with Retry-After 1s, outside the declared backoff's [100ms, 100ms]"},
		{"a Retry-After the client does not honour, retried on its backoff", afterRA(100), rfcNone, reports.Pass, nil, ""},
		{"a Retry-After the client honours: not backoff's", afterRA(1000), none, reports.Pass, nil, ""},
	}
	runPolicyCases(t, tests, Backoff)
}

func TestBounded(t *testing.T) {
	def := payOp(t)
	failing := func(n int) ClientOp {
		var as []history.Attempt
		for i := range n {
			as = append(as, try(int64(i+1), "r-1", "k1", "503", 100*i, 100*i+1))
		}
		return opOf(def, as...)
	}
	yes, no := targets.ReportedFailed, targets.ReportedOK
	run := func(n int, reported targets.Reported, killed string) ClientRun {
		return ClientRun{Client: "sdk", Ops: []ClientOp{failing(n)}, Wanted: 1, Exit: 1, Reported: reported, Killed: killed}
	}
	tests := []clientCase{
		{"stopped and reported", run(5, yes, ""), reports.Pass, nil, ""},
		{"retried on", run(7, targets.ReportedUntold, "it was still retrying after 7 attempts"), reports.Fail, []string{"unbounded-retries seqs=1,7"},
			"attempted 7 times, past the 5 declared (max_attempts); the harness ended it: it was still retrying after 7 attempts"},
		{"ended by the scenario's timeout", run(3, targets.ReportedUntold, "the scenario's timeout passed"), reports.Fail, []string{"unbounded-retries seqs=1,3"},
			"attempted 3 times under a persistent failure (the last a 503) and the harness ended the client: the scenario's timeout passed"},
		{"gave up early", run(2, yes, ""), reports.Fail, []string{"no-retry seqs=1,2"}, "given up after 2 of the 5 attempts"},
		{"gave up silently", run(5, no, ""), reports.Fail, []string{"abandoned-operation seqs=5"}, "without reporting a failure: it reported operation r-1 | 100 as a success (it exited 1)"},
		{"gave up, reported pending, though answered", run(5, targets.ReportedPending, ""), reports.Fail, []string{"abandoned-operation seqs=5"},
			"it reported operation r-1 | 100 pending (it exited 1)"},
		{"no way to report declared", run(5, targets.ReportedUntold, ""), reports.Unknown, nil, "declares no way to report a failed operation"},
	}
	runClientCases(t, tests, func(r ClientRun) Result { return Bounded(r, policy()) })
}

func TestRestartReusesKey(t *testing.T) {
	def := payOp(t)
	heldAt := try(1, "r-1", "k1", AnswerHeld, 0, 300)
	tests := []clientCase{
		{"resumed with its key", clientRun(opOf(def, heldAt, inLife(try(2, "r-1", "k1", AnswerReplay, 500, 501), 2))), reports.Pass, nil, ""},
		{"a new key after the restart", clientRun(opOf(def, heldAt, inLife(try(2, "r-1", "k9", AnswerSuccess, 500, 501), 2))),
			reports.Fail, []string{"key-lost-on-restart seqs=1,2"}, "sent with key k9, not the k1 it was pending with"},
		{"another body after the restart", clientRun(opOf(def, heldAt,
			inLife(withBody(try(2, "r-1", "k1", AnswerReplay, 500, 501), `{"ref": "r-1", "amount": 100, "note": "again"}`), 2))),
			reports.Fail, []string{"body-changed-on-retry what=$['note'] seqs=1,2"}, "changed"},
		{"abandoned", clientRun(opOf(def, heldAt)), reports.Fail, []string{"abandoned-operation seqs=1"}, "never resent operation r-1 | 100"},
		{"nothing held", clientRun(opOf(def, try(1, "r-1", "k1", AnswerSuccess, 0, 1))), reports.Unknown, nil, "no attempt was held"},
		{"no key before the restart", clientRun(opOf(def, try(1, "r-1", "", AnswerHeld, 0, 300), inLife(try(2, "r-1", "", AnswerSuccess, 500, 501), 2))),
			reports.Fail, []string{"missing-key seqs=1,2"}, "was sent with no idempotency key before the restart"},
		{"no key after the restart", clientRun(opOf(def, heldAt, inLife(try(2, "r-1", "", AnswerSuccess, 500, 501), 2))),
			reports.Fail, []string{"missing-key seqs=1,2"}, "after the restart operation r-1 | 100 was sent with no idempotency key, not the k1"},
	}
	runClientCases(t, tests, withPolicy(RestartReusesKey))
}

func TestKeyPresent(t *testing.T) {
	def := payOp(t)
	tests := []clientCase{
		{"every retry keyed", clientRun(opOf(def, try(1, "r-1", "k1", "503", 0, 1), try(2, "r-1", "k1", AnswerSuccess, 50, 51))), reports.Pass, nil, ""},
		{"retried without a key", clientRun(opOf(def, try(1, "r-1", "", "503", 0, 1), try(2, "r-1", "", AnswerSuccess, 50, 51))),
			reports.Fail, []string{"missing-key seqs=1,2"}, "carried no idempotency key"},
		{"dropped and resent without a key: two records", clientRun(opOf(def, try(1, "r-1", "", AnswerDrop, 0, 1), try(2, "r-1", "", AnswerSuccess, 50, 51))),
			reports.Fail, []string{"missing-key seqs=1,2", "duplicate-record seqs=1,2"}, "2 records for one logical operation"},
		{"nothing retried", clientRun(opOf(def, try(1, "r-1", "", AnswerSuccess, 0, 1))), reports.Unknown, nil, "retried no operation"},
	}
	runClientCases(t, tests, withPolicy(KeyPresent))
}

// clientCase is one row of a client checker's table: a run, and the verdict, anomalies (kind and
// attempts) and words the checker must give it.
type clientCase struct {
	name    string
	run     ClientRun
	verdict reports.Verdict
	want    []string
	says    string
}

// policyCase is a clientCase whose checker also reads a retry policy.
type policyCase struct {
	name    string
	run     ClientRun
	p       targets.RetryPolicy
	verdict reports.Verdict
	want    []string
	says    string
}

// withPolicy is a checker judged against the articles' policy.
func withPolicy(check func(ClientRun, targets.RetryPolicy) Result) func(ClientRun) Result {
	return func(r ClientRun) Result { return check(r, policy()) }
}

func runClientCases(t *testing.T, cases []clientCase, check func(ClientRun) Result) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) { expect(t, check(tt.run), tt.verdict, tt.want, tt.says) })
	}
}

func runPolicyCases(t *testing.T, cases []policyCase, check func(ClientRun, targets.RetryPolicy) Result) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) { expect(t, check(tt.run, tt.p), tt.verdict, tt.want, tt.says) })
	}
}
