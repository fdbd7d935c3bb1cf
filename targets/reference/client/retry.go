package client

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// The decisions of the client, each with the one place a mutant changes it.

// outcome is what an attempt's answer means for its operation.
type outcome int

const (
	succeeded outcome = iota // a 2xx: done
	retryable                // may be transient: retry with the same key and body
	final                    // rejected: fail now, never resend
)

// verdict is an attempt's outcome and the wait its answer asks for.
type verdict struct {
	kind       outcome
	retryAfter time.Duration // the Retry-After honoured, 0 when none
}

// judge decides what an answer means: no response, any 5xx, 409 and 429 are retryable
// (honouring Retry-After on 409, 429 and 503); a 2xx succeeds; anything else is final. A
// configured should-retry header decides over the status, both ways; a status a configured
// condition names is retryable only when the answer meets it.
func (r *runner) judge(a answer) verdict {
	switch s := a.status; {
	case s == 0:
		return verdict{kind: retryable}
	case s >= 200 && s <= 299:
		return verdict{kind: succeeded}
	case r.cfg.Mutant == MutantSuccessOnBareError && !errorShaped(a.body):
		return verdict{kind: succeeded}
	}
	if retry, says := r.shouldRetry(a.header); says && retry {
		return r.retry(a)
	} else if says && (r.cfg.Mutant != MutantIgnoresShouldRetryFalse || r.byStatus(a).kind != retryable) {
		return verdict{kind: final}
	}
	if named, met := r.conditioned(a.status, a.body); named && r.cfg.Mutant != MutantIgnoresErrorCode {
		if met {
			return r.retry(a)
		}
		return verdict{kind: final}
	}
	return r.byStatus(a)
}

// byStatus decides from an answer's status alone.
func (r *runner) byStatus(a answer) verdict {
	switch s := a.status; {
	case s == http.StatusConflict && r.cfg.Mutant == MutantSkipsDeclaredRetry:
		return verdict{kind: final}
	case s >= 500 || s == http.StatusConflict || s == http.StatusTooManyRequests:
		return r.retry(a)
	case (s == http.StatusBadRequest || s == http.StatusUnprocessableEntity) && r.cfg.Mutant == MutantRetriesRejections:
		return verdict{kind: retryable}
	case s >= 400 && s <= 499 && !rejection(s) && r.cfg.Mutant == MutantRetriesUndeclared:
		return verdict{kind: retryable}
	}
	return verdict{kind: final}
}

// retry is the verdict on an answer to retry: with the Retry-After it honours (on 409, 429 and
// 503).
func (r *runner) retry(a answer) verdict {
	v := verdict{kind: retryable}
	s := a.status
	if honoursRetryAfter(s) && r.cfg.Mutant != MutantIgnoresRetryAfter && (s != http.StatusTooManyRequests || r.cfg.Mutant != MutantRetryAfter429) {
		v.retryAfter, _ = ParseRetryAfter(a.header.Get("Retry-After"), time.Now())
	}
	return v
}

// rejection reports whether a status is one the client declares it never resends: 400, 401,
// 403, 404, 422.
func rejection(s int) bool {
	switch s {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// errorShaped reports whether an error answer's body is the API's error shape: a JSON object with
// an error member (what the success-on-bare-error mutant looks for before it believes a non-2xx).
func errorShaped(body []byte) bool {
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	_, ok := v["error"]
	return ok
}

// delay is the wait before retry n: the policy's jittered backoff, and at least the
// Retry-After.
func (r *runner) delay(n int, retryAfter time.Duration) time.Duration {
	var d time.Duration
	switch r.cfg.Mutant {
	case MutantRetriesImmediately:
		return 0
	case MutantNoJitter:
		d = r.cfg.Policy.Cap(n)
	default:
		d = r.cfg.Policy.Delay(n, r.cfg.Rand)
	}
	return max(d, retryAfter)
}

// maxAttempts is the most attempts an operation gets; 0 is no bound.
func (r *runner) maxAttempts() int {
	switch r.cfg.Mutant {
	case MutantNeverRetries:
		return 1
	case MutantUnbounded:
		return 0
	}
	return r.cfg.Policy.MaxAttempts
}

// operationKey draws a new operation's key: a random UUID v4.
func (r *runner) operationKey(op Operation) (string, error) {
	if r.cfg.Mutant == MutantKeyFromRef {
		return keyFromRef(op.Ref), nil
	}
	return newKey()
}

// attemptKeyBody returns the key and body of the operation's next attempt: the stored ones.
// The key is "" when no Idempotency-Key is to be sent; resumed says the operation was pending
// when this run started (a restart).
func (r *runner) attemptKeyBody(rec Record, op Operation, resumed bool) (key string, body []byte, err error) {
	key, body = rec.Key, []byte(rec.Body)
	retry := rec.Attempts > 0
	switch {
	case r.cfg.Mutant == MutantNoKey, r.cfg.Mutant == MutantRestartWithoutKey && resumed:
		key = ""
	case r.cfg.Mutant == MutantNewKeyPerRetry && retry:
		key, err = newKey()
	case r.cfg.Mutant == MutantBodyDrift && retry:
		body, err = op.body(time.Now())
	}
	return key, body, err
}

// newKey returns a random UUID v4.
func newKey() (string, error) {
	u, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("drawing an Idempotency-Key: %v", err)
	}
	return u.String(), nil
}

// keyFromRef is the key-from-ref mutant's key: a hash of the ref shaped as a UUID v4, so
// that only a second operation with the ref tells it from a random one.
func keyFromRef(ref string) string {
	sum := sha256.Sum256([]byte("retrysafe-client-key:" + ref))
	var u uuid.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}
