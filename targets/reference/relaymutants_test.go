package reference

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// The scenarios of the mutants that lose or duplicate an event where the broker fails, and the
// hold before publish of the test hooks.

func showDualWrite(t *testing.T, h *apiHarness) (bool, string) {
	h.events.fail(true) // the broker is out of reach when the order commits
	wantNew(t, h.post(ordersPath, "alice", "dw", orderJSON("ref-dw", 1250, "EUR")))
	h.events.fail(false)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-dw")
	return len(ids) == 0, fmt.Sprintf("an order committed while the broker was away published %v once it was back", ids)
}

func showRelayNewID(t *testing.T, h *apiHarness) (bool, string) {
	wantNew(t, h.post(ordersPath, "alice", "nid", orderJSON("ref-nid", 1250, "EUR")))
	h.events.loseConfirms(true)
	if _, err := h.relayEvents(); err == nil {
		t.Fatal("a publication whose confirm was lost succeeded")
	}
	h.events.loseConfirms(false)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-nid")
	return len(slices.Compact(slices.Sorted(slices.Values(ids)))) > 1, fmt.Sprintf("a publication whose confirm was lost, then its retry: ids %v", ids)
}

func showRelayMarksOnError(t *testing.T, h *apiHarness) (bool, string) {
	wantNew(t, h.post(ordersPath, "alice", "moe", orderJSON("ref-moe", 1250, "EUR")))
	h.events.fail(true)
	if _, err := h.relayEvents(); err == nil {
		t.Fatal("a publication to a broker away succeeded")
	}
	h.events.fail(false)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-moe")
	return len(ids) == 0, fmt.Sprintf("a publication that failed, then the relay again: %v published", ids)
}

// The hold before publish holds the relay's publication of a committed order (GET counts it)
// until released, then the event is published; without hooks the path is not served.
func TestHoldPublishHook(t *testing.T) {
	h := newAPIHarness(t, "memory", apiOpts{events: true, hooks: true})
	hook := func(method string) apiResp {
		req, _ := http.NewRequest(method, h.url+HoldPublishPath, nil)
		return h.do(req)
	}
	if r := hook(http.MethodGet); r.status != http.StatusOK || string(r.body) != `{"held":0,"holding":false}` {
		t.Fatalf("GET before: %s", r)
	}
	if r := hook(http.MethodPost); r.status != http.StatusNoContent {
		t.Fatalf("POST: %s", r)
	}
	wantNew(t, h.post(ordersPath, "alice", "hold-1", orderJSON("ref-hold", 1250, "EUR")))
	done := make(chan error, 1)
	go func() { _, err := h.relayEvents(); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for string(hook(http.MethodGet).body) != `{"held":1,"holding":true}` {
		if time.Now().After(deadline) {
			t.Fatalf("the relay's publication was never held: %s", hook(http.MethodGet))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ids := h.events.idsFor("ref-hold"); len(ids) != 0 {
		t.Fatalf("published while held: %v", ids)
	}
	if r := hook(http.MethodDelete); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %s", r)
	}
	if err := <-done; err != nil {
		t.Fatalf("relay after the release: %v", err)
	}
	if ids := h.events.idsFor("ref-hold"); len(ids) != 1 {
		t.Errorf("events after the release %v, want one", ids)
	}
	if r := hook(http.MethodGet); string(r.body) != `{"held":0,"holding":false}` {
		t.Errorf("GET after: %s", r)
	}
	plain := newAPIHarness(t, "memory", apiOpts{events: true})
	req, _ := http.NewRequest(http.MethodPost, plain.url+HoldPublishPath, nil)
	if r := plain.do(req); r.status == http.StatusNoContent {
		t.Errorf("without hooks POST %s = %s", HoldPublishPath, r)
	}
}

// A hold ends with the context of the publication held (the process's end).
func TestPublishHoldEndsWithItsContext(t *testing.T) {
	var h publishHold
	if err := h.wait(context.Background()); err != nil {
		t.Fatalf("a hold not armed held: %v", err)
	}
	h.arm()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := h.wait(ctx); err == nil {
		t.Error("an armed hold let a publication through")
	}
	if held, holding := h.state(); held != 0 || !holding {
		t.Errorf("after the held publication ended: held %d, holding %v", held, holding)
	}
	var none *publishHold
	if err := none.wait(ctx); err != nil {
		t.Errorf("a nil hold held: %v", err)
	}
}
