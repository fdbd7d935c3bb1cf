package reference

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The scenarios and further tests of the four mutants of the shaped reference API. The two
// that misbehave after a handler error run with the test hooks and no downstream (the fail
// hook is the handler error), as the example file reference-hooks.yaml does.

func showFingerprintIgnoresField(t *testing.T, h *apiHarness) (bool, string) {
	first := h.post(ordersPath, "alice", "ignored", orderJSON("ref-ignored", 1250, "EUR"))
	wantNew(t, first)
	// Another amount is still a mismatch: only the ignored field goes unnoticed.
	wantStatus(t, h.post(ordersPath, "alice", "ignored", orderJSON("ref-ignored", 9999, "EUR")), http.StatusUnprocessableEntity)
	r := h.post(ordersPath, "alice", "ignored", orderJSON("ref-ignored", 1250, "USD"))
	return r.status == http.StatusCreated && bytes.Equal(r.body, first.body), "another currency: " + r.String()
}

func showForgetsEarly(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-early-forget", 1250, "EUR")
	first := h.post(ordersPath, "alice", "early-forget", body)
	wantNew(t, first)
	h.clock.Advance(2 * time.Second) // far within the declared hour
	r := h.post(ordersPath, "alice", "early-forget", body)
	n := h.count("alice", ordersPath, "ref-early-forget")
	return !r.replayed() || n != 1, fmt.Sprintf("retry after 2s: %s; %d records", r, n)
}

func showStuckAfterError(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-stuck-err", 1250, "EUR")
	h.wantFailNext("")
	wantError(t, h.post(ordersPath, "alice", "stuck-err", body), http.StatusInternalServerError, false)
	h.clock.Advance(10 * apiLockTimeout) // no lock could still be held
	r := h.post(ordersPath, "alice", "stuck-err", body)
	n := h.count("alice", ordersPath, "ref-stuck-err")
	return r.status == http.StatusConflict, fmt.Sprintf("retry after ten lock timeouts: %s; %d records", r, n)
}

func showErrorReplayDiffers(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-err-differs", 1250, "EUR")
	h.wantFailNext(`{"status": 503}`)
	first := h.post(ordersPath, "alice", "err-differs", body)
	wantError(t, first, http.StatusServiceUnavailable, false)
	r := h.post(ordersPath, "alice", "err-differs", body)
	wantError(t, r, http.StatusServiceUnavailable, true) // the status stays the same
	return !bytes.Equal(r.body, first.body), fmt.Sprintf("first %s; retry %s", first, r)
}

// TestStuckAfterErrorDownstream: a failed downstream call is a handler error too; the
// mutant leaves its key in progress, the correct API replays the stored 502.
func TestStuckAfterErrorDownstream(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		for _, m := range []Mutant{MutantStuckAfterError, MutantNone} {
			t.Run(store+"/"+string(m), func(t *testing.T) {
				h := newAPIHarness(t, store, apiOpts{mutant: m, downstream: true})
				body := orderJSON("ref-stuck-down", 1250, "EUR")
				h.down.setStatus(http.StatusInternalServerError)
				first := h.post(ordersPath, "alice", "stuck-down", body)
				wantError(t, first, http.StatusBadGateway, false)
				h.down.setStatus(http.StatusOK)
				h.clock.Advance(10 * apiLockTimeout)
				r := h.post(ordersPath, "alice", "stuck-down", body)
				if m == MutantNone {
					wantReplay(t, r, first)
					return
				}
				wantStatus(t, r, http.StatusConflict)
				if r.header.Get("Retry-After") == "" || r.replayed() {
					t.Fatalf("stuck retry %s: want the in-flight answer (Retry-After, not a replay)", r)
				}
				if calls := h.down.calls(); len(calls) != 1 {
					t.Fatalf("downstream got %d calls, want 1 (the key is stuck, not retried)", len(calls))
				}
			})
		}
	}
}

// TestForgetsEarlyRetention: the effective retention is one second whatever is declared
// (never longer than a shorter declared one), and the prune loop follows it.
func TestForgetsEarlyRetention(t *testing.T) {
	for _, c := range []struct{ declared, want time.Duration }{
		{24 * time.Hour, time.Second}, {0, time.Second}, {-time.Hour, time.Second},
		{time.Second, time.Second}, {500 * time.Millisecond, 500 * time.Millisecond},
	} {
		a, err := NewAPI(Config{Store: NewMemoryStore(), Tenants: []string{"alice"}, Mutant: MutantForgetsEarly, Retention: c.declared})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.retention(); got != c.want {
			t.Errorf("forgets-early with --retention %v: effective %v, want %v", c.declared, got, c.want)
		}
	}
}

// TestForgetsEarlyPrune: the prune loop deletes a forgets-early key within moments of its
// two-second margin, not after the declared day.
func TestForgetsEarlyPrune(t *testing.T) {
	clock := &fakeClock{now: apiBase}
	store := NewMemoryStore()
	a, err := NewAPI(Config{Store: store, Tenants: []string{"alice"}, Mutant: MutantForgetsEarly,
		Retention: 24 * time.Hour, LockTimeout: apiLockTimeout, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, ordersPath, strings.NewReader(orderJSON("ref-prune", 1, "EUR")))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Idempotency-Key", "prune-early")
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.PruneLoop(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	scope := scopeID("alice", http.MethodPost, ordersPath, "prune-early")
	clock.Advance(3 * time.Second) // past the prune margin of two effective retentions
	deadline := time.Now().Add(10 * time.Second)
	for {
		row, err := store.Lookup(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if row == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the prune loop kept a forgets-early key 3s after its creation for 10s")
		}
		time.Sleep(20 * time.Millisecond) // polling: the loop ticks every 250ms
	}
}
