package consumer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// seenSet is the in-memory-dedupe mutant's deduplication: event ids kept in process memory,
// which a restart forgets and another instance never sees.
type seenSet struct {
	mu   sync.Mutex
	done map[string]bool // true: took effect; false: being handled
}

// begin returns ClaimDone or ClaimInFlight for an event this process knows, else Claimed and
// marks it as being handled.
func (s *seenSet) begin(id string) ClaimOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = map[string]bool{}
	}
	if done, ok := s.done[id]; ok {
		if done {
			return ClaimDone
		}
		return ClaimInFlight
	}
	s.done[id] = false
	return Claimed
}

// end records how the handling of an event ended: seen once it took effect, forgotten else.
func (s *seenSet) end(id string, applied bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if applied {
		s.done[id] = true
	} else {
		delete(s.done, id)
	}
}

// inMemoryDedupe is the in-memory-dedupe mutant: the effect is stored, the event id only
// remembered by this process.
func (c *Consumer) inMemoryDedupe(ctx context.Context, ev Event) Outcome {
	key := ev.dedupeKey()
	switch c.seen.begin(key) {
	case ClaimDone:
		return Outcome{Kind: Duplicate, Event: ev.ID, Text: "the event was already processed"}
	case ClaimInFlight:
		return Outcome{Kind: InFlight, Event: ev.ID, Text: "another delivery of this event is being processed"}
	}
	out := c.apply(ctx, ev, Completion{Key: ""})
	c.seen.end(key, out.Kind == Processed)
	return out
}

// markAfterEffect is the mark-after-effect mutant's end of a claimed handling: the effect
// commits on its own, the rest of the handling's work (and the slow hook's delay) follows, and
// only then is the event marked done, in a separate write. A crash between the two leaves an
// effect whose claim a redelivery takes over and applies again.
func (c *Consumer) markAfterEffect(ctx context.Context, ev Event, key string, token int64) Outcome {
	if out := c.complete(ctx, ev, Completion{Key: ""}); out.Kind != Processed {
		return out
	}
	c.work(ev)
	if _, err := c.cfg.Store.MarkDone(ctx, key, token); err != nil {
		return c.storeFailed(ev, "mark done", err)
	}
	return Outcome{Kind: Processed, Event: ev.ID, Text: "the event took effect"}
}

// rawKey is the raw-bytes-dedupe mutant's dedupe key: a hash of the body exactly as received,
// so the same event re-encoded is another key.
func rawKey(body []byte) string {
	sum := sha256.Sum256(body)
	return "raw:" + hex.EncodeToString(sum[:])
}

// failsAfterEffect is the fails-after-effect mutant's end of a claimed handling: the effect
// commits on its own, then the rest of the handling may still fail (the fail_next hook's
// after-effect point), and a failure gives the claim back as if nothing had happened, so the
// redelivery applies the event again; otherwise the event is marked done.
func (c *Consumer) failsAfterEffect(ctx context.Context, ev Event, key string, token int64) Outcome {
	if out := c.complete(ctx, ev, Completion{Key: ""}); out.Kind != Processed {
		return out
	}
	if c.hooks.takeFailure(ev, FailAfterEffect) {
		c.afterFailure(ctx, key, token)
		return c.handlingFailed(ev, errHookFailure)
	}
	if _, err := c.cfg.Store.MarkDone(ctx, key, token); err != nil {
		return c.storeFailed(ev, "mark done", err)
	}
	return Outcome{Kind: Processed, Event: ev.ID, Text: "the event took effect"}
}
