package check

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

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
	// AnswerCut: the connection closed without an answer before processing (nothing stored):
	// the attempts after the first of uncertain-stays-pending.
	AnswerCut = "cut"
	// AnswerUnknownPath: a request for no declared operation (404).
	AnswerUnknownPath = "404"
)

// ClientRun is one scenario's run of a client: its operations (GroupClientOps: in the order
// each began), and how the client ended.
type ClientRun struct {
	// Client names the client.
	Client string
	Ops    []ClientOp
	// Exit is the client's exit status (-1 when the harness killed it).
	Exit int
	// Killed says why the harness ended the client ("" = it exited on its own).
	Killed string
	// Reported is what the client reported, read as it declares (clients[].outcome:
	// targets.ClientOutcome.Of; targets.ReportedUntold when it declares no way to tell).
	Reported targets.Reported
	// FirstStart, in a scenario that started the client again once it had stopped on its own
	// (uncertain-stays-pending), is how its first start ended; Exit, Killed and Reported are
	// then its second start's. Nil otherwise.
	FirstStart *ClientEnd
	// Wanted is how many operations the scenario asked for.
	Wanted int
	// Asked are the identities of the operations asked for, as the declared identity writes
	// them (targets.UnknownValue for a value the harness cannot tell), to name those missing.
	Asked []string
}

// ClientEnd is how one start of a client ended.
type ClientEnd struct {
	// Exit is its exit status (-1 when the harness killed it).
	Exit int
	// Killed says why the harness ended it ("" = it exited on its own).
	Killed string
	// Reported is what it reported, read as the client declares.
	Reported targets.Reported
}

// unanswered reports whether an attempt ended without an answer: its connection closed, or
// held until the client gave it up or was killed.
func unanswered(a history.Attempt) bool {
	return a.Answer == AnswerDrop || a.Answer == AnswerCut || a.Answer == AnswerHold || a.Answer == AnswerHeld
}

// processed reports whether the scripted API processed an attempt (a record exists for its key).
func processed(a history.Attempt) bool {
	return a.Answer == AnswerSuccess || a.Answer == AnswerDrop || a.Answer == AnswerHeld
}

// anyRetried reports whether an operation of the run was attempted more than once.
func (r ClientRun) anyRetried() bool {
	return slices.ContainsFunc(r.Ops, func(op ClientOp) bool { return len(op.Attempts) > 1 })
}

// opsSent checks that the client sent the operations the scenario asked for.
func (j *judge) opsSent(r ClientRun) bool {
	missing := r.missing()
	sent := r.Wanted - len(missing)
	if len(r.Asked) == 0 { // a hand-built run: the operations that are their identity's first
		sent = 0
		for _, op := range r.Ops {
			if op.N <= 1 {
				sent++
			}
		}
	}
	if sent >= r.Wanted {
		return true
	}
	why := ""
	if r.Killed != "" {
		why = " (" + r.Killed + ")"
	}
	if len(missing) > 0 {
		why += "; never sent: " + strings.Join(missing, ", ")
	}
	j.unknownf("the client sent %d of the %d operations asked for%s", max(sent, 0), r.Wanted, why)
	return false
}

// missing are the identities of the operations asked for that no operation sent matches, each
// once per operation asked for with it.
func (r ClientRun) missing() []string {
	used := make([]bool, len(r.Ops))
	var out []string
	for _, want := range r.Asked {
		i := slices.IndexFunc(r.Ops, func(op ClientOp) bool { return identityMatches(want, op.Identity) })
		for i >= 0 && used[i] {
			next := slices.IndexFunc(r.Ops[i+1:], func(op ClientOp) bool { return identityMatches(want, op.Identity) })
			if next < 0 {
				i = -1
				break
			}
			i += 1 + next
		}
		if i < 0 {
			out = append(out, want)
			continue
		}
		used[i] = true
	}
	return out
}

// identityMatches reports whether an operation's identity is the one expected, a value the
// harness cannot tell (targets.UnknownValue) matching any.
func identityMatches(want, got string) bool {
	w, g := strings.Split(want, " | "), strings.Split(got, " | ")
	if len(w) != len(g) {
		return false
	}
	for i := range w {
		if w[i] != targets.UnknownValue && w[i] != g[i] {
			return false
		}
	}
	return true
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
			"operation %s was processed %d times: %d records for one logical operation", op.Name(), len(keys), len(keys)), seqs...))
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

// answerWords says what an attempt got, for messages.
func answerWords(a history.Attempt) string {
	switch a.Answer {
	case AnswerDrop:
		return "a connection closed without an answer (after processing)"
	case AnswerCut:
		return "a connection closed without an answer (before processing)"
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
// which no operation was retried tested nothing: unknown. Every attempt is bounded (everyAttempt).
func SameKeyOnRetry(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.everyAttempt(r, p)
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
					op.Name(), orNone(a.Key), orNone(first.Key)), first.Seq, a.Seq))
			}
			if d := bodyDiff(op.Def, first.ReqBody, a.ReqBody); len(d) > 0 {
				an := clientAnomaly(reports.KindBodyChangedOnRetry, a, fmt.Sprintf(
					"a retry of operation %s changed %s from its first attempt: with the same key the API rejects it as a mismatch",
					op.Name(), strings.Join(d, ", ")), first.Seq, a.Seq)
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
// second, or rejects it). Every attempt is bounded (everyAttempt).
func NewKeyPerOperation(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	j.everyAttempt(r, p)
	owner := map[string]ClientOp{}
	for _, op := range r.Ops {
		a := op.Attempts[0]
		if a.Key == "" {
			continue // no key at all: key-present's business
		}
		if prev, ok := owner[a.Key]; ok && prev.Identity != op.Identity {
			j.add(clientAnomaly(reports.KindKeyReusedAcrossOperations, a, fmt.Sprintf(
				"operations %s and %s were sent with the same key: the second is taken for a retry of the first",
				prev.Name(), op.Name()), prev.Attempts[0].Seq, a.Seq))
			continue
		}
		owner[a.Key] = op
	}
	return j.result()
}

// KeyPresent judges the retried operations of a client: a retried POST MUST carry a key
// (missing-key: the API cannot tell the retry from a new operation). A run in which no
// operation was retried is unknown, or skipped when the policy makes one attempt per operation
// (max_attempts: 1). Every attempt is bounded (everyAttempt).
func KeyPresent(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.everyAttempt(r, p)
	if !r.anyRetried() {
		if j.opsSent(r) && p.MaxAttempts == 1 {
			j.r.Skip = "the client makes one attempt per operation (max_attempts: 1) and retried none: no retry to judge"
			return j.result()
		}
		if len(r.Ops) > 0 && !p.RetriesFailure("reset") && len(p.PlannedStatuses()) == 0 {
			j.r.Skip = "the client's policy retries no status and no connection closed without an answer: no retry to judge"
			return j.result()
		}
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
				op.Name(), len(op.Attempts), len(seqs)), seqs...))
		}
		j.opRecords(op)
	}
	return j.result()
}
