package reference

import (
	"context"
	"errors"
	"log"
	"math/rand/v2"
	"time"
)

// EventPublisher publishes one event to where the API's events go and returns nil only once
// the receiver confirmed it: a RabbitMQ publisher confirm, a JetStream ack (the event id in
// Nats-Msg-Id), a webhook's 2xx. Publish is safe for concurrent use.
type EventPublisher interface {
	Publish(ctx context.Context, e OutboxEvent, payload []byte) error
	Close() error
}

// EventsConfig says where the API's events go (Config.Events).
type EventsConfig struct {
	// Publisher publishes them (OpenEventPublisher makes one).
	Publisher EventPublisher
	// Poll is how often the relay looks for pending events when nothing woke it: events other
	// instances of the API wrote, events whose publication failed (default DefaultRelayPoll).
	Poll time.Duration
	// MaxBackoff caps the relay's wait after a failed publication (default DefaultRelayBackoff).
	MaxBackoff time.Duration
	// PublishTimeout bounds one publication (default DefaultPublishTimeout).
	PublishTimeout time.Duration
}

// Defaults of the relay.
const (
	DefaultRelayPoll      = 100 * time.Millisecond
	DefaultRelayBackoff   = 2 * time.Second
	DefaultPublishTimeout = 10 * time.Second
	// relayBatch is how many pending events one pass of the relay reads.
	relayBatch = 64
	// relayFirstBackoff is the relay's first wait after a failed publication.
	relayFirstBackoff = 50 * time.Millisecond
)

// relay publishes the outbox's pending events, at least once, under their ids: it marks an event
// sent only after the publisher confirmed it, so an event whose publication failed, or whose
// confirm was lost, is published again (with the same id) on a later pass; after a failure it
// waits, doubling up to MaxBackoff, with jitter. Several instances of the API on one store may
// publish one event more than once: always under its id.
type relay struct {
	store  Outbox
	cfg    EventsConfig
	now    func() time.Time
	logger *log.Logger
	wakeUp chan struct{}
	// hold is the test hooks' hold before publish (nil without hooks).
	hold *publishHold
	// mutant is the API's mutant: relay-new-id, relay-marks-on-error and relay-gives-up break
	// the relay.
	mutant Mutant
	// failingSince is, for relay-gives-up, when the current run of failed publications began
	// (zero: the last publication succeeded; only the relay's goroutine touches it).
	failingSince time.Time
}

// giveUpAfter is how long the relay-gives-up mutant keeps publishing while its publications fail
// before it abandons the events.
const giveUpAfter = 2 * time.Second

// newRelay returns the relay of an API whose events go where cfg says.
func newRelay(store Outbox, cfg EventsConfig, now func() time.Time, logger *log.Logger) *relay {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultRelayPoll
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultRelayBackoff
	}
	if cfg.PublishTimeout <= 0 {
		cfg.PublishTimeout = DefaultPublishTimeout
	}
	return &relay{store: store, cfg: cfg, now: now, logger: logger, wakeUp: make(chan struct{}, 1)}
}

// wake makes the relay look for pending events now (after a commit that wrote one).
func (r *relay) wake() {
	select {
	case r.wakeUp <- struct{}{}:
	default:
	}
}

// run relays until ctx ends.
func (r *relay) run(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		n, err := r.pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			backoff = min(max(2*backoff, relayFirstBackoff), r.cfg.MaxBackoff)
			r.logger.Printf("relay: %v (again in %v)", err, backoff)
			r.sleep(ctx, backoff/2+rand.N(backoff/2+1), false)
		case n == relayBatch:
			backoff = 0 // more may be pending
		default:
			backoff = 0
			r.sleep(ctx, r.cfg.Poll, true)
		}
	}
}

// sleep waits d, or until ctx ends, or (woken) until an event is written.
func (r *relay) sleep(ctx context.Context, d time.Duration, woken bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	wake := r.wakeUp
	if !woken {
		wake = nil
	}
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
	}
}

// pass publishes the pending events, oldest first, until one fails; it returns how many it
// published and marked sent.
func (r *relay) pass(ctx context.Context) (int, error) {
	evs, err := r.store.PendingEvents(ctx, relayBatch)
	if err != nil {
		return 0, err
	}
	for i, e := range evs {
		err := r.publish(ctx, e)
		switch {
		case err == nil:
			r.failingSince = time.Time{}
		case r.mutant == MutantRelayMarksOnError:
		case r.abandons():
			r.logger.Printf("relay-gives-up: event %s abandoned after %v of failed publications: %v", e.ID, giveUpAfter, err)
			err = nil
		default:
			return i, err
		}
		// Only now: an event whose publication was not confirmed stays pending. A failure to
		// mark it leaves it pending too: it is published again, under its id. (The
		// relay-marks-on-error mutant marks it whatever came of its publication.)
		if err := r.store.MarkEventSent(ctx, e.ID, r.now()); err != nil {
			return i, err
		}
		if err != nil {
			return i + 1, err
		}
	}
	return len(evs), nil
}

// abandons reports whether the relay gives up on the event whose publication just failed:
// never, but for the relay-gives-up mutant once its publications have failed for giveUpAfter
// (the event is then marked sent: never retried, although nothing published it; so is every
// event after it that fails until a publication succeeds).
func (r *relay) abandons() bool {
	if r.mutant != MutantRelayGivesUp {
		return false
	}
	if r.failingSince.IsZero() {
		r.failingSince = r.now()
		return false
	}
	return r.now().Sub(r.failingSince) >= giveUpAfter
}

// publish publishes one event and waits for its confirmation: the one place where the test
// hooks hold a publication, and where the relay-new-id mutant gives each attempt a new id (the
// outbox row keeps its own: it is marked sent by it).
func (r *relay) publish(ctx context.Context, e OutboxEvent) error {
	if err := r.hold.wait(ctx); err != nil {
		return errors.Join(errors.New("publish event "+e.ID+": held"), err)
	}
	if r.mutant == MutantRelayNewID {
		e.ID = "evt_" + randomHex(12)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.PublishTimeout)
	defer cancel()
	if err := r.cfg.Publisher.Publish(ctx, e, e.Payload(r.now())); err != nil {
		return errors.Join(errors.New("publish event "+e.ID), err)
	}
	return nil
}
