package reference

import (
	"fmt"
	"strings"
	"time"
)

// Mutant names a deliberately broken mode of the reference API. The empty Mutant is the
// correct API. Every property of the suites exists to catch at least one mutant.
type Mutant string

// The mutants, in the order `retrysafe mutants` prints them.
const (
	MutantNone               Mutant = ""
	MutantRace               Mutant = "race"
	MutantLoser500           Mutant = "loser-500"
	MutantNoFingerprint      Mutant = "no-fingerprint"
	MutantRawFingerprint     Mutant = "raw-fingerprint"
	MutantPathBlind          Mutant = "path-blind"
	MutantUnscoped           Mutant = "unscoped"
	MutantReplayWithoutAuth  Mutant = "replay-without-auth"
	MutantReplayReexecutes   Mutant = "replay-reexecutes"
	MutantLostWrite          Mutant = "lost-write"
	MutantShortRetention     Mutant = "short-retention"
	MutantNoExpiry           Mutant = "no-expiry"
	MutantEarlyTakeover      Mutant = "early-takeover"
	MutantNoErrorCache       Mutant = "no-error-cache"
	MutantTruncatedKey       Mutant = "truncated-key"
	MutantBodyDedupe         Mutant = "body-dedupe"
	MutantFreshDownstreamKey Mutant = "fresh-downstream-key"
	MutantStuckLock          Mutant = "stuck-lock"
	MutantSplitWrite         Mutant = "split-write"
	// The mutants of the shaped reference API (Config.Hooks and the variant bodies).
	MutantFingerprintIgnoresField Mutant = "fingerprint-ignores-field"
	MutantForgetsEarly            Mutant = "forgets-early"
	MutantStuckAfterError         Mutant = "stuck-after-error"
	MutantErrorReplayDiffers      Mutant = "error-replay-differs"
	// The mutants of the API's events (Config.Events).
	MutantPublishBeforeCommit Mutant = "publish-before-commit"
	MutantReplayRepublishes   Mutant = "replay-republishes"
	MutantDualWrite           Mutant = "dual-write"
	MutantRelayNewID          Mutant = "relay-new-id"
	MutantRelayMarksOnError   Mutant = "relay-marks-on-error"
	// The mutants of the defects real libraries shipped (hostile keys, the error record).
	MutantErrorRecordAfterAnswer Mutant = "error-record-after-answer"
	MutantRawStoreKey            Mutant = "raw-store-key"
	// The mutant of long broker outages (issue 42).
	MutantRelayGivesUp Mutant = "relay-gives-up"
	// The mutants of the asynchronous mode (Config.Async).
	MutantAsyncRetryNewJob  Mutant = "async-retry-new-job"
	MutantAsyncNewReference Mutant = "async-new-reference"
	MutantAsyncLostOnCrash  Mutant = "async-lost-on-crash"
)

// errorRecordDelay is how long after answering a handler error the error-record-after-answer
// mutant stores it: less than any lock timeout the self-test declares, far more than the
// harness takes to send its retry.
const errorRecordDelay = 200 * time.Millisecond

// ignoredField is the body field the fingerprint-ignores-field mutant leaves out of the
// fingerprint: the one the example files' variant_body keeps (it changes the amount).
const ignoredField = "currency"

// forgetsEarlyRetention is the effective retention of the forgets-early mutant.
const forgetsEarlyRetention = time.Second

// MutantInfo describes one mutant: its bug, the stores where it applies and the property
// that must catch it.
type MutantInfo struct {
	Name     Mutant
	Bug      string
	Stores   []string // stores where a property is required to catch it
	Reported []string // stores where it runs and is reported but not required to be caught
	CaughtBy string   // the property that must catch it
	// AlsoCaughtBy are further properties that must catch it, on the same stores.
	AlsoCaughtBy []string
}

// AllStores lists the reference API's stores.
var AllStores = []string{"memory", "sqlite", "postgres", "redis"}

var durableStores = []string{"sqlite", "postgres", "redis"}

// eventStores are the stores on which the events mutants are required to be caught: the outbox
// code under them is the store code that every store's correct rows prove.
var eventStores = []string{"sqlite", "postgres"}

// Mutants is the table of every mutant.
var Mutants = []MutantInfo{
	{MutantRace, "lookup and claim are separate steps (check, then process, then insert): concurrent duplicates both execute", AllStores, nil, "race", []string{"load"}},
	{MutantLoser500, "the loser of a concurrent claim gets 500 instead of 409 or the replay", AllStores, nil, "race", nil},
	{MutantNoFingerprint, "same key + different body replays the first response", AllStores, nil, "mismatch", nil},
	{MutantRawFingerprint, "the fingerprint hashes raw bytes: reordered JSON keys get a false 422", AllStores, nil, "mismatch", nil},
	{MutantPathBlind, "the scope ignores method and path: the same key on /v1/refunds replays the orders response", AllStores, nil, "mismatch", nil},
	{MutantUnscoped, "keys are global: tenant B receives tenant A's stored response", AllStores, nil, "tenancy", nil},
	{MutantReplayWithoutAuth, "the stored response is looked up by key before authentication and replayed to a missing or unknown token", AllStores, nil, "tenancy", nil},
	{MutantReplayReexecutes, "the replay path writes the business record again but returns the stored response", AllStores, nil, "replay", []string{"dropped-response"}},
	{MutantLostWrite, "answers 201 but never writes the business record", AllStores, nil, "replay", []string{"dropped-response"}},
	{MutantShortRetention, "keys expire at a tenth of the declared retention", AllStores, nil, "expiry", nil},
	{MutantNoExpiry, "keys never expire although a retention is declared", AllStores, nil, "expiry", nil},
	{MutantEarlyTakeover, "an in-progress key is taken over after a tenth of the lock timeout", AllStores, nil, "slow-first-attempt", nil},
	{MutantNoErrorCache, "a 5xx result is not stored: the retry calls downstream again", AllStores, nil, "error-replay", nil},
	{MutantTruncatedKey, "keys longer than 64 characters are silently cut to 64, so two long keys with a common prefix collide", AllStores, nil, "keys", nil},
	{MutantBodyDedupe, "requests are deduplicated by body alone: a new key with an identical body gets the first response", AllStores, nil, "control", nil},
	{MutantFreshDownstreamKey, "every attempt sends the downstream call a new key", durableStores, nil, "crash-after-claim", nil},
	{MutantStuckLock, "an in-progress key is never taken over: after a crash every retry gets 409", durableStores, nil, "crash-after-claim", nil},
	{MutantSplitWrite, "the record and the key's completion commit in two separate transactions", []string{"postgres"}, []string{"sqlite", "redis"}, "crash-under-load", nil},
	{MutantFingerprintIgnoresField, "the fingerprint leaves out the body field " + ignoredField + ": the same key with another " + ignoredField + " replays the first result", AllStores, nil, "mismatch", nil},
	{MutantForgetsEarly, "keys are forgotten one second after creation, whatever the declared retention", AllStores, nil, "expiry", nil},
	{MutantStuckAfterError, "after a handler error (an injected failure or a failed downstream call) the key stays in progress: every retry gets 409, whatever the lock timeout", AllStores, nil, "error-replay", nil},
	{MutantErrorReplayDiffers, "a stored error is replayed with another body than the first answer's (another problem detail), under the same status", AllStores, nil, "error-replay", nil},
	{MutantPublishBeforeCommit, "the order.created event is published straight to the broker before the work is done and committed, not through the outbox: an operation that then fails leaves an event for an order that does not exist, and one whose publication failed (its confirm lost) fails and publishes again under a new id on its retry", eventStores, nil, "event-not-before-commit", nil},
	{MutantReplayRepublishes, "a replay of a created order writes its event to the outbox again, under a new event id", eventStores, nil, "event-per-record", nil},
	{MutantDualWrite, "the order.created event is published from the request right after the commit, outside any transaction, with no outbox: a crash between the commit and the publication, or a broker out of reach then, loses it", eventStores, nil, "event-after-crash", []string{"event-under-broker-outage"}},
	{MutantRelayNewID, "the relay gives an event a new id on each publication attempt: a publication whose confirm was lost is published again under an id no consumer can deduplicate", eventStores, nil, "event-under-broker-outage", nil},
	{MutantRelayMarksOnError, "the relay marks an event sent although its publication failed: an event whose broker was out of reach is never published", eventStores, nil, "event-under-broker-outage", nil},
	// The defects real libraries shipped.
	{MutantErrorRecordAfterAnswer, "a handler error is answered first and stored about 200 ms later (fire-and-forget): a retry sent at once gets 409 \"in progress\" for a request that has finished", AllStores, nil, "error-replay", nil},
	{MutantRawStoreKey, "the raw key names its store entries unescaped: on Redis, beside the store's other entries, the key's claim at NS:KEY (a hash) and its cached answer at NS:idempotency:KEY (a string), so that the key idempotency:K names key K's cached answer as its claim and every command on it fails (WRONGTYPE: 5xx); on SQL, a completed answer is looked up by pattern (scope LIKE the raw key), so that the key K% reads key K's answer", durableStores, nil, "keys", nil},
	// Issue 42: a relay that gives up.
	{MutantRelayGivesUp, "the relay abandons an event after about 2 s of failed publications and marks it so that it is never retried: every event of a longer broker outage is lost", eventStores, nil, "event-under-broker-outage", nil},

	// The asynchronous mode's (serve --async), required on asyncStores.
	{MutantAsyncRetryNewJob, "a retry with the same key replays the 202 but enqueues a second job under the same operation: the operation succeeds with two records", asyncStores, nil, "replay", nil},
	{MutantAsyncNewReference, "a retry with the same key gets a new operation (a new reference) and its own job: two records", asyncStores, nil, "replay", nil},
	{MutantAsyncLostOnCrash, "the job lives only in the process's memory: a kill after the 202 loses the record while the status resource, read from the store, says pending forever", asyncStores, nil, "crash-after-claim", nil},
}

// asyncStores are the stores on which the async mutants are required to be caught: durable
// stores that keep jobs (the memory store loses its jobs with its process by construction).
var asyncStores = []string{"sqlite", "postgres"}

// needsAsync reports whether the mutant breaks the asynchronous mode (it needs Config.Async).
func (m Mutant) needsAsync() bool {
	switch m {
	case MutantAsyncRetryNewJob, MutantAsyncNewReference, MutantAsyncLostOnCrash:
		return true
	}
	return false
}

// NeedsAsync reports whether the mutant breaks the asynchronous mode (serve --async).
func (m Mutant) NeedsAsync() bool { return m.needsAsync() }

// needsEvents reports whether the mutant changes how events are published (it needs
// Config.Events).
func (m Mutant) needsEvents() bool {
	switch m {
	case MutantPublishBeforeCommit, MutantReplayRepublishes, MutantDualWrite, MutantRelayNewID, MutantRelayMarksOnError,
		MutantRelayGivesUp:
		return true
	}
	return false
}

// ParseMutant returns the mutant with this name ("" or "none" is the correct API).
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
	return "", fmt.Errorf("unknown mutant %q (known: %s)", name, strings.Join(names, ", "))
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

// AppliesTo reports whether a property is required to catch the mutant on this store.
func (info MutantInfo) AppliesTo(store string) bool {
	for _, s := range info.Stores {
		if s == store {
			return true
		}
	}
	return false
}
