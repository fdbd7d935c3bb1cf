package reference

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// apiScopeBehaviours: authentication, scope, observers, time and the downstream call.
func apiScopeBehaviours() []apiBehaviour {
	return []apiBehaviour{
		{"Unauthorized401NeverReplays", apiOpts{}, abUnauthorized},
		{"TenantScope", apiOpts{}, abTenantScope},
		{"PathScope", apiOpts{}, abPathScope},
		{"CountPerTenant", apiOpts{}, abCount},
		{"RetentionMakesKeyNew", apiOpts{}, abRetention},
		{"LockTakeoverFencesStaleAttempt", apiOpts{downstream: true}, abTakeover},
		{"DownstreamKeyPerOperation", apiOpts{downstream: true}, abDownstreamKeys},
		{"Downstream5xxStored502", apiOpts{downstream: true}, abDownstream5xx},
		{"DownstreamTimeoutStored502", apiOpts{downstream: true, downstreamTimeout: 150 * time.Millisecond}, abDownstreamTimeout},
		{"IDsUnique", apiOpts{}, abIDsUnique},
	}
}

func abUnauthorized(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-auth", 1250, "EUR")
	first := h.post(ordersPath, "alice", "auth-1", body)
	stored := wantNew(t, first)
	for _, auth := range []string{"", "Bearer mallory", "Bearer ", "Bearer", "alice", "Basic YWxpY2U6", "Bearer alice2"} {
		req := h.newPost(ordersPath, "", "auth-1", body)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		r := h.do(req)
		wantStatus(t, r, http.StatusUnauthorized)
		if bytes.Contains(r.body, []byte(stored.ID)) {
			t.Fatalf("Authorization %q received the stored response: %s", auth, r)
		}
	}
	// A 401 is not stored: the key is still new for the real tenant.
	wantStatus(t, h.post(ordersPath, "mallory", "auth-2", body), http.StatusUnauthorized)
	wantStatus(t, h.post(ordersPath, "", "auth-2", body), http.StatusUnauthorized)
	wantNew(t, h.post(ordersPath, "alice", "auth-2", body))
	// Authentication comes before validation: no 400 tells a stranger anything.
	wantStatus(t, h.post(ordersPath, "", noKey, "{"), http.StatusUnauthorized)
	req, err := http.NewRequest(http.MethodGet, h.url+ordersPath+"?ref=ref-auth", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h.do(req), http.StatusUnauthorized)
	wantReplay(t, h.post(ordersPath, "alice", "auth-1", body), first)
	h.wantCount("alice", ordersPath, "ref-auth", 2)
}

func abTenantScope(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-tenant", 1250, "EUR")
	a := h.post(ordersPath, "alice", "shared-key", body)
	b := h.post(ordersPath, "bob", "shared-key", body)
	if wantNew(t, a).ID == wantNew(t, b).ID {
		t.Fatalf("alice and bob got the same order %s", a.body)
	}
	wantReplay(t, h.post(ordersPath, "alice", "shared-key", body), a)
	wantReplay(t, h.post(ordersPath, "bob", "shared-key", body), b)
	// bob's key is his own: a different payload is a mismatch against his record only.
	wantStatus(t, h.post(ordersPath, "bob", "shared-key", orderJSON("ref-tenant", 1, "EUR")), http.StatusUnprocessableEntity)
	c := h.post(ordersPath, "bob", "bob-only", orderJSON("ref-tenant", 1, "EUR"))
	wantNew(t, c)
	wantNew(t, h.post(ordersPath, "alice", "bob-only", orderJSON("ref-tenant", 2, "EUR")))
	h.wantCount("alice", ordersPath, "ref-tenant", 2)
	h.wantCount("bob", ordersPath, "ref-tenant", 2)
}

func abPathScope(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-path", 1250, "EUR")
	o := h.post(ordersPath, "alice", "path-key", body)
	r := h.post(refundsPath, "alice", "path-key", body)
	if !strings.HasPrefix(wantNew(t, o).ID, "ord_") || !strings.HasPrefix(wantNew(t, r).ID, "rfd_") {
		t.Fatalf("orders %s / refunds %s: want an order and a refund", o.body, r.body)
	}
	wantReplay(t, h.post(ordersPath, "alice", "path-key", body), o)
	wantReplay(t, h.post(refundsPath, "alice", "path-key", body), r)
	wantStatus(t, h.post(refundsPath, "alice", "path-key", orderJSON("ref-path", 1, "EUR")), http.StatusUnprocessableEntity)
	h.wantCount("alice", ordersPath, "ref-path", 1)
	h.wantCount("alice", refundsPath, "ref-path", 1)
}

func abCount(t *testing.T, h *apiHarness) {
	var ids []string
	for i, c := range []struct{ tenant, path, ref string }{
		{"alice", ordersPath, "X"}, {"alice", ordersPath, "X"}, {"bob", ordersPath, "X"},
		{"alice", refundsPath, "X"}, {"alice", ordersPath, "Y"}, {"alice", ordersPath, "X"},
	} {
		o := wantNew(t, h.post(c.path, c.tenant, fmt.Sprintf("count-%d", i), orderJSON(c.ref, int64(i+1), "EUR")))
		ids = append(ids, o.ID)
		h.clock.Advance(time.Second) // records list oldest first
	}
	l := h.list("alice", ordersPath, "X")
	if l.Count != 3 || l.Items[0].ID != ids[0] || l.Items[1].ID != ids[1] || l.Items[2].ID != ids[5] {
		t.Fatalf("alice's orders X = %+v, want %s, %s, %s", l, ids[0], ids[1], ids[5])
	}
	if it := l.Items[1]; it.Object != "order" || it.Ref != "X" || it.Amount != 2 || it.Currency != "EUR" {
		t.Fatalf("listed item %+v lacks the stored fields", it)
	}
	h.wantCount("bob", ordersPath, "X", 1)
	h.wantCount("alice", refundsPath, "X", 1)
	h.wantCount("bob", refundsPath, "X", 0)
	h.wantCount("alice", ordersPath, "Y", 1)
	req, err := http.NewRequest(http.MethodGet, h.url+ordersPath+"?ref=Z", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer alice")
	if r := h.do(req); r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"items":[]`)) {
		t.Fatalf("empty listing = %s, want count 0 and items []", r)
	}
	req.URL.RawQuery = ""
	wantStatus(t, h.do(req), http.StatusBadRequest)
}

func abRetention(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-ret", 1250, "EUR")
	first := h.post(ordersPath, "alice", "ret-1", body)
	wantNew(t, first)
	h.clock.Advance(apiRetention - time.Second)
	wantReplay(t, h.post(ordersPath, "alice", "ret-1", body), first)
	wantStatus(t, h.post(ordersPath, "alice", "ret-1", orderJSON("ref-ret", 1, "EUR")), http.StatusUnprocessableEntity)
	h.clock.Advance(time.Second) // exactly one retention after the first request: expired
	second := h.post(ordersPath, "alice", "ret-1", body)
	if wantNew(t, second).ID == decodeOrder(t, first).ID {
		t.Fatalf("the expired key replayed the first order %s", first.body)
	}
	wantReplay(t, h.post(ordersPath, "alice", "ret-1", body), second)
	h.wantCount("alice", ordersPath, "ref-ret", 2)
	// After another retention the key is free for any payload.
	h.clock.Advance(apiRetention + time.Minute)
	wantNew(t, h.post(ordersPath, "alice", "ret-1", orderJSON("ref-ret", 3, "EUR")))
	h.wantCount("alice", ordersPath, "ref-ret", 3)
}

func abTakeover(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-take", 1250, "EUR")
	h.down.holdNext(1)
	stale := h.postAsync(ordersPath, "alice", "take-1", body) // attempt 1 hangs downstream
	h.down.waitHeld(t)
	h.clock.Advance(apiLockTimeout - time.Second)
	wantStatus(t, h.post(ordersPath, "alice", "take-1", body), http.StatusConflict)
	h.clock.Advance(2 * time.Second) // past the lock timeout
	retry := h.post(ordersPath, "alice", "take-1", body)
	won := wantNew(t, retry)
	h.wantCount("alice", ordersPath, "ref-take", 1)
	h.down.releaseAll()
	late := h.await(stale) // attempt 1 wakes up, fenced
	wantStatus(t, late, http.StatusConflict)
	if bytes.Contains(late.body, []byte("ord_")) {
		t.Fatalf("the fenced attempt answered with an order: %s", late)
	}
	l := h.list("alice", ordersPath, "ref-take")
	if l.Count != 1 || l.Items[0].ID != won.ID {
		t.Fatalf("records after the fenced attempt = %+v, want only %s", l, won.ID)
	}
	wantReplay(t, h.post(ordersPath, "alice", "take-1", body), retry)
	if calls := h.down.calls(); len(calls) != 2 || calls[0] != calls[1] || calls[0] == "" {
		t.Fatalf("downstream keys of the two attempts = %q, want two equal keys", calls)
	}
}

func abDownstreamKeys(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-down", 1250, "EUR")
	first := h.post(ordersPath, "alice", "down-1", body)
	wantNew(t, first)
	wantReplay(t, h.post(ordersPath, "alice", "down-1", body), first) // no second charge
	wantNew(t, h.post(ordersPath, "alice", "down-2", body))
	wantNew(t, h.post(ordersPath, "bob", "down-1", body))
	wantNew(t, h.post(refundsPath, "alice", "down-1", body))
	calls := h.down.calls()
	if len(calls) != 4 {
		t.Fatalf("downstream got %d calls %q, want 4 (a replay makes none)", len(calls), calls)
	}
	seen := map[string]bool{}
	for _, k := range calls {
		if k == "" || seen[k] {
			t.Fatalf("downstream keys %q: want 4 distinct non-empty keys (one per operation)", calls)
		}
		seen[k] = true
		if strings.Contains(k, "down-1") || strings.Contains(k, "alice") {
			t.Fatalf("downstream key %q exposes the client's key or tenant", k)
		}
	}
}

func abDownstream5xx(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-5xx", 1250, "EUR")
	h.down.setStatus(http.StatusServiceUnavailable)
	first := h.post(ordersPath, "alice", "err-1", body)
	wantStatus(t, first, http.StatusBadGateway)
	if first.replayed() {
		t.Fatalf("first 502 is marked as a replay")
	}
	h.down.setStatus(http.StatusOK) // the provider recovered; the stored 502 still stands
	for range 2 {
		wantReplay(t, h.post(ordersPath, "alice", "err-1", body), first)
	}
	if calls := h.down.calls(); len(calls) != 1 {
		t.Fatalf("downstream got %d calls, want 1 (the 502 is replayed)", len(calls))
	}
	wantStatus(t, h.post(ordersPath, "alice", "err-1", orderJSON("ref-5xx", 1, "EUR")), http.StatusUnprocessableEntity)
	h.wantCount("alice", ordersPath, "ref-5xx", 0)
	wantNew(t, h.post(ordersPath, "alice", "err-2", body)) // a new key goes through
	h.wantCount("alice", ordersPath, "ref-5xx", 1)
}

func abDownstreamTimeout(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-slow", 1250, "EUR")
	h.down.holdNext(1)
	first := h.post(ordersPath, "alice", "slow-1", body) // times out after 150ms
	wantStatus(t, first, http.StatusBadGateway)
	h.down.releaseAll()
	wantReplay(t, h.post(ordersPath, "alice", "slow-1", body), first)
	if calls := h.down.calls(); len(calls) != 1 {
		t.Fatalf("downstream got %d calls, want 1", len(calls))
	}
	h.wantCount("alice", ordersPath, "ref-slow", 0)
}

func abIDsUnique(t *testing.T, h *apiHarness) {
	var ids []string
	for _, tenant := range []string{"alice", "bob"} {
		for _, path := range []string{ordersPath, refundsPath} {
			for i := range 5 {
				o := wantNew(t, h.post(path, tenant, fmt.Sprintf("uniq-%d", i), orderJSON("ref-uniq", 10, "EUR")))
				ids = append(ids, o.ID)
			}
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatalf("ids are not unique: %q", ids)
	}
}
