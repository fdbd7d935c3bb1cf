// Package history records every attempt the harness makes against a target.
//
// It is the Jepsen history of retrysafe: each HTTP attempt, with its
// operation, idempotency key, tenant, instance, request, response or error,
// timing and outcome, appended in the order attempts finish. Checkers read it;
// reports render it. Attempts are redacted when they are added, so nothing a
// report takes from a History can carry a credential.
package history

import (
	"net/http"
	"sync"
	"time"
)

// Outcome is the transport-level classification of one attempt, after Jepsen:
// an attempt either certainly happened (OK), certainly did not (Failed), or
// may or may not have reached the target (Unknown).
type Outcome string

const (
	// OK means a response was received. Whether its status is a success is
	// for the suites to judge; at this level a 500 is OK.
	OK Outcome = "ok"
	// Failed means the request provably never left the harness (for example
	// the connection was refused, or no connection was ever obtained).
	Failed Outcome = "failed"
	// Unknown means the request may have reached the target but no complete
	// response was read: a timeout, a reset, a lost or cut response. It is
	// never to be read as "the work did not happen".
	Unknown Outcome = "unknown"
)

// Attempt is one request sent once, and what came of it.
type Attempt struct {
	// Seq is the attempt's position in its History, from 1; 0 until added.
	Seq int64
	// Op names the target operation (from the target file), Key is the
	// idempotency key sent (empty when none), Tenant and Instance say on
	// whose behalf and to which declared instance the attempt went.
	Op, Key, Tenant, Instance string

	// Method and URL are the request line as sent (URL passwords removed).
	Method, URL string
	// ReqHeader and ReqBody are the request headers and body as sent.
	ReqHeader http.Header
	ReqBody   []byte

	// Status is the response status code, 0 when no response was received.
	Status int
	// RespHeader and RespBody are the response headers and the body read,
	// at most the client's body cap (see Truncated).
	RespHeader http.Header
	RespBody   []byte
	// BodyHash is the SHA-256 of the response body bytes as received (before
	// redaction, after truncation): equal hashes mean byte-equal bodies.
	BodyHash [32]byte
	// Truncated reports that the response body was longer than the cap and
	// RespBody holds only its beginning.
	Truncated bool

	// Err is the transport or body-read error, empty when none.
	Err string
	// Start is when the attempt began; End when its response body was read
	// or it failed.
	Start, End time.Time
	// Outcome classifies the attempt; see the Outcome constants.
	Outcome Outcome
	// Note is free text for evidence, e.g. "re-sent after 429 (1/2)".
	Note string
	// Compacted reports an attempt stored compactly (see History.Compact):
	// its request and response headers and its request body were not kept.
	Compacted bool

	// The client side, where the harness plays the API and records what a client sent.

	// Identity names the logical operation the attempt belongs to (its declared identity
	// fields' values): attempts are grouped by it, never by key.
	Identity string
	// Answer is what the harness answered: success, replay, drop (processed, the connection
	// closed), hold (held until the client gave up), or a status code.
	Answer string
	// Answered is when the answer was written, or the connection closed without one.
	Answered time.Time
	// RetryAfter is the Retry-After the answer carried (0: none).
	RetryAfter time.Duration
	// Life is which start of the client process sent it: 1, then 2 after a restart (0: not a
	// client's attempt).
	Life int
	// Reused says the attempt came on a connection that had carried an earlier request: only
	// such a connection's close makes a transport (Go's net/http) re-send a request on its own.
	Reused bool

	// The asynchronous side (an operation's async block, profile.replay_returns), set by the
	// History's annotator (SetAnnotator) before the attempt is stored.

	// Reference is the operation reference the answer carried ("" = none).
	Reference string
	// Current is a fresh read of the resource the answer names, made right after it; nil = none.
	Current *Read
}

// Read is a fresh read of the resource an answer names (profile.replay_returns: current).
type Read struct {
	// URL is what was read; At when the read was answered.
	URL string
	At  time.Time
	// Status and Body are its answer; Err why there is none.
	Status int
	Body   []byte
	Err    string
}

// MethodEvent is the Method of an entry that is no attempt but an event the harness observed
// the target publish (an operation's publishes block): URL names where it was published,
// ReqHeader and ReqBody are the message's headers and payload, Key its event id, Op the
// operation, Start and End when it was observed, Note how. Compaction keeps such entries whole.
const MethodEvent = "EVENT"

// IsEvent reports whether the entry is an observed event rather than an attempt.
func (a Attempt) IsEvent() bool { return a.Method == MethodEvent }

// Duration is how long the attempt took, from Start to End.
func (a Attempt) Duration() time.Duration { return a.End.Sub(a.Start) }

// InFlightAt reports whether t falls within the attempt, from its start to its end inclusive:
// whether a fault that took effect at t (a kill, say) hit it.
func (a Attempt) InFlightAt(t time.Time) bool { return !t.Before(a.Start) && !t.After(a.End) }

// History is an append-only, concurrency-safe record of attempts.
// The zero value is not usable; call New.
type History struct {
	redact *Redactor

	mu       sync.Mutex
	n        int64     // entries recorded, full and compact, observed events included
	observed int64     // observed events recorded (history.MethodEvent)
	attempts []Attempt // attempts kept whole
	compact  *compactStore
	keepFull func(Attempt) bool // non-nil while compact recording is on
	events   []Event            // the nemesis's actions
	annotate func(*Attempt)     // nil: none (SetAnnotator)
}

// SetAnnotator makes h call f with every attempt before it is redacted and stored (observed
// events aside), from the goroutine that adds it: f may set the attempt's Reference and Current
// and note what it needs of the attempt elsewhere, and must redact what it keeps of a
// credential itself. nil turns it off.
func (h *History) SetAnnotator(f func(*Attempt)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.annotate = f
}

// New returns an empty History that redacts every attempt with r before
// storing it. A nil r redacts only the always-secret headers (see Redactor).
func New(r *Redactor) *History {
	if r == nil {
		r = NewRedactor(nil, nil)
	}
	return &History{redact: r}
}

// Redactor returns the Redactor the History applies, so that other output
// (logs, repro commands) can be redacted the same way.
func (h *History) Redactor() *Redactor { return h.redact }

// Add redacts a, assigns it the next sequence number, stores it and returns
// the stored (redacted) attempt. It is safe for concurrent use.
func (h *History) Add(a Attempt) Attempt {
	h.mu.Lock()
	keepFull, annotate := h.keepFull, h.annotate
	h.mu.Unlock()
	if annotate != nil && !a.IsEvent() {
		annotate(&a)
	}
	if keepFull != nil && compactable(a) && !keepFull(a) {
		return h.addCompact(a)
	}
	return h.addWhole(a)
}

// addWhole redacts and stores a whole.
func (h *History) addWhole(a Attempt) Attempt {
	a = h.redact.Attempt(a)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if a.IsEvent() {
		h.observed++
	}
	a.Seq = h.n
	h.attempts = append(h.attempts, a)
	return a
}

// All returns every attempt in the order they were added. The slice is a
// copy; the headers and bodies it refers to are shared and must be treated
// as read-only.
func (h *History) All() []Attempt {
	h.mu.Lock()
	if h.compact == nil {
		defer h.mu.Unlock()
		out := make([]Attempt, len(h.attempts))
		copy(out, h.attempts)
		return out
	}
	n := h.n
	h.mu.Unlock()
	out := make([]Attempt, 0, n)
	for a := range h.After(0) {
		out = append(out, a)
	}
	return out
}

// ByKey returns the attempts made with idempotency key key, in order.
// Keys are compared as stored, that is after redaction.
func (h *History) ByKey(key string) []Attempt {
	h.mu.Lock()
	if h.compact == nil {
		defer h.mu.Unlock()
		var out []Attempt
		for _, a := range h.attempts {
			if a.Key == key {
				out = append(out, a)
			}
		}
		return out
	}
	h.mu.Unlock()
	var out []Attempt
	for a := range h.scan(0, &key) {
		out = append(out, a)
	}
	return out
}

// Len returns the number of entries recorded (the last Seq): attempts and observed events.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int(h.n)
}

// Attempts returns the number of attempts recorded, observed events left out.
func (h *History) Attempts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int(h.n - h.observed)
}
