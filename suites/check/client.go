package check

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The client side's checkers: the harness played the API (it answered every attempt as a
// scenario planned, stored the first success and replayed it) and recorded what the client
// sent; each checker reads that history, grouped into the client's logical operations by their
// declared identity (never by key), against the retry policy the client declares.

// The answers of the scripted API (history.Attempt.Answer).
const (
	// AnswerSuccess: processed and answered with the success response.
	AnswerSuccess = "success"
	// AnswerReplay: the stored success replayed to a later attempt with its key.
	AnswerReplay = "replay"
	// AnswerDrop: processed, then the connection closed without an answer.
	AnswerDrop = "drop"
	// AnswerHold: held unanswered until the client gave up (not processed).
	AnswerHold = "hold"
	// AnswerHeld: processed and held unanswered (until the client was killed).
	AnswerHeld = "held"
	// AnswerUnknownPath: a request for no declared operation (404).
	AnswerUnknownPath = "404"
)

// ClientOp is one logical operation of a client in a scenario: its definition and its
// attempts, in the order they arrived.
type ClientOp struct {
	Def      *targets.ClientOperation
	Identity string
	Attempts []history.Attempt
}

// ClientRun is one scenario's run of a client: its operations (in the order each first
// arrived), and how the client ended.
type ClientRun struct {
	// Client names the client.
	Client string
	Ops    []ClientOp
	// Exit is the client's exit status (-1 when the harness killed it).
	Exit int
	// Killed says why the harness ended the client ("" = it exited on its own).
	Killed string
	// Reported says whether the client reported a failed operation as it declares (nil: it
	// declares no way to).
	Reported *bool
	// Wanted is how many operations the scenario asked for.
	Wanted int
}

// processed reports whether the scripted API processed an attempt (a record exists for its key).
func processed(a history.Attempt) bool {
	return a.Answer == AnswerSuccess || a.Answer == AnswerDrop || a.Answer == AnswerHeld
}

// transientAnswer is the retry condition an answer is, or "" when it is none: reset (the
// connection closed without an answer), timeout (held past the attempt timeout), 5xx, or the
// status.
func transientAnswer(a history.Attempt) string {
	switch a.Answer {
	case AnswerDrop:
		return "reset"
	case AnswerHold:
		return "timeout"
	}
	if a.Status >= 500 {
		return "5xx"
	}
	if a.Status == 409 || a.Status == 429 {
		return fmt.Sprint(a.Status)
	}
	return ""
}

// retried reports whether the policy retries what this attempt got.
func retried(a history.Attempt, p targets.RetryPolicy) bool {
	switch t := transientAnswer(a); t {
	case "":
		return false
	case "reset", "timeout":
		return p.RetriesFailure(t)
	}
	return p.RetriesStatus(a.Status)
}

// anyRetried reports whether an operation of the run was attempted more than once.
func (r ClientRun) anyRetried() bool {
	return slices.ContainsFunc(r.Ops, func(op ClientOp) bool { return len(op.Attempts) > 1 })
}

// opsSent checks that the client sent the operations the scenario asked for.
func (j *judge) opsSent(r ClientRun) bool {
	if len(r.Ops) >= r.Wanted {
		return true
	}
	why := ""
	if r.Killed != "" {
		why = " (" + r.Killed + ")"
	}
	j.unknownf("the client sent %d of the %d operations asked for%s", len(r.Ops), r.Wanted, why)
	return false
}

// clientAnomaly is an anomaly about one attempt of a client.
func clientAnomaly(kind reports.Kind, a history.Attempt, msg string, seqs ...int64) reports.Anomaly {
	key := a.Key
	if key == "" {
		key = "(none)"
	}
	return reports.Anomaly{Kind: kind, Op: a.Op, Key: key, Seqs: seqs, Message: msg}
}

// opRecords flags an operation the scripted API processed more than once: under two keys, or
// twice without a key (each keyless attempt is processed anew): two records for one logical
// operation.
func (j *judge) opRecords(op ClientOp) {
	var keys []string
	var seqs []int64
	for _, a := range op.Attempts {
		if processed(a) && (a.Key == "" || !slices.Contains(keys, a.Key)) {
			keys = append(keys, a.Key)
			seqs = append(seqs, a.Seq)
		}
	}
	if len(keys) > 1 {
		j.add(clientAnomaly(reports.KindDuplicateRecord, op.Attempts[0], fmt.Sprintf(
			"operation %s was processed %d times: %d records for one logical operation", op.Identity, len(keys), len(keys)), seqs...))
	}
}

// bodyDiff names what differs between two request bodies of an operation (nil: nothing).
func bodyDiff(def *targets.ClientOperation, a, b []byte) []string {
	if def.Canonical(a) == def.Canonical(b) {
		return nil
	}
	if def.BodyFormat == targets.BodyForm {
		return CompareBodies(formJSON(a), formJSON(b), targets.Ignore{})
	}
	return CompareBodies(a, b, targets.Ignore{})
}

// formJSON is a form body as a JSON object of its fields.
func formJSON(body []byte) []byte {
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return body
	}
	m := map[string]string{}
	for k := range v {
		m[k] = v.Get(k)
	}
	b, _ := json.Marshal(m)
	return b
}

// RetriesTransient judges a scenario whose operations each first got a transient failure (a
// connection closed after processing, an attempt held past the client's timeout, a 503): every
// failure the policy declares retried MUST be retried (no-retry otherwise, a deviation), within
// the declared attempts.
func RetriesTransient(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	judged := 0
	for _, op := range r.Ops {
		if slices.ContainsFunc(op.Attempts, func(a history.Attempt) bool { return retried(a, p) }) {
			judged++
		}
		last := op.Attempts[len(op.Attempts)-1]
		if retried(last, p) && len(op.Attempts) < p.MaxAttempts {
			j.add(clientAnomaly(reports.KindNoRetry, last, fmt.Sprintf(
				"operation %s was not retried after %s (attempt %d of %d declared), although the client declares it retries that",
				op.Identity, answerWords(last), len(op.Attempts), p.MaxAttempts), last.Seq))
		}
	}
	if judged == 0 && len(j.r.Anomalies) == 0 {
		j.unknownf("no operation got a failure the client declares it retries: nothing was judged")
	}
	return j.result()
}

// answerWords says what an attempt got, for messages.
func answerWords(a history.Attempt) string {
	switch a.Answer {
	case AnswerDrop:
		return "a connection closed without an answer (after processing)"
	case AnswerHold:
		return "an attempt held past its timeout"
	case AnswerHeld:
		return "an attempt held unanswered"
	}
	if a.RetryAfter > 0 {
		return fmt.Sprintf("a %d with Retry-After %v", a.Status, a.RetryAfter)
	}
	return fmt.Sprintf("a %d", a.Status)
}

// SameKeyOnRetry judges the retries of a client's operations: every retry MUST carry the first
// attempt's key (key-changed-on-retry) and equal parameters (body-changed-on-retry, naming the
// field); an operation processed under two keys left two records (duplicate-record). A run in
// which no operation was retried tested nothing: unknown.
func SameKeyOnRetry(r ClientRun) Result {
	j := newJudge(consumerProfile)
	if !r.anyRetried() {
		j.opsSent(r)
		j.unknownf("the client retried no operation: whether it keeps its key and parameters cannot be told")
		return j.result()
	}
	for _, op := range r.Ops {
		first := op.Attempts[0]
		for _, a := range op.Attempts[1:] {
			if a.Key != first.Key {
				j.add(clientAnomaly(reports.KindKeyChangedOnRetry, a, fmt.Sprintf(
					"a retry of operation %s carried key %s, not its first attempt's %s: the API takes it for a new operation",
					op.Identity, orNone(a.Key), orNone(first.Key)), first.Seq, a.Seq))
			}
			if d := bodyDiff(op.Def, first.ReqBody, a.ReqBody); len(d) > 0 {
				an := clientAnomaly(reports.KindBodyChangedOnRetry, a, fmt.Sprintf(
					"a retry of operation %s changed %s from its first attempt: with the same key the API rejects it as a mismatch",
					op.Identity, strings.Join(d, ", ")), first.Seq, a.Seq)
				an.What = strings.Join(d, ", ")
				j.add(an)
			}
		}
		j.opRecords(op)
	}
	return j.result()
}

// orNone names a missing key.
func orNone(key string) string {
	if key == "" {
		return "(none)"
	}
	return key
}

// NewKeyPerOperation judges a scenario of distinct operations (two of them with one business
// reference and other content, where the client was asked for them): no two operations MAY
// share a key (key-reused-across-operations: the API replays the first one's answer to the
// second, or rejects it).
func NewKeyPerOperation(r ClientRun) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	owner := map[string]ClientOp{}
	for _, op := range r.Ops {
		a := op.Attempts[0]
		if a.Key == "" {
			continue // no key at all: key-present's business
		}
		if prev, ok := owner[a.Key]; ok && prev.Identity != op.Identity {
			j.add(clientAnomaly(reports.KindKeyReusedAcrossOperations, a, fmt.Sprintf(
				"operations %s and %s were sent with the same key: the second is taken for a retry of the first",
				prev.Identity, op.Identity), prev.Attempts[0].Seq, a.Seq))
			continue
		}
		owner[a.Key] = op
	}
	return j.result()
}

// NoRetryOnRejection judges operations the API rejected as invalid (statuses the policy never
// resends): none MAY be resent with the same key (retried-rejection, a deviation).
func NoRetryOnRejection(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	rejected := 0
	for _, op := range r.Ops {
		for i, a := range op.Attempts {
			if !slices.Contains(p.Never, a.Status) {
				continue
			}
			rejected++
			for _, b := range op.Attempts[i+1:] {
				if b.Key == a.Key {
					j.add(clientAnomaly(reports.KindRetriedRejection, b, fmt.Sprintf(
						"operation %s was resent with the same key after the API rejected it with %d: the request is wrong, not unlucky",
						op.Identity, a.Status), a.Seq, b.Seq))
					break
				}
			}
			break
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
// flight): each MUST arrive no earlier than Retry-After − 50 ms after the answer was written
// (retry-before-retry-after, a deviation). Answers the policy does not retry are not judged; a
// run with no retry after a Retry-After is unknown.
func RetryAfter(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	judged := 0
	for _, op := range r.Ops {
		for i, a := range op.Attempts[:len(op.Attempts)-1] {
			if a.RetryAfter <= 0 || !retried(a, p) {
				continue
			}
			judged++
			next := op.Attempts[i+1]
			if wait := next.Start.Sub(a.Answered); wait < a.RetryAfter-retryAfterSlack {
				j.add(clientAnomaly(reports.KindRetryBeforeRetryAfter, next, fmt.Sprintf(
					"operation %s was retried %v after %s: sooner than the Retry-After asked",
					op.Identity, wait.Round(time.Millisecond), answerWords(a)), a.Seq, next.Seq))
			}
		}
	}
	if judged == 0 && len(j.r.Anomalies) == 0 {
		j.unknownf("no answer with a Retry-After the client declares it retries was followed by a retry")
	}
	return j.result()
}

// Bounds of the backoff checker.
const (
	// backoffSlack is how far outside its declared envelope a delay may fall: early, or late on
	// a short envelope. A later retry may also be the machine's doing (a runner's scheduling
	// stall delays the client's timer, never advances it): late, a delay may pass the envelope
	// by a quarter of its upper bound when that is more (lateSlack).
	backoffSlack = 20 * time.Millisecond
	// hammering is the delay under which a retry is hammering whatever the envelope.
	hammering = 10 * time.Millisecond
	// jitterSample is how many first-retry delays the jitter judgement needs.
	jitterSample = 6
	// minJitterSpan is the least spread of jittered first retries.
	minJitterSpan = 5 * time.Millisecond
)

// Backoff judges the delays before a client's retries (answers without a Retry-After): each
// MUST fall within the declared envelope of its retry, at most 20 ms early and at most
// max(20 ms, a quarter of its upper bound) late, and none under 10 ms (no-backoff,
// a deviation); with jitter declared, the first-retry delays of at least 6 operations MUST span
// at least max(5 ms, 10% of the envelope) (no-jitter).
func Backoff(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	b := p.Backoff
	var first []time.Duration
	var firstSeqs []int64
	for _, op := range r.Ops {
		for n := 1; n < len(op.Attempts); n++ {
			prev, a := op.Attempts[n-1], op.Attempts[n]
			if prev.RetryAfter > 0 {
				continue // Retry-After governs this delay
			}
			d := a.Start.Sub(prev.Answered)
			lo, hi := b.Envelope(n)
			switch {
			case d < hammering:
				j.add(clientAnomaly(reports.KindNoBackoff, a, fmt.Sprintf(
					"retry %d of operation %s came %v after %s: hammering (under %v)", n, op.Identity, d.Round(time.Millisecond),
					answerWords(prev), hammering), prev.Seq, a.Seq))
			case d < lo-backoffSlack || d > hi+lateSlack(hi):
				j.add(clientAnomaly(reports.KindNoBackoff, a, fmt.Sprintf(
					"retry %d of operation %s came %v after %s, outside the declared backoff's [%v, %v] (%v early, %v late allowed)", n, op.Identity,
					d.Round(time.Millisecond), answerWords(prev), lo, hi, backoffSlack, lateSlack(hi)), prev.Seq, a.Seq))
			}
			if n == 1 {
				first = append(first, d)
				firstSeqs = append(firstSeqs, a.Seq)
			}
		}
	}
	if b.Jitter == targets.JitterNone {
		return j.result()
	}
	if len(first) < jitterSample {
		j.unknownf("only %d operations were retried; jitter needs the first retries of %d", len(first), jitterSample)
		return j.result()
	}
	lo, hi := b.Envelope(1)
	want := max(minJitterSpan, (hi-lo)/10)
	if span := slices.Max(first) - slices.Min(first); span < want {
		a := r.Ops[0].Attempts[1]
		j.add(clientAnomaly(reports.KindNoJitter, a, fmt.Sprintf(
			"the first retries of %d operations came between %v and %v after their failures: a spread of %v, under the %v a %s jitter gives",
			len(first), slices.Min(first).Round(time.Millisecond), slices.Max(first).Round(time.Millisecond), span.Round(time.Millisecond),
			want, b.Jitter), firstSeqs...))
	}
	return j.result()
}

// lateSlack is how late past an envelope's upper bound hi a delay may come: max(20 ms, hi/4).
func lateSlack(hi time.Duration) time.Duration { return max(backoffSlack, hi/4) }

// Bounded judges an operation that got 503 on every attempt: the client MUST stop at its
// declared attempts (unbounded-retries past them: the harness ended it; no-retry before them)
// and report the failure as it declares (abandoned-operation otherwise).
func Bounded(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	if !j.opsSent(r) {
		return j.result()
	}
	op := r.Ops[0]
	n, last := len(op.Attempts), op.Attempts[len(op.Attempts)-1]
	switch {
	case n > p.MaxAttempts || r.Killed != "":
		why := ""
		if r.Killed != "" {
			why = "; the harness ended it: " + r.Killed
		}
		j.add(clientAnomaly(reports.KindUnboundedRetries, last, fmt.Sprintf(
			"operation %s was attempted %d times under a persistent 503, past the %d declared%s", op.Identity, n, p.MaxAttempts, why),
			op.Attempts[0].Seq, last.Seq))
	case n < p.MaxAttempts:
		j.add(clientAnomaly(reports.KindNoRetry, last, fmt.Sprintf(
			"operation %s was given up after %d of the %d attempts the client declares, under a persistent 503", op.Identity, n, p.MaxAttempts),
			op.Attempts[0].Seq, last.Seq))
	}
	switch {
	case r.Killed != "":
	case r.Reported == nil:
		j.unknownf("the client declares no way to report a failed operation (failure: {exit_code, output}): whether it reported this one cannot be told")
	case !*r.Reported:
		j.add(clientAnomaly(reports.KindAbandonedOperation, last, fmt.Sprintf(
			"the client gave operation %s up after %d attempts without reporting a failure (it exited %d)", op.Identity, n, r.Exit), last.Seq))
	}
	return j.result()
}

// RestartReusesKey judges an operation whose first attempt the API processed and held while the
// client was killed and restarted: the first attempt after the restart MUST carry the held key
// (key-lost-on-restart) and parameters (body-changed-on-retry); a client that does not resume
// the pending operation abandoned it.
func RestartReusesKey(r ClientRun) Result {
	j := newJudge(consumerProfile)
	if len(r.Ops) == 0 {
		j.unknownf("the client sent nothing")
		return j.result()
	}
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
		if after.Key != held.Key {
			j.add(clientAnomaly(reports.KindKeyLostOnRestart, *after, fmt.Sprintf(
				"after the restart operation %s was sent with key %s, not the %s it was pending with: the API takes it for a new operation",
				held.Identity, orNone(after.Key), orNone(held.Key)), held.Seq, after.Seq))
		}
		def := r.Ops[0].Def
		if d := bodyDiff(def, held.ReqBody, after.ReqBody); len(d) > 0 {
			an := clientAnomaly(reports.KindBodyChangedOnRetry, *after, fmt.Sprintf(
				"after the restart operation %s was sent with %s changed", held.Identity, strings.Join(d, ", ")), held.Seq, after.Seq)
			an.What = strings.Join(d, ", ")
			j.add(an)
		}
	}
	return j.result()
}

// KeyPresent judges the retried operations of a client: a retried POST MUST carry a key
// (missing-key: the API cannot tell the retry from a new operation). A run in which no
// operation was retried is unknown.
func KeyPresent(r ClientRun) Result {
	j := newJudge(consumerProfile)
	if !r.anyRetried() {
		j.opsSent(r)
		j.unknownf("the client retried no operation: whether its retries carry a key cannot be told")
		return j.result()
	}
	for _, op := range r.Ops {
		if len(op.Attempts) < 2 {
			continue
		}
		var seqs []int64
		for _, a := range op.Attempts {
			if a.Key == "" {
				seqs = append(seqs, a.Seq)
			}
		}
		if len(seqs) > 0 {
			j.add(clientAnomaly(reports.KindMissingKey, op.Attempts[0], fmt.Sprintf(
				"operation %s was sent %d times and %d of its attempts carried no idempotency key: each can be a new charge",
				op.Identity, len(op.Attempts), len(seqs)), seqs...))
		}
		j.opRecords(op)
	}
	return j.result()
}
