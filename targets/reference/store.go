package reference

import (
	"context"
	"errors"
	"time"
)

// State is the life-cycle state of one idempotency key.
type State string

const (
	// StateInProgress: the key is claimed and its request is being processed.
	StateInProgress State = "in_progress"
	// StateDone: the key's result is stored and is replayed to retries.
	StateDone State = "done"
)

// Response is a stored result: the status and the exact body bytes sent the first time.
type Response struct {
	Status int
	Body   []byte
}

// Record is one business record (an order or a refund). Records are what the observers count.
type Record struct {
	ID       string
	Tenant   string
	Kind     string // "orders" or "refunds"
	Ref      string
	Amount   int64
	Currency string
	Created  time.Time
}

// KeyRow is the stored state of one idempotency key.
type KeyRow struct {
	Scope       string
	Fingerprint string
	State       State
	Token       int64 // fencing token: incremented by every claim, takeover or expiry reset
	CreatedAt   time.Time
	LockedAt    time.Time
	Response    Response // valid when State == StateDone
}

// ClaimRequest asks a store to claim a key atomically.
type ClaimRequest struct {
	Scope       string // opaque scope id built by the handler (tenant, method, path, key)
	Fingerprint string
	Now         time.Time
	Retention   time.Duration // <= 0: keys never expire
	LockTimeout time.Duration // <= 0: an in-progress key is never taken over
}

// ClaimOutcome says what a claim found.
type ClaimOutcome int

const (
	// Claimed: the caller owns the key (new, expired and reset, or taken over) and must
	// complete it with the returned token.
	Claimed ClaimOutcome = iota + 1
	// InFlight: another attempt holds the key and its lock has not timed out.
	InFlight
	// Completed: the key has a stored response to replay.
	Completed
	// Mismatch: the key is live with another fingerprint.
	Mismatch
)

func (o ClaimOutcome) String() string {
	switch o {
	case Claimed:
		return "claimed"
	case InFlight:
		return "in-flight"
	case Completed:
		return "completed"
	case Mismatch:
		return "mismatch"
	}
	return "unknown"
}

// ClaimResult is the answer of Store.Claim.
type ClaimResult struct {
	Outcome  ClaimOutcome
	Token    int64    // with Claimed
	Response Response // with Completed
}

// Completion finishes a claimed key: the business record (if any) and the key's stored
// response commit together.
type Completion struct {
	Scope       string
	Token       int64
	Fingerprint string // used with Force
	Now         time.Time
	Record      *Record // nil: no business record (an error result, or the lost-write mutant)
	// Event is the record's event, written in the record's transaction (nil: none; ignored
	// without a Record).
	Event    *OutboxEvent
	Response Response
	// Split (split-write mutant): the record commits in one transaction and the key's
	// completion in a second one.
	Split bool
	// Force (race mutant): no claim was made; insert the record and upsert the key as done
	// without any check.
	Force bool

	// Job is the pending job of an asynchronous operation (Config.Async), written in the key's
	// transaction (nil: none). Stores that keep no jobs (Jobs) never get one.
	Job *Job
}

// Store keeps idempotency keys and business records. Every method is safe for concurrent
// use, also by several processes sharing one database (except the memory store).
type Store interface {
	// Claim atomically claims the scope, or reports why it cannot (see Decide).
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// Lookup returns the key row, or nil when there is none. Used only by mutants.
	Lookup(ctx context.Context, scope string) (*KeyRow, error)
	// Complete stores the response and the record if the key is still held with this
	// token (in progress, same token); it reports false, writing nothing, when the
	// attempt was fenced off by a takeover or reset.
	Complete(ctx context.Context, c Completion) (bool, error)
	// Release deletes an in-progress claim held with this token (no-error-cache mutant).
	Release(ctx context.Context, scope string, token int64) error
	// AddRecord writes a business record outside any key (replay-reexecutes mutant).
	AddRecord(ctx context.Context, r Record) error
	// Records lists the records of a tenant, kind and ref, oldest first.
	Records(ctx context.Context, tenant, kind, ref string) ([]Record, error)
	// Prune deletes keys created before the given time, and the events sent that were created
	// before it, and returns how many keys.
	Prune(ctx context.Context, createdBefore time.Time) (int, error)
	// Outbox keeps the API's events (written with their records through Completion.Event).
	Outbox
	Close() error
}

// ErrUnknownStore is returned by Open for an unknown store name.
var ErrUnknownStore = errors.New("unknown store")

// Decide is the claim rule shared by every store. Given the existing row (nil when the
// scope has none) it returns the outcome and whether the row must be (re)written as a
// fresh in-progress claim with the next token:
//   - no row, or a row created at or before Now-Retention (expired): Claimed, reset;
//   - a live row with another fingerprint: Mismatch;
//   - a done row: Completed (replay);
//   - an in-progress row locked at or before Now-LockTimeout: Claimed (takeover), reset;
//   - otherwise: InFlight.
func Decide(row *KeyRow, req ClaimRequest) (ClaimOutcome, bool) {
	if row == nil {
		return Claimed, true
	}
	if req.Retention > 0 && !row.CreatedAt.After(req.Now.Add(-req.Retention)) {
		return Claimed, true
	}
	if row.Fingerprint != req.Fingerprint {
		return Mismatch, false
	}
	if row.State == StateDone {
		return Completed, false
	}
	if req.LockTimeout > 0 && !row.LockedAt.After(req.Now.Add(-req.LockTimeout)) {
		return Claimed, true
	}
	return InFlight, false
}
