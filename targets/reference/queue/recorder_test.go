package queue

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// delivered is one call of the handler.
type delivered struct {
	Message
	at time.Time
}

// recorder records the messages a handler saw, and the decisions (acks, drops) Run carried
// out, and lets a test wait for a count.
type recorder struct {
	mu      sync.Mutex
	got     map[string][]delivered
	settled map[Decision]map[string]int
	changed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{got: map[string][]delivered{}, settled: map[Decision]map[string]int{}, changed: make(chan struct{}, 1)}
}

// settle is an Options.Settled that counts the decisions handed to the link without an error.
func (r *recorder) settle(m Message, d Decision, err error) {
	if err != nil {
		return
	}
	r.mu.Lock()
	if r.settled[d] == nil {
		r.settled[d] = map[string]int{}
	}
	r.settled[d][m.ID]++
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// waitAcked waits until every id was acknowledged.
func (r *recorder) waitAcked(t *testing.T, ids []string) {
	t.Helper()
	r.waitSettled(t, Ack, ids)
}

// waitSettled waits until each of ids was settled with decision d (handed to the link).
func (r *recorder) waitSettled(t *testing.T, d Decision, ids []string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		missing := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return r.settled[d][id] > 0 })
		r.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("not settled (%v) after %v: %v", d, waitLimit, missing)
		}
	}
}

func (r *recorder) record(m Message) {
	r.mu.Lock()
	r.got[m.ID] = append(r.got[m.ID], delivered{Message: m, at: time.Now()})
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// acking is a handler that records and acknowledges every message.
func (r *recorder) acking(_ context.Context, m Message) Decision {
	r.record(m)
	return Ack
}

// deliveries returns the deliveries of id so far.
func (r *recorder) deliveries(id string) []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[id])
}

// total counts every delivery.
func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, d := range r.got {
		n += len(d)
	}
	return n
}

// waitDeliveries waits until id was delivered at least n times and returns its deliveries.
func (r *recorder) waitDeliveries(t *testing.T, id string, n int) []delivered {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		if d := r.deliveries(id); len(d) >= n {
			return d
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("message %s delivered %d times after %v, want %d", id, len(r.deliveries(id)), waitLimit, n)
		}
	}
}

// waitAll waits until every id was delivered at least once.
func (r *recorder) waitAll(t *testing.T, ids []string) {
	t.Helper()
	for _, id := range ids {
		r.waitDeliveries(t, id, 1)
	}
}

// blocker is a handler that blocks on the first delivery of one message until released (or
// Run's context ends), then acknowledges it; it records every delivery.
type blocker struct {
	*recorder
	id       string
	entered  chan struct{}
	release  chan struct{}
	seenOnce sync.Once
}

func newBlocker(id string) *blocker {
	return &blocker{recorder: newRecorder(), id: id, entered: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocker) handle(ctx context.Context, m Message) Decision {
	b.record(m)
	first := false
	if m.ID == b.id {
		b.seenOnce.Do(func() { first = true })
	}
	if first {
		close(b.entered)
		select {
		case <-b.release:
		case <-ctx.Done():
		}
	}
	return Ack
}

func (b *blocker) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-b.entered:
	case <-time.After(waitLimit):
		t.Fatalf("the handler was not called for %s after %v", b.id, waitLimit)
	}
}
