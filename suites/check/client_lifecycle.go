package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Bounded judges an operation that got a failure the policy retries on every attempt (a 503,
// one of them a connection closed instead, or what else the policy retries): the client MUST
// stop at its declared attempts (unbounded-retries past them, its transport's immediate
// re-sends beyond transport_resends counted, or when the harness ended it; no-retry before
// them, the re-sends allowed counted, for a retry the client timed can come as soon as a
// re-send, unless its last answer is one its policy does not retry) and report the failure as it
// declares (abandoned-operation otherwise); where every attempt went unanswered it may report the
// operation pending instead, as it declares.
func Bounded(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if !j.opsSent(r) {
		return j.result()
	}
	j.everyAttempt(r, p)
	op, resends := r.Ops[0].asSent(p)
	n, last := len(op.Attempts), op.Attempts[len(op.Attempts)-1]
	switch {
	case n > p.MaxAttempts: // everyAttempt's
	case r.Killed != "":
		j.add(clientAnomaly(reports.KindUnboundedRetries, last, fmt.Sprintf(
			"operation %s was attempted %d times under a persistent failure (the last %s) and the harness ended the client: %s", op.Name(), n,
			answerWords(last), r.Killed), op.Attempts[0].Seq, last.Seq))
	case n+resends < p.MaxAttempts && retried(last, p): // a re-send allowed may have been a retry it counted
		j.add(clientAnomaly(reports.KindNoRetry, last, fmt.Sprintf(
			"operation %s was given up after %d of the %d attempts the client declares%s, under a persistent failure it declares it retries (the last %s%s)",
			op.Name(), n, p.MaxAttempts, allowedWords(resends), answerWords(last), decisionWords(last, p)), op.Attempts[0].Seq, last.Seq))
	}
	want := []targets.Reported{targets.ReportedFailed}
	if !slices.ContainsFunc(op.Attempts, func(a history.Attempt) bool { return !unanswered(a) }) {
		want = append(want, targets.ReportedPending) // it cannot know whether the API acted
	}
	j.reported(r, op.Name(), reports.KindAbandonedOperation, last, func(said string) string {
		return fmt.Sprintf("the client gave operation %s up after %d attempts without reporting a failure: it %s", op.Name(), n, said)
	}, want...)
	return j.result()
}

// RestartReusesKey judges the operation whose first attempt the API processed and held while the
// client was killed and restarted (the operation pending at the kill; an operation it began
// after the restart is another one): its first attempt after the restart MUST carry the held
// key (key-lost-on-restart; missing-key when either of them carries none) and parameters
// (body-changed-on-retry); a client that does not resume the pending operation abandoned it.
// Every attempt is bounded (everyAttempt; the first after the restart exempt).
func RestartReusesKey(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if len(r.Ops) == 0 {
		j.unknownf("the client sent nothing")
		return j.result()
	}
	j.everyAttempt(r, p)
	op, held := r.pendingAtKill()
	if op == nil {
		j.unknownf("no attempt was held when the client was killed")
		return j.result()
	}
	j.resumed(op, held, fmt.Sprintf("after the restart the client never resent operation %s, pending when it was killed", op.Name()))
	return j.result()
}

// resumed judges the first attempt of op from a later start of the client than pending's (the
// attempt the operation was pending with): it MUST carry pending's key (restartedKey) and body
// (body-changed-on-retry); none at all is abandoned-operation, saying abandoned.
func (j *judge) resumed(op *ClientOp, pending history.Attempt, abandoned string) {
	i := slices.IndexFunc(op.Attempts, func(a history.Attempt) bool { return a.Life > pending.Life })
	if i < 0 {
		j.add(clientAnomaly(reports.KindAbandonedOperation, pending, abandoned, pending.Seq))
		return
	}
	after := op.Attempts[i]
	j.restartedKey(op.Name(), pending, after)
	if op.Def == nil {
		return
	}
	if d := bodyDiff(op.Def, pending.ReqBody, after.ReqBody); len(d) > 0 {
		an := clientAnomaly(reports.KindBodyChangedOnRetry, after, fmt.Sprintf(
			"after the restart operation %s was sent with %s changed", op.Name(), strings.Join(d, ", ")), pending.Seq, after.Seq)
		an.What = strings.Join(d, ", ")
		j.add(an)
	}
}

// restartedKey judges the key of the first attempt after a restart against the held one's: a
// held attempt with no key, or a resent one with none, is missing-key; another key is
// key-lost-on-restart.
func (j *judge) restartedKey(name string, held, after history.Attempt) {
	switch {
	case held.Key == "":
		j.add(clientAnomaly(reports.KindMissingKey, held, fmt.Sprintf(
			"operation %s was sent with no idempotency key before the restart: resent after it, the API cannot tell it from a new operation",
			name), held.Seq, after.Seq))
	case after.Key == "":
		j.add(clientAnomaly(reports.KindMissingKey, after, fmt.Sprintf(
			"after the restart operation %s was sent with no idempotency key, not the %s it was pending with: the API takes it for a new operation",
			name, held.Key), held.Seq, after.Seq))
	case after.Key != held.Key:
		j.add(clientAnomaly(reports.KindKeyLostOnRestart, after, fmt.Sprintf(
			"after the restart operation %s was sent with key %s, not the %s it was pending with: the API takes it for a new operation",
			name, after.Key, held.Key), held.Seq, after.Seq))
	}
}
