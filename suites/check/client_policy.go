package check

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The declared policy, judged both ways: what it says the client retries must be retried, what
// it says it never resends must not be, and what it does not declare must not be retried either.

// retryCondition is the retry condition an answer is, in the terms of a policy's retries, or ""
// when it is none: reset (the connection closed without an answer), timeout (held past the
// attempt timeout), or the error status (a 409, a 408, a 503: the policy says whether it retries
// it, listed or as a 5xx).
func retryCondition(a history.Attempt) string {
	switch a.Answer {
	case AnswerDrop, AnswerCut:
		return "reset"
	case AnswerHold:
		return "timeout"
	case AnswerHeld, AnswerSuccess, AnswerReplay:
		return ""
	}
	if a.Status >= 400 {
		return strconv.Itoa(a.Status)
	}
	return ""
}

// decide is what the policy says of the answer an attempt got (its status, headers and body:
// the should-retry header and the conditions of retries read them); an attempt without an error
// answer is undeclared.
func decide(a history.Attempt, p targets.RetryPolicy) targets.RetryDecision {
	if a.Status < 400 {
		return targets.DecideUndeclared
	}
	return p.Decide(a.Status, a.RespHeader, a.RespBody)
}

// retried reports whether the policy retries what this attempt got.
func retried(a history.Attempt, p targets.RetryPolicy) bool {
	switch t := retryCondition(a); t {
	case "":
		return false
	case "reset", "timeout":
		return p.RetriesFailure(t)
	}
	return decide(a, p) == targets.DecideRetry
}

// neverResent reports whether the policy never resends what this attempt got (a status in never,
// or a should-retry header that says so).
func neverResent(a history.Attempt, p targets.RetryPolicy) bool {
	return retryCondition(a) != "" && decide(a, p) == targets.DecideNever
}

// decisionWords says what besides its status made the policy decide on an answer: the
// should-retry header's value, or a condition of retries met or not ("" when neither).
func decisionWords(a history.Attempt, p targets.RetryPolicy) string {
	if a.Status < 400 {
		return ""
	}
	if _, v, ok := p.ShouldRetryHeader.Says(a.RespHeader); ok {
		return fmt.Sprintf(" with %s: %s", p.ShouldRetryHeader.Name, v)
	}
	if p.RetriesStatus(a.Status) {
		return ""
	}
	for _, w := range p.RetriesWhen {
		if w.Status != a.Status {
			continue
		}
		if w.Met(a.RespBody) {
			return fmt.Sprintf(" whose %s is %s", w.JSONPath, w.Equals)
		}
		return fmt.Sprintf(" whose %s is not %s", w.JSONPath, w.Equals)
	}
	return ""
}

// RetriesTransient judges a scenario whose operations each first got a transient failure (a
// connection closed after processing, an attempt held past the client's timeout, a 503, each
// status the policy lists in retries), a status the policy does not declare, or an answer whose
// content decides (a condition of retries met or not, a should-retry header): every failure the
// policy retries MUST be retried (no-retry otherwise, a deviation), within the declared
// attempts; an answer the policy neither retries nor never resends MUST NOT be retried with the
// same key (undeclared-retry: the declared policy does not describe the client), nor one it
// never resends (retried-rejection: a should-retry header that says never, say); every attempt
// is bounded (everyAttempt).
func RetriesTransient(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	j.everyAttempt(r, p)
	judged := 0
	for _, op := range r.sentOps(p) {
		if j.undeclaredRetries(op, p) {
			judged++
		}
		if j.rejections(op, p) {
			judged++
		}
		if slices.ContainsFunc(op.Attempts, func(a history.Attempt) bool { return retried(a, p) }) {
			judged++
		}
		last := op.Attempts[len(op.Attempts)-1]
		if retried(last, p) && len(op.Attempts) < p.MaxAttempts {
			j.add(clientAnomaly(reports.KindNoRetry, last, fmt.Sprintf(
				"operation %s was not retried after %s%s (attempt %d of %d declared), although the client declares it retries that",
				op.Name(), answerWords(last), decisionWords(last, p), len(op.Attempts), p.MaxAttempts), last.Seq))
		}
	}
	if judged == 0 && len(j.r.Anomalies) == 0 {
		j.unknownf("no operation got a failure the client declares it retries, nor an answer it does not declare or never resends: nothing was judged")
	}
	return j.result()
}

// NoRetryOnRejection judges operations the API rejected as invalid (statuses the policy never
// resends): none MAY be resent with the same key (retried-rejection, a deviation). Every attempt
// is bounded (everyAttempt).
func NoRetryOnRejection(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	j.everyAttempt(r, p)
	rejected := 0
	for _, op := range r.Ops {
		if j.rejections(op, p) {
			rejected++
		}
	}
	if rejected == 0 && len(j.r.Anomalies) == 0 {
		j.unknownf("no operation got an answer the client declares never to resend")
	}
	return j.result()
}

// retryAfterSlack is how much sooner than a Retry-After a retry may arrive (clock and
// scheduling).
const retryAfterSlack = 50 * time.Millisecond

// RetryAfter judges the retries that followed answers with a Retry-After (a 429, a 503, a 409 in
// flight) on the statuses whose Retry-After the client declares it honours: each MUST arrive no
// earlier than Retry-After − 50 ms after the answer was written (retry-before-retry-after, a
// deviation). Answers the policy does not retry, and statuses outside honors_retry_after (their
// retries are backoff's), are not judged; a run with no retry judged is unknown. Every attempt is
// bounded (everyAttempt).
func RetryAfter(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	j.everyAttempt(r, p)
	judged := 0
	for _, op := range r.sentOps(p) {
		for i, a := range op.Attempts[:len(op.Attempts)-1] {
			if a.RetryAfter <= 0 || !retried(a, p) || !p.HonoursRetryAfterOn(a.Status) {
				continue
			}
			judged++
			next := op.Attempts[i+1]
			if wait := next.Start.Sub(a.Answered); wait < a.RetryAfter-retryAfterSlack {
				j.add(clientAnomaly(reports.KindRetryBeforeRetryAfter, next, fmt.Sprintf(
					"operation %s was retried %v after %s: sooner than the Retry-After asked",
					op.Name(), wait.Round(time.Millisecond), answerWords(a)), a.Seq, next.Seq))
			}
		}
	}
	if judged == 0 && len(j.r.Anomalies) == 0 {
		j.unknownf("no answer with a Retry-After the client declares it retries and honours was followed by a retry")
	}
	return j.result()
}

// rejections flags a resend, with the same key, of an answer the policy never resends
// (retried-rejection: a status in never, or a should-retry header that says never) and reports
// whether the operation got one.
func (j *judge) rejections(op ClientOp, p targets.RetryPolicy) bool {
	return j.resentAfter(op, func(a history.Attempt) bool { return neverResent(a, p) },
		func(a, b history.Attempt) reports.Anomaly {
			return clientAnomaly(reports.KindRetriedRejection, b, fmt.Sprintf(
				"operation %s was resent with the same key after the API rejected it with %d%s: the request is wrong, not unlucky, and the client declares it never resends that",
				op.Name(), a.Status, decisionWords(a, p)), a.Seq, b.Seq)
		})
}

// undeclaredRetries flags a retry, with the same key, of an answer the policy neither retries
// nor never resends (undeclared-retry: a status in neither list, or one a condition of retries
// retries that the answer does not meet) and reports whether the operation got one.
func (j *judge) undeclaredRetries(op ClientOp, p targets.RetryPolicy) bool {
	return j.resentAfter(op, func(a history.Attempt) bool { return undeclared(a, p) },
		func(a, b history.Attempt) reports.Anomaly {
			why := "a status the client declares neither in retry.retries nor in retry.never"
			if p.Conditional(a.Status) {
				why = "a condition of retry.retries the answer does not meet: the client declares it retries that status only when it does"
			}
			return clientAnomaly(reports.KindUndeclaredRetry, b, fmt.Sprintf("operation %s was retried after %s%s, %s",
				op.Name(), answerWords(a), decisionWords(a, p), why), a.Seq, b.Seq)
		})
}

// resentAfter finds op's first attempt that answer picks and flags (anomaly) the first later
// attempt with its key; it reports whether op got such an answer.
func (j *judge) resentAfter(op ClientOp, answer func(history.Attempt) bool, anomaly func(a, b history.Attempt) reports.Anomaly) bool {
	i := slices.IndexFunc(op.Attempts, answer)
	if i < 0 {
		return false
	}
	a := op.Attempts[i]
	for _, b := range op.Attempts[i+1:] {
		if b.Key == a.Key {
			j.add(anomaly(a, b))
			break
		}
	}
	return true
}

// undeclared reports whether an attempt got an error answer the policy says nothing about.
func undeclared(a history.Attempt, p targets.RetryPolicy) bool {
	return retryCondition(a) != "" && a.Status >= 400 && decide(a, p) == targets.DecideUndeclared
}
