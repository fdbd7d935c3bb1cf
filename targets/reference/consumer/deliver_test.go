package consumer

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/faults"
)

// newTestConsumer is a consumer on store calling sink, without a work delay.
func newTestConsumer(t *testing.T, store Store, sink *faults.Sink, clock *fakeClock) *Consumer {
	t.Helper()
	cfg := Config{Store: store, WorkDelay: -1, Now: clock.Now}
	if sink != nil {
		cfg.Downstream = sink.URL()
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newTestSink(t *testing.T) *faults.Sink {
	t.Helper()
	sink, err := faults.NewSink("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	return sink
}

// TestDeliverOutcomes checks what a queue transport is told, and the id it keys on.
func TestDeliverOutcomes(t *testing.T) {
	ctx := context.Background()
	store, sink := NewMemoryStore(), newTestSink(t)
	c := newTestConsumer(t, store, sink, newFakeClock())
	// The transport's message id wins over the body's, and the body may have none.
	for _, d := range []Delivery{
		{ID: "msg_1", Body: []byte(`{"object":"obj_1","version":1}`)},
		{ID: "msg_1", Body: event("evt_other", "obj_1", 1)},
	} {
		o := c.Deliver(ctx, d)
		if o.Event != "msg_1" || o.Text == "" {
			t.Errorf("Deliver(%s) = %+v, want event msg_1 with a text", d.Body, o)
		}
	}
	if list, _ := store.Effects(ctx, EffectFilter{Event: "msg_1"}); len(list) != 1 {
		t.Errorf("effects of msg_1 = %+v, want one", list)
	}
	sink.FailNext(1, http.StatusInternalServerError)
	for _, c := range []struct {
		o           Outcome
		kind        OutcomeKind
		ack, retry  bool
		downstreamE bool
	}{
		{c.Deliver(ctx, Delivery{Body: event("evt_2", "obj_1", 2)}), Failed, false, true, true},
		{c.Deliver(ctx, Delivery{Body: event("evt_2", "obj_1", 2)}), Processed, true, false, false},
		{c.Deliver(ctx, Delivery{Body: event("evt_2", "obj_1", 2)}), Duplicate, true, false, false},
		{c.Deliver(ctx, Delivery{Body: []byte(`{"id":"evt_3"}`)}), Rejected, false, false, false},
	} {
		if c.o.Kind != c.kind || c.o.Ack() != c.ack || c.o.Retry() != c.retry || errors.Is(c.o.Err, ErrDownstream) != c.downstreamE {
			t.Errorf("outcome %+v (%v), want %v ack=%v retry=%v downstream error=%v", c.o, c.o.Kind, c.kind, c.ack, c.retry, c.downstreamE)
		}
	}
}

// TestDeliverInFlight: a second delivery while the first is held in the downstream is
// told to retry, and does not take effect.
func TestDeliverInFlight(t *testing.T) {
	store, sink := NewMemoryStore(), newTestSink(t)
	c := newTestConsumer(t, store, sink, newFakeClock())
	body := event("evt_if", "obj_1", 1)
	sink.Hold()
	first := make(chan Outcome, 1)
	go func() { first <- c.Deliver(context.Background(), Delivery{Body: body}) }()
	waitHeld(t, sink)
	if o := c.Deliver(context.Background(), Delivery{Body: body}); o.Kind != InFlight || !o.Retry() {
		t.Errorf("concurrent delivery = %+v, want in-flight", o)
	}
	sink.Release()
	if o := <-first; o.Kind != Processed {
		t.Errorf("first delivery = %+v, want processed", o)
	}
}

// TestWorkSurvivesCancellation: once claimed, an event takes effect even if the caller's
// context ends (an HTTP client that hangs up).
func TestWorkSurvivesCancellation(t *testing.T) {
	store, sink := NewMemoryStore(), newTestSink(t)
	c := newTestConsumer(t, store, sink, newFakeClock())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome, 1)
	sink.Hold()
	go func() { done <- c.Deliver(ctx, Delivery{Body: event("evt_c", "obj_1", 1)}) }()
	waitHeld(t, sink)
	cancel()
	sink.Release()
	if o := <-done; o.Kind != Processed {
		t.Errorf("cancelled delivery = %+v, want processed", o)
	}
	if list, _ := store.Effects(context.Background(), EffectFilter{Event: "evt_c"}); len(list) != 1 {
		t.Errorf("effects = %+v, want one", list)
	}
}

// TestStoreFailureIs503: a store error is not a downstream failure.
func TestStoreFailureIs503(t *testing.T) {
	r := newRig(t, newBackend(t, "sqlite"), rigOpts{})
	r.store.Close()
	a := r.deliver(event("evt_s", "obj_1", 1))
	if a.status != http.StatusServiceUnavailable || a.str("detail") != "store error" {
		t.Errorf("delivery on a closed store = %d %v, want 503 store error", a.status, a.body)
	}
}

// TestPruneOnce deletes records older than twice the effective retention.
func TestPruneOnce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		mutant Mutant
		want   int
	}{{MutantNone, 0}, {MutantDedupeForgetsEarly, 1}} {
		store, clock := NewMemoryStore(), newFakeClock()
		cons, err := New(Config{Store: store, Mutant: c.mutant, WorkDelay: -1, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		cons.Deliver(ctx, Delivery{Body: event("evt_p", "obj_1", 1)})
		clock.Advance(3 * time.Second)
		if n, err := cons.PruneOnce(ctx); n != c.want || err != nil {
			t.Errorf("%s: PruneOnce = %d, %v; want %d", c.mutant.orCorrect(), n, err, c.want)
		}
	}
}

func waitHeld(t *testing.T, sink *faults.Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := sink.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
}
