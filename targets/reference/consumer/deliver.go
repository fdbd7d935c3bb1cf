package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// OutcomeKind says what became of a delivery, and so what its transport must do with it.
type OutcomeKind int

const (
	// Processed: the event took effect now. Acknowledge.
	Processed OutcomeKind = iota + 1
	// Duplicate: the event had already taken effect; nothing was done. Acknowledge.
	Duplicate
	// InFlight: another delivery of the event holds its claim (or took it over from this
	// one). Do not acknowledge: deliver again later.
	InFlight
	// Failed: the downstream call or the store failed; the claim was released. Do not
	// acknowledge: deliver again later.
	Failed
	// Rejected: the body is not a valid event. Never deliver it again (dead-letter it).
	Rejected
)

// String returns the kind's name: processed, duplicate, in-flight, failed or rejected.
func (k OutcomeKind) String() string {
	switch k {
	case Processed:
		return "processed"
	case Duplicate:
		return "duplicate"
	case InFlight:
		return "in-flight"
	case Failed:
		return "failed"
	case Rejected:
		return "rejected"
	}
	return "unknown"
}

// Outcome is the result of Deliver.
type Outcome struct {
	Kind  OutcomeKind
	Event string // the event id ("" when the body was rejected before it was known)
	Text  string // a short human explanation
	// Err is the cause of a Failed outcome; it wraps ErrDownstream when the downstream
	// call failed, and is a store error otherwise.
	Err error
}

// Ack reports whether the transport must acknowledge the delivery (Processed, Duplicate).
func (o Outcome) Ack() bool { return o.Kind == Processed || o.Kind == Duplicate }

// Retry reports whether the event must be delivered again later (InFlight, Failed).
func (o Outcome) Retry() bool { return o.Kind == InFlight || o.Kind == Failed }

// ErrDownstream marks a failed downstream call (a non-2xx answer, a timeout, no answer).
var ErrDownstream = errors.New("downstream call failed")

// Deliver processes one delivery: claim the event id, do the work, call the downstream,
// then mark the event done, write its effect and move its object's state forward in one
// transaction. The work goes on when ctx is cancelled (a client that hangs up does not
// abandon an effect half-way); a crashed process leaves a claim that a redelivery takes
// over after the lock timeout. An event that names business operations is handled once per
// operation, each claimed on its own (two messages of one operation apply it once; one message
// of several applies each); one that names none is claimed on its id.
func (c *Consumer) Deliver(ctx context.Context, d Delivery) Outcome {
	ctx = context.WithoutCancel(ctx)
	ev, err := parseEvent(d)
	if err != nil {
		return Outcome{Kind: Rejected, Event: d.ID, Text: err.Error()}
	}
	ev.delay, ev.fail, ev.redelivered = d.Delay, d.Fail, d.Redelivered
	units := c.units(ev)
	if len(units) == 1 {
		return c.deliverUnit(ctx, units[0], d.Body)
	}
	applied := 0
	for _, u := range units {
		out := c.deliverUnit(ctx, u, d.Body)
		switch out.Kind {
		case Processed:
			applied++
		case Duplicate:
		default:
			return out // not acknowledged: its redelivery applies the operations still to apply
		}
	}
	if applied == 0 {
		return Outcome{Kind: Duplicate, Event: ev.ID, Text: "every operation of the event was already applied"}
	}
	return Outcome{Kind: Processed, Event: ev.ID, Text: fmt.Sprintf("the event took effect (%d of its %d operations applied now)", applied, len(units))}
}

// units are the handlings of one event: one per business operation it names (the first only,
// in the first-operation-only mutant), or the event itself when it names none.
func (c *Consumer) units(ev Event) []Event {
	if len(ev.ops) == 0 {
		ev.op = ev.ID
		return []Event{ev}
	}
	ops := ev.ops
	if c.cfg.Mutant == MutantFirstOperationOnly {
		ops = ops[:1]
	}
	out := make([]Event, len(ops))
	for i, op := range ops {
		u := ev
		u.op, u.opKey = op, "op:"+op
		if c.cfg.Mutant == MutantMessageIDDedupe {
			u.opKey = "msg:" + ev.ID + ":" + op // a new message of the operation is a new key
		}
		out[i] = u
	}
	return out
}

// dedupeKey is what a handling claims: its operation's key, or the event id when the event
// names no operation.
func (ev Event) dedupeKey() string {
	if ev.opKey != "" {
		return ev.opKey
	}
	return ev.ID
}

// keyed is a mutant's dedupe key k of the event, per operation when the event names some.
func (ev Event) keyed(k string) string {
	if ev.opKey != "" {
		return k + ":" + ev.op
	}
	return k
}

// deliverUnit runs one handling of an event: its one operation (or the event itself).
func (c *Consumer) deliverUnit(ctx context.Context, ev Event, body []byte) Outcome {
	switch c.cfg.Mutant {
	case MutantNoDedupe:
		return c.apply(ctx, ev, Completion{Key: ""})
	case MutantCheckThenInsert:
		return c.checkThenInsert(ctx, ev)
	case MutantInMemoryDedupe:
		return c.inMemoryDedupe(ctx, ev)
	}
	key := ev.dedupeKey()
	switch c.cfg.Mutant {
	case MutantPayloadDedupe:
		key = ev.keyed(payloadKey(body))
	case MutantRawBytesDedupe:
		key = ev.keyed(rawKey(body))
	}
	res, err := c.cfg.Store.Claim(ctx, c.claimRequest(key))
	if err != nil {
		return c.storeFailed(ev, "claim", err)
	}
	switch res.Outcome {
	case ClaimDone:
		return Outcome{Kind: Duplicate, Event: ev.ID, Text: "the event was already processed"}
	case ClaimInFlight:
		return Outcome{Kind: InFlight, Event: ev.ID, Text: "another delivery of this event is being processed"}
	}
	return c.processClaimed(ctx, ev, key, res.Token)
}

// processClaimed runs a claimed event to its effect.
func (c *Consumer) processClaimed(ctx context.Context, ev Event, key string, token int64) Outcome {
	completion := Completion{Key: key, Token: token}
	if c.cfg.Mutant == MutantClaimBeforeEffect {
		if _, err := c.cfg.Store.MarkDone(ctx, key, token); err != nil {
			return c.storeFailed(ev, "mark done", err)
		}
		completion.Force = true
	}
	if c.cfg.Mutant != MutantMarkAfterEffect {
		c.work(ev)
	}
	if err := c.effectCall(ctx, ev); err != nil {
		c.afterFailure(ctx, key, token)
		return c.handlingFailed(ev, err)
	}
	switch c.cfg.Mutant {
	case MutantMarkAfterEffect:
		return c.afterEffect(ev, c.markAfterEffect(ctx, ev, key, token))
	case MutantFailsAfterEffect:
		return c.failsAfterEffect(ctx, ev, key, token)
	}
	return c.afterEffect(ev, c.complete(ctx, ev, completion))
}

// afterEffect is the end of a handling whose effect committed: the fail_next hook's
// after-effect point fails it then (its effect stays, and so does its dedupe record: the
// redelivery is a duplicate).
func (c *Consumer) afterEffect(ev Event, out Outcome) Outcome {
	if out.Kind == Processed && c.hooks.takeFailure(ev, FailAfterEffect) {
		return c.handlingFailed(ev, errHookFailure)
	}
	return out
}

// effectCall is what can make an effect fail: the fail_next hook armed for the event, then the
// downstream call.
func (c *Consumer) effectCall(ctx context.Context, ev Event) error {
	if c.hooks.takeFailure(ev, FailBeforeEffect) {
		return errHookFailure
	}
	return c.callDownstream(ctx, ev)
}

// afterFailure gives the claim back, so that the redelivery takes effect (or, in the
// marks-seen-on-failure mutant, marks the event done).
func (c *Consumer) afterFailure(ctx context.Context, key string, token int64) {
	var err error
	if c.cfg.Mutant == MutantMarksSeenOnFailure {
		_, err = c.cfg.Store.MarkDone(ctx, key, token)
	} else {
		err = c.cfg.Store.Release(ctx, key, token)
	}
	if err != nil {
		c.cfg.Logger.Printf("event %s: after the downstream failure: %v", key, err)
	}
}

// checkThenInsert is the check-then-insert mutant: look the event up, work, then upsert it
// as done with its effect, with nothing atomic between the lookup and the write.
func (c *Consumer) checkThenInsert(ctx context.Context, ev Event) Outcome {
	key := ev.dedupeKey()
	row, err := c.cfg.Store.Lookup(ctx, key)
	if err != nil {
		return c.storeFailed(ev, "lookup", err)
	}
	if outcome, _ := Decide(row, c.claimRequest(key)); outcome == ClaimDone {
		return Outcome{Kind: Duplicate, Event: ev.ID, Text: "the event was already processed"}
	}
	return c.apply(ctx, ev, Completion{Key: key, Force: true})
}

// apply works, calls the downstream and completes without a claim to give back.
func (c *Consumer) apply(ctx context.Context, ev Event, completion Completion) Outcome {
	c.work(ev)
	if err := c.effectCall(ctx, ev); err != nil {
		return c.handlingFailed(ev, err)
	}
	return c.afterEffect(ev, c.complete(ctx, ev, completion))
}

// complete writes the event's completion and says how it went.
func (c *Consumer) complete(ctx context.Context, ev Event, completion Completion) Outcome {
	now := c.cfg.Now()
	completion.Now = now
	completion.Retention = c.retention()
	completion.OrderBlind = c.cfg.Mutant == MutantOrderBlind
	completion.Effect = Effect{Event: ev.ID, Object: ev.Object, Version: ev.Version, Created: now, Operation: ev.op}
	ok, err := c.cfg.Store.Complete(ctx, completion)
	switch {
	case err != nil:
		return c.storeFailed(ev, "complete", err)
	case !ok:
		return Outcome{Kind: InFlight, Event: ev.ID,
			Text: "this delivery was superseded by a redelivery after the lock timeout"}
	}
	return Outcome{Kind: Processed, Event: ev.ID, Text: "the event took effect"}
}

// work simulates the processing time between the claim and the effect, and the delay the slow
// hook asked for.
func (c *Consumer) work(ev Event) {
	if d := max(c.cfg.WorkDelay, 0) + c.cfg.EffectDelay + ev.delay; d > 0 {
		time.Sleep(d)
	}
}

func (c *Consumer) storeFailed(ev Event, step string, err error) Outcome {
	c.cfg.Logger.Printf("event %s: %s: %v", ev.ID, step, err)
	return Outcome{Kind: Failed, Event: ev.ID, Text: "store error", Err: fmt.Errorf("%s: %w", step, err)}
}

// handlingFailed is the outcome of a handling whose effect failed: its downstream, or the
// fail_next hook.
func (c *Consumer) handlingFailed(ev Event, err error) Outcome {
	c.cfg.Logger.Printf("event %s: %v", ev.ID, err)
	if errors.Is(err, errHookFailure) {
		return Outcome{Kind: Failed, Event: ev.ID, Text: "the handling failed (the fail_next hook)", Err: err}
	}
	return Outcome{Kind: Failed, Event: ev.ID, Text: "downstream provider failed: " + downstreamFailure(err), Err: err}
}
