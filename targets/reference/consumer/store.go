package consumer

import (
	"context"
	"errors"
	"time"
)

// EventState is the life-cycle state of one event's dedupe record.
type EventState string

const (
	// EventInProgress: a delivery claimed the event and is applying its effect.
	EventInProgress EventState = "in_progress"
	// EventDone: the event took effect; later deliveries are duplicates.
	EventDone EventState = "done"
)

// EventRow is the stored dedupe record of one event.
type EventRow struct {
	Key       string // the dedupe key: the event id (or what a mutant makes of it)
	State     EventState
	Token     int64 // fencing token: incremented by every claim, takeover or expiry reset
	CreatedAt time.Time
	LockedAt  time.Time
}

// ClaimRequest asks a store to claim an event atomically.
type ClaimRequest struct {
	Key         string
	Now         time.Time
	Retention   time.Duration // <= 0: dedupe records never expire
	LockTimeout time.Duration // <= 0: an in-progress claim is never taken over
}

// ClaimOutcome says what a claim found.
type ClaimOutcome int

const (
	// Claimed: the caller owns the event (new, expired and reset, or taken over) and must
	// complete or release it with the returned token.
	Claimed ClaimOutcome = iota + 1
	// ClaimInFlight: another delivery holds the event and its lock has not timed out.
	ClaimInFlight
	// ClaimDone: the event already took effect.
	ClaimDone
)

// String returns the outcome's name: claimed, in-flight or done.
func (o ClaimOutcome) String() string {
	switch o {
	case Claimed:
		return "claimed"
	case ClaimInFlight:
		return "in-flight"
	case ClaimDone:
		return "done"
	}
	return "unknown"
}

// ClaimResult is the answer of Store.Claim.
type ClaimResult struct {
	Outcome ClaimOutcome
	Token   int64 // with Claimed
}

// Effect is one business effect of an event: what the observer counts.
type Effect struct {
	Event   string
	Object  string
	Version int64
	Created time.Time
	// Operation is the business operation the effect applied: the one the event named (one of
	// several), or the event id when it named none.
	Operation string
}

// EffectFilter selects effects; empty fields match everything.
type EffectFilter struct {
	Event     string
	Object    string
	Operation string
}

// Match reports whether e passes the filter.
func (f EffectFilter) Match(e Effect) bool {
	return (f.Event == "" || f.Event == e.Event) && (f.Object == "" || f.Object == e.Object) &&
		(f.Operation == "" || f.Operation == e.Operation)
}

// Completion applies a claimed event: the dedupe record is marked done, the effect row is
// inserted and the object's state moves to the effect's version if that is newer, all in
// one transaction (one script on Redis).
type Completion struct {
	Key   string // "" (no-dedupe mutant): no dedupe record is written or checked
	Token int64
	Now   time.Time
	// Retention is the dedupe retention: with Force, Redis sets the record's expiry from it.
	Retention time.Duration
	// Effect is inserted; its Object's state is set to its Version.
	Effect Effect
	// Force (check-then-insert and claim-before-effect mutants): no claim is checked; the
	// dedupe record is upserted as done.
	Force bool
	// OrderBlind (order-blind mutant): the object's state is set to Version even when the
	// stored version is newer.
	OrderBlind bool
}

// Store keeps dedupe records, effects and object states. Every method is safe for
// concurrent use, also by several processes sharing one database (except the memory store).
type Store interface {
	// Claim atomically claims the event, or reports why it cannot (see Decide).
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// Lookup returns the event's dedupe record, or nil when there is none.
	Lookup(ctx context.Context, key string) (*EventRow, error)
	// Complete applies the completion if the event is still held with its token (in
	// progress, same token), or unconditionally with Force or an empty Key. It reports
	// false, writing nothing, when the delivery was fenced off by a takeover or reset.
	Complete(ctx context.Context, c Completion) (bool, error)
	// MarkDone marks a claim held with this token done without any effect (mutants only).
	MarkDone(ctx context.Context, key string, token int64) (bool, error)
	// Release deletes an in-progress claim held with this token, so that the next delivery
	// claims the event anew.
	Release(ctx context.Context, key string, token int64) error
	// Effects lists the effects that match, in the order they were written.
	Effects(ctx context.Context, f EffectFilter) ([]Effect, error)
	// ObjectVersion returns the object's stored version (0 when unknown).
	ObjectVersion(ctx context.Context, object string) (int64, error)
	// Prune deletes dedupe records created before the given time and returns how many.
	// Effects and object states are never pruned.
	Prune(ctx context.Context, createdBefore time.Time) (int, error)
	Close() error
}

// ErrUnknownStore is returned by OpenStore for an unknown store name.
var ErrUnknownStore = errors.New("unknown store")

// Decide is the claim rule shared by every store. Given the existing record (nil when the
// event has none) it returns the outcome and whether the record must be (re)written as a
// fresh in-progress claim with the next token:
//   - no record, or one created at or before Now-Retention (expired: a new event): Claimed, reset;
//   - a done record: ClaimDone;
//   - an in-progress record locked at or before Now-LockTimeout: Claimed (takeover), reset;
//   - otherwise: ClaimInFlight.
func Decide(row *EventRow, req ClaimRequest) (ClaimOutcome, bool) {
	if row == nil {
		return Claimed, true
	}
	if req.Retention > 0 && !row.CreatedAt.After(req.Now.Add(-req.Retention)) {
		return Claimed, true
	}
	if row.State == EventDone {
		return ClaimDone, false
	}
	if req.LockTimeout > 0 && !row.LockedAt.After(req.Now.Add(-req.LockTimeout)) {
		return Claimed, true
	}
	return ClaimInFlight, false
}

// storeTime normalises a time to what every store keeps: microsecond precision, UTC.
func storeTime(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// initialToken is the fencing token of a new dedupe record. It starts at the claim time in
// microseconds rather than at 1, so an event whose record was deleted (pruned or released)
// and claimed again never reuses a token that a stale delivery might still hold.
func initialToken(now time.Time) int64 { return max(now.UnixMicro(), 1) }

// freshRow is the record written by a claim that resets (or creates) an event's record.
func freshRow(req ClaimRequest, old *EventRow) EventRow {
	token := initialToken(req.Now)
	if old != nil {
		token = old.Token + 1
	}
	now := storeTime(req.Now)
	return EventRow{Key: req.Key, State: EventInProgress, Token: token, CreatedAt: now, LockedAt: now}
}
