package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/webhook"
)

// capturePublisher is an EventPublisher that keeps what it is given (and fails while failing is
// set, taking nothing).
type capturePublisher struct {
	mu      sync.Mutex
	failing bool
	losing  bool // takes each publication, then fails it: its confirm was lost
	got     []publishedEvent
}

// publishedEvent is one publication the capturePublisher took.
type publishedEvent struct {
	id      string
	payload map[string]any
}

func (p *capturePublisher) Publish(_ context.Context, e OutboxEvent, payload []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing {
		return errors.New("the broker is away")
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return err
	}
	p.got = append(p.got, publishedEvent{e.ID, m})
	if p.losing {
		return errors.New("the broker took it and its confirm was lost")
	}
	return nil
}

// loseConfirms makes the publisher take each publication and fail it (on), or confirm it.
func (p *capturePublisher) loseConfirms(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.losing = on
}

func (p *capturePublisher) Close() error { return nil }

func (p *capturePublisher) fail(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = on
}

// idsFor are the ids of the events published about ref, in order, one per publication.
func (p *capturePublisher) idsFor(ref string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.got {
		if data, ok := e.payload["data"].(map[string]any); ok && data["ref"] == ref {
			out = append(out, e.id)
		}
	}
	return out
}

// relayEvents runs the relay until nothing is pending (or a publication fails) and returns how
// many it published.
func (h *apiHarness) relayEvents() (int, error) {
	h.t.Helper()
	total := 0
	for {
		n, err := h.api.relay.pass(context.Background())
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// A new order's event is published once the relay runs, under its id, with the order as POST
// answered it; a refund, a replay, a mismatch and a failure publish nothing; a publication that
// fails leaves the event pending, and the next pass publishes it under the same id. On every
// store.
func TestOrdersPublishTheirEvent(t *testing.T) {
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			h := newAPIHarness(t, store, apiOpts{events: true, hooks: true})
			created := h.post(ordersPath, "alice", "ev-1", orderJSON("ref-ev-1", 1250, "EUR"))
			wantNew(t, created)
			h.post(ordersPath, "alice", "ev-1", orderJSON("ref-ev-1", 1250, "EUR"))
			h.post(ordersPath, "alice", "ev-1", orderJSON("ref-ev-1", 999, "EUR"))
			h.post(refundsPath, "alice", "ev-r", orderJSON("ref-ev-r", 1250, "EUR"))
			h.wantFailNext("")
			h.post(ordersPath, "alice", "ev-f", orderJSON("ref-ev-f", 1250, "EUR"))
			h.events.fail(true)
			if n, err := h.relayEvents(); n != 0 || err == nil {
				t.Fatalf("relay with the broker away: %d published, %v", n, err)
			}
			h.events.fail(false)
			if n, err := h.relayEvents(); n != 1 || err != nil {
				t.Fatalf("relay: %d published, %v; want 1", n, err)
			}
			if n, err := h.relayEvents(); n != 0 || err != nil {
				t.Fatalf("a second relay: %d published, %v; want none (marked sent)", n, err)
			}
			ids := h.events.idsFor("ref-ev-1")
			if len(ids) != 1 || len(h.events.idsFor("ref-ev-r")) != 0 || len(h.events.idsFor("ref-ev-f")) != 0 {
				t.Fatalf("events: order %v, refund %v, failed %v; want one for the order", ids, h.events.idsFor("ref-ev-r"), h.events.idsFor("ref-ev-f"))
			}
			e := h.events.got[0].payload
			var order map[string]any
			_ = json.Unmarshal(created.body, &order)
			if e["type"] != EventOrderCreated || e["tenant"] != "alice" || fmt.Sprint(e["data"]) != fmt.Sprint(order) || e["sent_at"] == "" ||
				e["object"] != order["id"] || e["version"] != float64(1) {
				t.Errorf("event %v, want order.created of alice with the order %v, about object %v at version 1", e, order, order["id"])
			}
		})
	}
}

// The relay that runs in the background publishes a committed event at once (the commit wakes
// it), and the API refuses an events mutant without events to publish.
func TestRelayLoopPublishesAfterTheCommit(t *testing.T) {
	h := newAPIHarness(t, "memory", apiOpts{events: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.api.RelayLoop(ctx) }()
	defer func() { cancel(); <-done }()
	wantNew(t, h.post(ordersPath, "alice", "loop-1", orderJSON("ref-loop", 1250, "EUR")))
	deadline := time.Now().Add(5 * time.Second)
	for len(h.events.idsFor("ref-loop")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if ids := h.events.idsFor("ref-loop"); len(ids) != 1 {
		t.Fatalf("events %v, want one", ids)
	}
	if _, err := NewAPI(Config{Store: NewMemoryStore(), Tenants: []string{"a"}, Mutant: MutantReplayRepublishes}); err == nil {
		t.Error("an events mutant without events was accepted")
	}
}

// The webhook publisher POSTs the payload with the event's id and type, and only a 2xx confirms.
func TestWebhookPublisher(t *testing.T) {
	var mu sync.Mutex
	status := http.StatusNoContent
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Header.Get("Event-Id")+" "+r.Header.Get("Event-Type")+" "+r.Header.Get("Content-Type"))
		w.WriteHeader(status)
	}))
	defer srv.Close()
	pub, err := OpenEventPublisher(EventsTarget{Transport: EventsWebhook, URL: srv.URL + "/events"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	e := OutboxEvent{ID: "evt_1", Type: EventOrderCreated, Data: []byte(`{}`)}
	if err := pub.Publish(context.Background(), e, e.Payload(time.Now())); err != nil {
		t.Errorf("publish: %v", err)
	}
	mu.Lock()
	status = http.StatusServiceUnavailable
	mu.Unlock()
	if err := pub.Publish(context.Background(), e, e.Payload(time.Now())); err == nil {
		t.Error("a 503 confirmed the event")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"evt_1 order.created application/json", "evt_1 order.created application/json"}; !slices.Equal(got, want) {
		t.Errorf("deliveries %q, want %q", got, want)
	}
	for _, bad := range []EventsTarget{{Transport: EventsWebhook, URL: "ftp://x"}, {Transport: EventsAMQP}, {Transport: EventsNATS}, {Transport: "kafka"}} {
		if _, err := OpenEventPublisher(bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

// A signing webhook publisher signs each delivery the Standard Webhooks way, the event's id in
// webhook-id: a consumer with the same secret verifies it, one with another secret does not.
func TestWebhookPublisherSigns(t *testing.T) {
	signer, err := webhook.New(webhook.Config{Scheme: webhook.SchemeStandard, Secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := webhook.New(webhook.Config{Scheme: webhook.SchemeStandard, Secret: "whsec_b3RoZXItb3RoZXItb3RoZXI="})
	var verified, foreign error
	var id string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id = r.Header.Get("Webhook-Id")
		verified, foreign = signer.Verify(r.Header, body, time.Now()), other.Verify(r.Header, body, time.Now())
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	pub, err := OpenEventPublisher(EventsTarget{Transport: EventsWebhook, URL: srv.URL, WebhookSigner: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	e := OutboxEvent{ID: "evt_2", Type: EventOrderCreated, Data: []byte(`{}`)}
	if err := pub.Publish(context.Background(), e, e.Payload(time.Now())); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if id != e.ID || verified != nil || !errors.Is(foreign, webhook.ErrBadSignature) {
		t.Errorf("webhook-id %q (want %q), verified: %v, with another secret: %v (want %v)", id, e.ID, verified, foreign, webhook.ErrBadSignature)
	}
}
