package client

import (
	"fmt"
	"strings"
)

// Mutant names a deliberately broken mode of the reference client. The empty Mutant is
// the correct client. Every client property of the suites exists to catch at least one.
// Each mutant changes exactly one thing; everything else behaves like the correct client.
type Mutant string

// The mutants, in the order Mutants lists them.
const (
	MutantNone               Mutant = ""
	MutantNeverRetries       Mutant = "never-retries"
	MutantNewKeyPerRetry     Mutant = "new-key-per-retry"
	MutantNoJitter           Mutant = "no-jitter"
	MutantIgnoresRetryAfter  Mutant = "ignores-retry-after"
	MutantRetriesRejections  Mutant = "retries-rejections"
	MutantUnbounded          Mutant = "unbounded"
	MutantKeyInMemory        Mutant = "key-in-memory"
	MutantNoKey              Mutant = "no-key"
	MutantBodyDrift          Mutant = "body-drift"
	MutantKeyFromRef         Mutant = "key-from-ref"
	MutantRetriesImmediately Mutant = "retries-immediately"
	MutantRestartWithoutKey  Mutant = "restart-without-key"
	MutantRetryAfter429      Mutant = "retry-after-429-ignored"
	MutantTransportResend    Mutant = "transport-resend"
	MutantSkipsDeclaredRetry Mutant = "skips-declared-retry"
	MutantSuccessOnBareError Mutant = "success-on-bare-error"
	MutantRetriesUndeclared  Mutant = "retries-undeclared-status"
	// The mutants of what decides from an answer's content (issue 38).
	MutantIgnoresShouldRetryFalse Mutant = "ignores-should-retry-false"
	MutantIgnoresErrorCode        Mutant = "ignores-error-code"
	// The mutants of an operation whose outcome is unknown (issue 40).
	MutantPendingAsFailure Mutant = "pending-as-failure"
	MutantForgetsPending   Mutant = "forgets-pending"
)

// MutantInfo describes one mutant: its bug and the property that must catch it.
type MutantInfo struct {
	Name     Mutant
	Bug      string
	CaughtBy string // the property that must catch it
}

// Mutants is the table of every mutant.
var Mutants = []MutantInfo{
	{MutantNeverRetries, "makes exactly one attempt and reports failure on any transient error (no response, 5xx, 409, 429)", "retries-transient"},
	{MutantNewKeyPerRetry, "draws a fresh key for every attempt, so each retry is a new operation to the API", "same-key-on-retry"},
	{MutantNoJitter, "waits exactly the exponential cap before every retry, with no randomness: clients retry in lockstep", "backoff"},
	{MutantIgnoresRetryAfter, "ignores Retry-After and retries after its own backoff only", "retry-after"},
	{MutantRetriesRejections, "treats 400 and 422 as transient and resends them with the same key", "no-retry-on-rejection"},
	{MutantUnbounded, "ignores max-attempts and retries a transient error for ever (with its normal backoff)", "bounded"},
	{MutantKeyInMemory, "keeps the key only in memory (the state file holds the operation without it): after a restart the pending operation starts over with a new key", "restart-reuses-key"},
	{MutantNoKey, "sends no Idempotency-Key at all, and retries normally", "key-present"},
	{MutantBodyDrift, "regenerates created_at on every attempt, so a retry's body differs from the first attempt's", "same-key-on-retry"},
	{MutantKeyFromRef, "derives the key from the business ref alone (a hash shaped as a UUID v4), so two operations with one ref share a key", "new-key-per-operation"},
	{MutantRetriesImmediately, "retries at once (no delay, Retry-After ignored too), still bounded by max-attempts", "backoff"},
	{MutantRestartWithoutKey, "keeps the key in its state file but, after a restart, resends the pending operation with no Idempotency-Key", "restart-reuses-key"},
	{MutantRetryAfter429, "honours Retry-After on 503 (and 409) but not on 429, which it retries after its own backoff", "retry-after"},
	{MutantTransportResend, "keeps each attempt's body rewindable (GetBody set), so that net/http re-sends it at once on a reused connection the server closed before answering: an attempt it neither counts nor waits for", "bounded"},
	{MutantSkipsDeclaredRetry, "never retries a 409, which it declares it retries: the operation fails at once", "retries-transient"},
	{MutantSuccessOnBareError, "takes a non-2xx whose body is not its error shape (a JSON object with an error member) for a success", "bounded"},
	{MutantRetriesUndeclared, "retries every 4xx besides 400, 401, 403, 404 and 422 (a 408, a 425) as transient, though it declares neither", "retries-transient"},
	// The mutants of what decides from an answer's content (issue 38).
	{MutantIgnoresShouldRetryFalse, "retries a status it retries (a 503) although its configured should-retry header says false", "retries-transient"},
	{MutantIgnoresErrorCode, "retries a 429 whatever its error code, although its configured condition retries it only when the code is lock_timeout", "retries-transient"},
	// The mutants of an operation whose outcome is unknown (issue 40).
	{MutantPendingAsFailure, "reports an operation failed when it runs out of attempts none of which was answered (its outcome unknown), and never resumes it", "uncertain-stays-pending"},
	{MutantForgetsPending, "reports an operation none of whose attempts was answered pending, but drops it from its state directory: run again, it starts the operation over under a new key", "uncertain-stays-pending"},
}

// ParseMutant returns the mutant with this name ("" or "none" is the correct client).
func ParseMutant(name string) (Mutant, error) {
	if name == "" || name == "none" {
		return MutantNone, nil
	}
	for _, m := range Mutants {
		if string(m.Name) == name {
			return m.Name, nil
		}
	}
	names := make([]string, len(Mutants))
	for i, m := range Mutants {
		names[i] = string(m.Name)
	}
	return "", fmt.Errorf("unknown client mutant %q (known: %s)", name, strings.Join(names, ", "))
}

// Info returns the table row of a mutant.
func (m Mutant) Info() (MutantInfo, bool) {
	for _, info := range Mutants {
		if info.Name == m {
			return info, true
		}
	}
	return MutantInfo{}, false
}
