package check

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The judgement of every attempt, whatever the scenario is named after: each client checker makes
// it inside its own verdict (specs run on their own, so no scenario relies on another).

// isResend reports whether attempt n of op is a re-send by the client's transport: it came
// sooner than window after the previous attempt's connection closed without an answer (longer
// when that connection had carried an earlier request: resendWindow), not counting the time the
// harness saw its own process stalled meanwhile (a loaded machine delays a re-send, and a re-send
// taken for a retry would be counted against max_attempts), in the same start of the client,
// with the same key and an equal body (what Go's net/http does with a request that carries an
// Idempotency-Key and a rewindable body on a reused connection).
func isResend(op ClientOp, n int, p targets.RetryPolicy) bool {
	if n == 0 || n >= len(op.Attempts) {
		return false
	}
	prev, a := op.Attempts[n-1], op.Attempts[n]
	return closed(prev) && a.Life == prev.Life && a.Start.Sub(prev.Answered)-op.stall(n) < resendWindow(p, prev) &&
		a.Key == prev.Key && (op.Def == nil || bodyDiff(op.Def, prev.ReqBody, a.ReqBody) == nil)
}

// reusedResend is how soon after the close of a connection that had carried an earlier request
// (the only close after which net/http re-sends on its own) a re-send may come: the re-send
// itself is immediate, but a race detector or a loaded runner delays it by tens of milliseconds.
const reusedResend = 50 * time.Millisecond

// resendWindow is how soon after prev's connection closed an attempt may be a transport's
// re-send rather than a retry the client timed: under 10 ms (hammering), or sooner than the
// declared backoff lets any retry come (its first envelope's lower bound, less the early slack),
// or, after a connection that had carried an earlier request, under reusedResend.
func resendWindow(p targets.RetryPolicy, prev history.Attempt) time.Duration {
	lo, _ := p.Backoff.Envelope(1)
	w := max(hammering, lo-backoffSlack)
	if prev.Reused {
		w = max(w, reusedResend)
	}
	return w
}

// closed reports whether an attempt's connection was closed without an answer, after processing
// or before.
func closed(a history.Attempt) bool { return a.Answer == AnswerDrop || a.Answer == AnswerCut }

// asSent is the operation as the client sent it: each re-send the policy allows
// (transport_resends, per operation) stands for the attempt it re-sent (its answer is the one the
// client got), so that it is neither counted as an attempt nor judged as a retry; resends is how
// many were allowed.
func (op ClientOp) asSent(p targets.RetryPolicy) (out ClientOp, resends int) {
	out = op
	resent := make([]bool, len(op.Attempts)) // the attempts a re-send stands for
	for n := 1; n < len(op.Attempts) && resends < p.TransportResends; n++ {
		if isResend(op, n, p) {
			resent[n-1] = true
			resends++
		}
	}
	if resends == 0 {
		return op, 0
	}
	out.Attempts, out.Stalls = nil, nil
	for n, a := range op.Attempts {
		if resent[n] {
			continue
		}
		out.Attempts = append(out.Attempts, a)
		out.Stalls = append(out.Stalls, op.stall(n))
	}
	return out, resends
}

// exempt reports whether attempt n of op is the first attempt of a client started again (the
// restart scenario): it is not a retry the client timed, nor one it may have counted.
func (op ClientOp) exempt(n int) bool {
	return n > 0 && op.Attempts[n].Life != op.Attempts[n-1].Life
}

// everyAttempt judges every attempt of a scenario against the declared policy: an operation
// attempted more than max_attempts times (its first attempt after a restart not counted) is
// unbounded-retries; a retry that came under 10 ms after the previous attempt's answer is
// no-backoff (hammering: a late harness only makes a retry look later, so no stall excuses
// it). Up to transport_resends immediate re-sends per operation are neither counted nor judged
// (asSent). The first attempt after a restart is exempt, and so is a retry after an attempt held
// past the client's timeout: the client ended that attempt, and the harness sees its end only
// after it, so the delay it measures may be short of the client's.
func (j *judge) everyAttempt(r ClientRun, p targets.RetryPolicy) {
	for _, raw := range r.Ops {
		op, resends := raw.asSent(p)
		counted := 0
		for n, a := range op.Attempts {
			if op.exempt(n) {
				continue
			}
			counted++
			if n == 0 || op.Attempts[n-1].Answer == AnswerHold {
				continue
			}
			prev := op.Attempts[n-1]
			if d := a.Start.Sub(prev.Answered); d < hammering {
				j.add(clientAnomaly(reports.KindNoBackoff, a, tooSoonWords(op, prev, a, d, p), prev.Seq, a.Seq))
			}
		}
		if counted > p.MaxAttempts {
			j.add(clientAnomaly(reports.KindUnboundedRetries, op.Attempts[len(op.Attempts)-1], fmt.Sprintf(
				"operation %s was attempted %d times, past the %d declared (max_attempts)%s%s", op.Name(), counted, p.MaxAttempts,
				allowedWords(resends), killedWords(r)), op.Attempts[0].Seq, op.Attempts[len(op.Attempts)-1].Seq))
		}
	}
}

// tooSoonWords says that attempt a of op came d after the answer to prev, under 10 ms: a resend
// of the same key is hammering; a retry under another key (key-changed-on-retry's) is only too
// soon.
func tooSoonWords(op ClientOp, prev, a history.Attempt, d time.Duration, p targets.RetryPolicy) string {
	if a.Key != prev.Key {
		return fmt.Sprintf("operation %s was retried %v after %s, under %v, with another key (%s, not %s)", op.Name(),
			d.Round(100*time.Microsecond), answerWords(prev), hammering, orNone(a.Key), orNone(prev.Key))
	}
	return fmt.Sprintf("operation %s was sent again %v after %s: hammering (under %v)%s", op.Name(), d.Round(100*time.Microsecond),
		answerWords(prev), hammering, resendWords(prev, a, p))
}

// resendWords says that a hammering attempt looks like a transport's re-send the policy does not
// allow, or "".
func resendWords(prev, a history.Attempt, p targets.RetryPolicy) string {
	if !closed(prev) || a.Key != prev.Key {
		return ""
	}
	if p.TransportResends == 0 {
		return ", with the same key: a transport's re-send, which the client does not declare (retry.transport_resends)"
	}
	return fmt.Sprintf(", with the same key: a transport's re-send past the %d the client declares (retry.transport_resends)", p.TransportResends)
}

// allowedWords says how many re-sends were not counted, or "".
func allowedWords(resends int) string {
	if resends == 0 {
		return ""
	}
	return fmt.Sprintf(" (besides %d transport re-send(s) the client declares, not counted)", resends)
}

// killedWords says why the harness ended the client, or "".
func killedWords(r ClientRun) string {
	if r.Killed == "" {
		return ""
	}
	return "; the harness ended it: " + r.Killed
}

// sentOps are the run's operations as the client sent them (asSent).
func (r ClientRun) sentOps(p targets.RetryPolicy) []ClientOp {
	out := make([]ClientOp, len(r.Ops))
	for i, op := range r.Ops {
		out[i], _ = op.asSent(p)
	}
	return out
}

// reported judges how the client reported operation op, which ended: not at all when it declares
// no way to tell (unknown), kind when it reported none of want (msg is given what it reported
// of op, in words: reportedWords).
func (j *judge) reported(r ClientRun, op string, kind reports.Kind, last history.Attempt, msg func(said string) string, want ...targets.Reported) {
	switch {
	case r.Killed != "":
	case r.Reported == targets.ReportedUntold:
		j.unknownf("the client declares no way to report a failed operation (failure: {exit_code, output}, or outcome: {ok, failed, pending}): whether it reported this one cannot be told")
	case !slices.Contains(want, r.Reported):
		j.add(clientAnomaly(kind, last, msg(reportedWords(op, r.Reported, r.Exit)), last.Seq))
	}
}

// reportedWords says what a client that exited with code exit reported of operation op.
func reportedWords(op string, said targets.Reported, exit int) string {
	switch said {
	case targets.ReportedOK:
		return fmt.Sprintf("reported operation %s as a success (it exited %d)", op, exit)
	case targets.ReportedFailed:
		return fmt.Sprintf("reported operation %s failed (it exited %d)", op, exit)
	case targets.ReportedPending:
		return fmt.Sprintf("reported operation %s pending (it exited %d)", op, exit)
	}
	return fmt.Sprintf("reported none of the outcomes it declares of operation %s (it exited %d)", op, exit)
}

// BareError judges a one-operation scenario whose every answer is an error whose body is not the
// declared error shape (a 503 in text/plain, a 503 or a 422 whose body is {}): the client MUST
// report the operation failed, as it declares (failure-reported-as-success otherwise: its caller
// believes the operation went through), and not resend an answer it declares it never resends
// (retried-rejection); every attempt is bounded. Whether it retries an error it cannot read is
// its own business.
func BareError(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if !j.opsSent(r) {
		return j.result()
	}
	j.everyAttempt(r, p)
	for _, op := range r.sentOps(p) {
		j.rejections(op, p)
		last := op.Attempts[len(op.Attempts)-1]
		if is2xx(last.Status) {
			j.unknownf("operation %s got a %d: the scenario answers only errors", op.Name(), last.Status)
			continue
		}
		j.reported(r, op.Name(), reports.KindFailureReportedAsSuccess, last, func(said string) string {
			return fmt.Sprintf("the client %s though the API answered its %d attempt(s) with %s: it took an error for a success",
				said, len(op.Attempts), bareWords(last))
		}, targets.ReportedFailed, targets.ReportedPending)
	}
	return j.result()
}

// bareWords describes an error answer by its status, content type and body.
func bareWords(a history.Attempt) string {
	ct := a.RespHeader.Get("Content-Type")
	if ct == "" {
		ct = "no content type"
	}
	body := strings.TrimSpace(string(a.RespBody))
	if len(body) > 40 {
		body = body[:40] + "..."
	}
	return fmt.Sprintf("a %d %s, %s, body %q", a.Status, http.StatusText(a.Status), ct, body)
}
