package reference

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// hookBehaviours are the HTTP-level behaviours of the test hooks, run on every store by
// TestShapeBehaviours.
func hookBehaviours() []apiBehaviour {
	hooked := apiOpts{hooks: true}
	return []apiBehaviour{
		{"FailHookStoredAndReplayed", hooked, abFailHook},
		{"FailHookStatus", hooked, abFailHookStatus},
		{"FailHookOnePending", hooked, abFailHookOnePending},
		{"FailHookOnlyClaimsConsume", hooked, abFailHookOnlyClaims},
		{"FailHookBadBodies", hooked, abFailHookBadBodies},
		{"FailHookNoErrorCacheReleases", apiOpts{hooks: true, mutant: MutantNoErrorCache}, abFailHookNoErrorCache},
		{"HooksOff", apiOpts{}, abHooksOff},
		{"DelayHeaderBad400", hooked, abDelayBad},
	}
}

func abFailHook(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-fail", 1250, "EUR")
	h.wantFailNext("")
	first := h.post(ordersPath, "alice", "fail-1", body)
	wantError(t, first, http.StatusInternalServerError, false)
	wantDetail(t, first, FailPath)
	h.wantCount("alice", ordersPath, "ref-fail", 0)
	// The error result is stored and replayed byte for byte, as a downstream 5xx is.
	for range 2 {
		r := h.post(ordersPath, "alice", "fail-1", body)
		wantError(t, r, http.StatusInternalServerError, true)
		if !bytes.Equal(r.body, first.body) {
			t.Fatalf("replay %s, want %s", r, first)
		}
	}
	wantStatus(t, h.post(ordersPath, "alice", "fail-1", orderJSON("ref-fail", 1, "EUR")), http.StatusUnprocessableEntity)
	// The failure was consumed: the next key goes through.
	wantNew(t, h.post(ordersPath, "alice", "fail-2", body))
	h.wantCount("alice", ordersPath, "ref-fail", 1)
}

func abFailHookStatus(t *testing.T, h *apiHarness) {
	for i, c := range []struct {
		body string
		want int
	}{{`{"status": 503}`, 503}, {`{}`, 500}, {` {"status":599} `, 599}, {`{"status": null}`, 500}} {
		h.wantFailNext(c.body)
		key := "status-" + strconv.Itoa(i)
		first := h.post(refundsPath, "bob", key, orderJSON("ref-status", 1, "EUR"))
		wantError(t, first, c.want, false)
		wantError(t, h.post(refundsPath, "bob", key, orderJSON("ref-status", 1, "EUR")), c.want, true)
	}
	h.wantCount("bob", refundsPath, "ref-status", 0)
}

func abFailHookOnePending(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-pending", 1, "EUR")
	h.wantFailNext("")
	h.wantFailNext(`{"status": 502}`) // replaces the pending 500: still one failure
	wantError(t, h.post(ordersPath, "alice", "pending-1", body), http.StatusBadGateway, false)
	wantNew(t, h.post(ordersPath, "alice", "pending-2", body))
	h.wantCount("alice", ordersPath, "ref-pending", 1)
}

// abFailHookOnlyClaims: only an attempt that claims a key consumes the pending failure; a
// rejected request, a replay, a mismatch and a 409 do not.
func abFailHookOnlyClaims(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-claims", 1, "EUR")
	first := h.post(ordersPath, "alice", "claims-1", body)
	wantNew(t, first)
	h.wantFailNext("")
	wantStatus(t, h.post(ordersPath, "alice", noKey, body), http.StatusBadRequest)
	wantStatus(t, h.post(ordersPath, "", "claims-2", body), http.StatusUnauthorized)
	wantReplay(t, h.post(ordersPath, "alice", "claims-1", body), first)
	wantStatus(t, h.post(ordersPath, "alice", "claims-1", orderJSON("ref-claims", 2, "EUR")), http.StatusUnprocessableEntity)
	wantError(t, h.post(ordersPath, "alice", "claims-2", body), http.StatusInternalServerError, false)
	h.wantCount("alice", ordersPath, "ref-claims", 1)
}

func abFailHookBadBodies(t *testing.T, h *apiHarness) {
	for _, body := range []string{
		`{"status": 404}`, `{"status": 200}`, `{"status": 600}`, `{"status": "500"}`, `{"status": 500.5}`,
		`{"code": 500}`, `[]`, `{`, `{"status": 500} {}`,
	} {
		r := h.failNext(body)
		wantStatus(t, r, http.StatusBadRequest)
	}
	// None of them left a failure pending.
	wantNew(t, h.post(ordersPath, "alice", "bad-hook", orderJSON("ref-bad-hook", 1, "EUR")))
}

// abFailHookNoErrorCache: the injected failure takes the downstream failure's path, so the
// no-error-cache mutant releases it as it releases a downstream 5xx.
func abFailHookNoErrorCache(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-fail-release", 1, "EUR")
	h.wantFailNext("")
	wantError(t, h.post(ordersPath, "alice", "fail-release", body), http.StatusInternalServerError, false)
	wantNew(t, h.post(ordersPath, "alice", "fail-release", body))
}

// abHooksOff: without Config.Hooks the fail hook does not exist and X-Test-Delay is ignored.
func abHooksOff(t *testing.T, h *apiHarness) {
	for _, body := range []string{"", `{"status": 503}`} {
		if r := h.failNext(body); r.status != http.StatusNotFound {
			t.Fatalf("POST %s without hooks = %s, want 404", FailPath, r)
		}
	}
	req := h.newPost(ordersPath, "alice", "off-1", orderJSON("ref-off", 1, "EUR"))
	req.Header.Set(DelayHeader, "10000")
	start := time.Now()
	wantNew(t, h.do(req))
	if d := time.Since(start); d >= 10*time.Second {
		t.Fatalf("a POST with %s: 10000 took %v without hooks", DelayHeader, d)
	}
	req = h.newPost(ordersPath, "alice", "off-2", orderJSON("ref-off", 1, "EUR"))
	req.Header.Set(DelayHeader, "soon")
	wantNew(t, h.do(req))
	h.wantCount("alice", ordersPath, "ref-off", 2)
}

func abDelayBad(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-delay-bad", 1, "EUR")
	for _, v := range []string{"soon", "-1", "1.5", "{{.Ms}}", "1e3", "0x10"} {
		req := h.newPost(ordersPath, "alice", "delay-bad", body)
		req.Header.Set(DelayHeader, v)
		r := h.do(req)
		wantStatus(t, r, http.StatusBadRequest)
		wantDetail(t, r, DelayHeader)
	}
	h.wantCount("alice", ordersPath, "ref-delay-bad", 0)
	wantNew(t, h.post(ordersPath, "alice", "delay-bad", body)) // nothing was stored
}

func TestParseTestDelay(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"0", 0}, {"250", 250 * time.Millisecond}, {"+7", 7 * time.Millisecond}, {"60000", MaxTestDelay},
		{"60001", MaxTestDelay}, {"86400000", MaxTestDelay}, {"99999999999999999999999", MaxTestDelay},
	} {
		got, err := parseTestDelay(c.v)
		if err != nil || got != c.want {
			t.Errorf("parseTestDelay(%q) = %v, %v; want %v", c.v, got, err, c.want)
		}
	}
	for _, v := range []string{"", "-1", "-99999999999999999999999", "1.5", "1e3", "ms"} {
		if got, err := parseTestDelay(v); err == nil {
			t.Errorf("parseTestDelay(%q) = %v, want an error", v, got)
		}
	}
}

// claimWatch is a store that reports every claim it grants, so a test can await the moment
// an attempt holds its key.
type claimWatch struct {
	Store
	claimed chan struct{}
}

func (s *claimWatch) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	res, err := s.Store.Claim(ctx, req)
	if err == nil && res.Outcome == Claimed {
		s.claimed <- struct{}{}
	}
	return res, err
}

// TestDelayHeaderWidensInFlightWindow: an attempt with X-Test-Delay holds its key that long
// after claiming it: a retry in the window gets 409, the attempt then completes and is
// replayed. On the memory store and a durable one.
func TestDelayHeaderWidensInFlightWindow(t *testing.T) {
	const delay = 1500 * time.Millisecond
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			watch := &claimWatch{Store: openAPIStore(t, store), claimed: make(chan struct{}, 8)}
			h := newAPIHarness(t, store, apiOpts{hooks: true, store: watch})
			body := orderJSON("ref-delay", 1250, "EUR")
			req := h.newPost(ordersPath, "alice", "delay-1", body)
			req.Header.Set(DelayHeader, strconv.Itoa(int(delay.Milliseconds())))
			start := time.Now()
			ch := h.sendAsync(req)
			select {
			case <-watch.claimed:
			case <-time.After(20 * time.Second):
				t.Fatal("the delayed attempt did not claim its key within 20s")
			}
			wantStatus(t, h.post(ordersPath, "alice", "delay-1", body), http.StatusConflict)
			first := h.await(ch)
			if elapsed := time.Since(start); elapsed < delay {
				t.Fatalf("the attempt with %s: %d answered after %v", DelayHeader, delay.Milliseconds(), elapsed)
			}
			wantNew(t, first)
			wantReplay(t, h.post(ordersPath, "alice", "delay-1", body), first)
			h.wantCount("alice", ordersPath, "ref-delay", 1)
		})
	}
}
