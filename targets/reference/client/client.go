// Package client is retrysafe's reference idempotent client: the program every client-side
// property of the suites is proven against. It performs a list of logical operations one
// after another, each a POST {BaseURL}/v1/orders with an Idempotency-Key, and retries each
// until it succeeds or fails finally. Its deliberately broken modes ("mutants", see
// Mutants) are what the client properties must catch. `retrysafe client` runs it as a
// process; Run runs it in-process.
//
// What the correct client guarantees:
//   - One key per logical operation: a random UUID v4, drawn before the first attempt and
//     stored with the pending operation (ref, params, key, exact body bytes) in the state
//     directory (temporary file, fsync, rename) before anything is sent. A new operation,
//     even one with the ref of another, gets a new key.
//   - The same key and byte-identical body on every attempt of an operation, after a
//     restart too: created_at is fixed when the operation is created and the body's bytes
//     are stored. On start the client loads the directory: a pending operation resumes with
//     its stored key and body; a done or failed one is not sent again.
//   - A retry only of what may be transient: no response (connection refused, reset or
//     closed, attempt timeout), any 5xx, 409 and 429. A 400, 401, 403, 404, 422, any other
//     4xx, and any 1xx or 3xx (redirects are not followed) fail the operation at once. When
//     configured, a should-retry header decides over the status both ways, and a status named
//     by a condition on the body (a 429 only when its code is lock_timeout) is retried only
//     when the answer meets it.
//   - A wait before every retry: exponential backoff with jitter (see Policy.Delay), never
//     under MinDelay (10 ms), and never sooner than a Retry-After (seconds or HTTP-date) on
//     409, 429 and 503: the delay is max(Retry-After, backoff delay). A resumed operation
//     also waits its backoff before its first attempt after the restart.
//   - At most Policy.MaxAttempts attempts per operation, counted across restarts (the
//     count is stored before every attempt; a retry's at the start of its backoff, which
//     is timed from the previous answer, so that a slow disk does not delay the retry),
//     then a reported failure, or, when none of its attempts was answered (no response to
//     any: whether the API acted is unknown), a reported pending operation: it stays in the
//     state directory with its key and body, and the next run resumes it with a new budget
//     of attempts.
//
// Every finished operation prints one line (see Result.Line). A cancelled context stops
// the client: the attempt in flight is abandoned (its connection closed), no further
// attempt is sent, the operation stays pending in the state directory, and Run returns
// ErrInterrupted.
//
// # The re-send it defeats
//
// Go's http.Transport re-sends a request on its own when a reused keep-alive connection
// breaks before the first response byte and the request is "replayable"
// (Request.isReplayable): a POST carrying an Idempotency-Key header is, when its body is
// absent or rewindable, i.e. GetBody is set, which http.NewRequest does for a
// bytes.Reader. That would be an attempt the client never counted, never waited for and
// never stored. Every attempt therefore goes with a body the Transport cannot rewind
// (GetBody is nil, the body non-empty), straight to Transport.RoundTrip, over HTTP/1.1: one
// attempt is one request on the wire. Keep-alives stay on, as in real SDKs, since a reused
// connection is exactly where that re-send would happen; the tests prove it does not.
package client

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
)

// ErrInterrupted is returned by Run when its context is cancelled: the operation in
// flight stays pending in the state directory, to be resumed by the next run.
var ErrInterrupted = errors.New("interrupted: the operation in flight stays pending in the state directory")

// Config configures Run.
type Config struct {
	// BaseURL is the API's base URL (http://127.0.0.1:PORT); attempts go to BaseURL +
	// OrdersPath.
	BaseURL string
	// StateDir keeps every operation's Record; it survives restarts of the client within
	// one scenario, and is created if it does not exist.
	StateDir string
	// Ops are the operations, performed one after another in order (see Operations and
	// ReadOpsFile). A record in StateDir belongs to the operation at its position.
	Ops []Operation
	// Mutant is the broken mode to run ("" is the correct client).
	Mutant Mutant
	// Policy is the retry policy; zero fields take their defaults.
	Policy Policy
	// Header is sent with every attempt (credentials, say): a real API wants to know its
	// caller. Idempotency-Key and Content-Type are the client's own.
	Header http.Header
	// ShouldRetryHeader, when set, names a header of the API's answers that decides over the
	// status: "true" retries the answer (a 400 included), "false" fails the operation at once
	// (a 503 included); absent or with another value, the status decides.
	ShouldRetryHeader string
	// RetryWhen are conditions on the answer's body: a status one names is retried only when
	// the answer meets one of them (429 only when $.error.code is lock_timeout), and fails the
	// operation at once otherwise.
	RetryWhen []RetryWhen
	// Out receives one line per finished operation (see Result.Line); nil discards them.
	Out io.Writer
	// Log receives one line per attempt and per wait, for people; nil discards them.
	Log io.Writer
	// Rand draws the jitter; nil is math/rand/v2's randomly seeded global source.
	Rand *rand.Rand
}

// check returns the first problem of the configuration, in terms of the command's flags.
func (c Config) check() error {
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		return errors.New("--url: the API's base URL is required (http://127.0.0.1:PORT)")
	case err != nil:
		return fmt.Errorf("--url %s: %v", c.BaseURL, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("--url %s: want http://HOST:PORT or https://HOST:PORT", c.BaseURL)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("--url %s: a base URL has no query or fragment", c.BaseURL)
	case c.StateDir == "":
		return errors.New("--state: a state directory is required (it keeps pending operations across restarts)")
	case len(c.Ops) == 0:
		return errors.New("--ops: no operations to perform")
	}
	for i, op := range c.Ops {
		if strings.TrimSpace(op.Ref) == "" {
			return fmt.Errorf("operation %d: empty ref", i+1)
		}
	}
	return c.Policy.Check()
}

// ordersURL is where attempts go.
func (c Config) ordersURL() string { return strings.TrimRight(c.BaseURL, "/") + OrdersPath }

// Result is how one operation finished.
type Result struct {
	Index int // 1-based position in the ops list
	Ref   string
	// Key is the Idempotency-Key of the last attempt ("" when none was sent).
	Key      string
	Attempts int // attempts of the operation, across restarts
	OK       bool
	// Pending is set when the operation ran out of attempts none of which was answered: whether
	// the API acted is unknown, and it stays in the state directory for the next run to resume.
	Pending bool
	// Status is the last attempt's HTTP status (0: no response, or unknown after a restart).
	Status int
	// Reason says why a failed operation failed: "422 after 1 attempt", "gave up after 5
	// attempts: 503".
	Reason string
	// Earlier is set when the operation finished in an earlier run (from its Record).
	Earlier bool
}

// Line is the result's output line: "ok REF key=KEY attempts=N" ("key=-" when no key was
// sent), "pending REF key=KEY attempts=N: REASON" or "failed REF: REASON". An operation that
// finished in an earlier run prints the same line again.
func (r Result) Line() string {
	key := r.Key
	if key == "" {
		key = "-"
	}
	switch {
	case r.Pending:
		return fmt.Sprintf("pending %s key=%s attempts=%d: %s", r.Ref, key, r.Attempts, r.Reason)
	case !r.OK:
		return fmt.Sprintf("failed %s: %s", r.Ref, r.Reason)
	}
	return fmt.Sprintf("ok %s key=%s attempts=%d", r.Ref, key, r.Attempts)
}

// Summary is what a run finished: every result in order, and the counts.
type Summary struct {
	Results                    []Result
	Succeeded, Failed, Pending int
}

// add appends a result.
func (s *Summary) add(r Result) {
	s.Results = append(s.Results, r)
	switch {
	case r.Pending:
		s.Pending++
	case r.OK:
		s.Succeeded++
	default:
		s.Failed++
	}
}
