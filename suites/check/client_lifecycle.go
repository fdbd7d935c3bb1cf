package check

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Bounded judges an operation that got 503 on every attempt (one of them a connection closed
// instead): the client MUST stop at its declared attempts (unbounded-retries past them, its
// transport's immediate re-sends beyond transport_resends counted, or when the harness ended it;
// no-retry before them) and report the failure as it declares (abandoned-operation otherwise).
func Bounded(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if !j.opsSent(r) {
		return j.result()
	}
	j.everyAttempt(r, p)
	op, _ := r.Ops[0].asSent(p)
	n, last := len(op.Attempts), op.Attempts[len(op.Attempts)-1]
	switch {
	case n > p.MaxAttempts: // everyAttempt's
	case r.Killed != "":
		j.add(clientAnomaly(reports.KindUnboundedRetries, last, fmt.Sprintf(
			"operation %s was attempted %d times under a persistent 503 and the harness ended the client: %s", op.Identity, n, r.Killed),
			op.Attempts[0].Seq, last.Seq))
	case n < p.MaxAttempts:
		j.add(clientAnomaly(reports.KindNoRetry, last, fmt.Sprintf(
			"operation %s was given up after %d of the %d attempts the client declares, under a persistent 503", op.Identity, n, p.MaxAttempts),
			op.Attempts[0].Seq, last.Seq))
	}
	j.reported(r, reports.KindAbandonedOperation, last, fmt.Sprintf(
		"the client gave operation %s up after %d attempts without reporting a failure (it exited %d)", op.Identity, n, r.Exit))
	return j.result()
}

// RestartReusesKey judges an operation whose first attempt the API processed and held while the
// client was killed and restarted: the first attempt after the restart MUST carry the held key
// (key-lost-on-restart; missing-key when either of them carries none) and parameters
// (body-changed-on-retry); a client that does not resume the pending operation abandoned it.
// Every attempt is bounded (everyAttempt; the first after the restart exempt).
func RestartReusesKey(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if len(r.Ops) == 0 {
		j.unknownf("the client sent nothing")
		return j.result()
	}
	j.everyAttempt(r, p)
	var held, after *history.Attempt
	for _, op := range r.Ops {
		for i := range op.Attempts {
			a := &op.Attempts[i]
			switch {
			case a.Life == 1 && a.Answer == AnswerHeld && held == nil:
				held = a
			case a.Life == 2 && held != nil && after == nil && op.Identity == held.Identity:
				after = a
			}
		}
	}
	switch {
	case held == nil:
		j.unknownf("no attempt was held when the client was killed")
	case after == nil:
		j.add(clientAnomaly(reports.KindAbandonedOperation, *held, fmt.Sprintf(
			"after the restart the client never resent operation %s, pending when it was killed", held.Identity), held.Seq))
	default:
		j.restartedKey(*held, *after)
		if d := bodyDiff(r.Ops[0].Def, held.ReqBody, after.ReqBody); len(d) > 0 {
			an := clientAnomaly(reports.KindBodyChangedOnRetry, *after, fmt.Sprintf(
				"after the restart operation %s was sent with %s changed", held.Identity, strings.Join(d, ", ")), held.Seq, after.Seq)
			an.What = strings.Join(d, ", ")
			j.add(an)
		}
	}
	return j.result()
}

// restartedKey judges the key of the first attempt after a restart against the held one's: a
// held attempt with no key, or a resent one with none, is missing-key; another key is
// key-lost-on-restart.
func (j *judge) restartedKey(held, after history.Attempt) {
	switch {
	case held.Key == "":
		j.add(clientAnomaly(reports.KindMissingKey, held, fmt.Sprintf(
			"operation %s was sent with no idempotency key before the restart: resent after it, the API cannot tell it from a new operation",
			held.Identity), held.Seq, after.Seq))
	case after.Key == "":
		j.add(clientAnomaly(reports.KindMissingKey, after, fmt.Sprintf(
			"after the restart operation %s was sent with no idempotency key, not the %s it was pending with: the API takes it for a new operation",
			held.Identity, held.Key), held.Seq, after.Seq))
	case after.Key != held.Key:
		j.add(clientAnomaly(reports.KindKeyLostOnRestart, after, fmt.Sprintf(
			"after the restart operation %s was sent with key %s, not the %s it was pending with: the API takes it for a new operation",
			held.Identity, after.Key, held.Key), held.Seq, after.Seq))
	}
}
