package consumer

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRedeliveryIsOneEffect: an event delivered three times takes effect once; the
// redeliveries are acknowledged as duplicates and never reach the downstream.
func TestRedeliveryIsOneEffect(t *testing.T) {
	forEachStore(t, AllStores, func(t *testing.T, b backend) {
		r := newRig(t, b, rigOpts{})
		body := event("evt_redeliver", "obj_1", 1)
		wantStatus(t, "first delivery", r.deliver(body), http.StatusOK, "processed")
		for i := range 2 {
			r.clock.Advance(time.Hour)
			a := r.deliver(body)
			wantStatus(t, "redelivery", a, http.StatusOK, "duplicate")
			if a.str("event") != "evt_redeliver" {
				t.Errorf("redelivery %d names event %q", i, a.str("event"))
			}
		}
		if n := r.effects("evt_redeliver"); n != 1 {
			t.Errorf("effects = %d, want 1", n)
		}
		if calls := r.sink.CallsFor("evt_redeliver"); len(calls) != 1 || calls[0].Key != "evt_redeliver" {
			t.Errorf("downstream calls = %+v, want one with Idempotency-Key evt_redeliver", calls)
		}
	})
}

// TestDistinctEventsSameBody: two events that differ only by id are two effects.
func TestDistinctEventsSameBody(t *testing.T) {
	forEachStore(t, AllStores, func(t *testing.T, b backend) {
		r := newRig(t, b, rigOpts{})
		for _, id := range []string{"evt_a", "evt_b"} {
			wantStatus(t, id, r.deliver(event(id, "obj_1", 1)), http.StatusOK, "processed")
			if n := r.effects(id); n != 1 {
				t.Errorf("effects of %s = %d, want 1", id, n)
			}
		}
		if a := r.get("/v1/effects?object=obj_1"); a.body["count"] != 2.0 {
			t.Errorf("effects of obj_1 = %v, want 2", a.body)
		}
	})
}

// TestConcurrentRedeliveries: 16 deliveries of one event released together take effect
// once; the others are told to retry (409) or acknowledged as duplicates.
func TestConcurrentRedeliveries(t *testing.T) {
	forEachStore(t, AllStores, func(t *testing.T, b backend) {
		r := newRig(t, b, rigOpts{})
		for round := range 3 {
			id := "evt_burst_" + string(rune('a'+round))
			statuses := map[string]int{}
			for _, a := range r.burst(16, event(id, "obj_1", int64(round))) {
				switch {
				case a.status == http.StatusConflict && a.header.Get("Retry-After") == "1":
					statuses["409"]++
				case a.status == http.StatusOK:
					statuses[a.str("status")]++
				default:
					t.Errorf("unexpected answer %d %v", a.status, a.body)
				}
			}
			if statuses["processed"] != 1 {
				t.Errorf("round %d: answers %v, want exactly one processed", round, statuses)
			}
			if n := r.effects(id); n != 1 {
				t.Errorf("round %d: effects = %d, want 1 (answers %v)", round, n, statuses)
			}
			wantStatus(t, "redelivery after the burst", r.deliver(event(id, "obj_1", int64(round))), http.StatusOK, "duplicate")
		}
	})
}

// TestDownstreamFailureThenRedelivery: a delivery whose downstream call fails (5xx or
// timeout) is not acknowledged and has no effect; its redelivery takes effect once.
func TestDownstreamFailureThenRedelivery(t *testing.T) {
	forEachStore(t, AllStores, func(t *testing.T, b backend) {
		r := newRig(t, b, rigOpts{downTimeout: 100 * time.Millisecond})
		r.sink.FailNext(1, http.StatusServiceUnavailable)
		body := event("evt_fail", "obj_1", 1)
		a := r.deliver(body)
		wantStatus(t, "delivery with a failing downstream", a, http.StatusBadGateway, "")
		if !strings.Contains(a.str("detail"), "status 503") {
			t.Errorf("detail = %q, want the downstream status", a.str("detail"))
		}
		if n := r.effects("evt_fail"); n != 0 {
			t.Errorf("effects after the failure = %d, want 0", n)
		}
		r.sink.Delay(time.Second) // the sink performs the effect; the answer comes too late
		a = r.deliver(body)
		wantStatus(t, "delivery with a slow downstream", a, http.StatusBadGateway, "")
		if !strings.Contains(a.str("detail"), "timeout") {
			t.Errorf("detail = %q, want timeout", a.str("detail"))
		}
		r.sink.Delay(0)
		wantStatus(t, "redelivery", r.deliver(body), http.StatusOK, "processed")
		wantStatus(t, "second redelivery", r.deliver(body), http.StatusOK, "duplicate")
		if n := r.effects("evt_fail"); n != 1 {
			t.Errorf("effects = %d, want 1", n)
		}
		if n := r.sink.EffectsForRef("evt_fail"); n != 1 {
			t.Errorf("downstream effects = %d, want 1 (one key for every delivery)", n)
		}
	})
}

// TestOutOfOrderVersions: events of one object delivered out of order leave it at the
// newest version; every event still takes effect.
func TestOutOfOrderVersions(t *testing.T) {
	forEachStore(t, AllStores, func(t *testing.T, b backend) {
		r := newRig(t, b, rigOpts{})
		if v := r.version("obj_1"); v != 0 {
			t.Fatalf("unknown object at version %d, want 0", v)
		}
		for _, v := range []int64{3, 1, 4, 2} {
			wantStatus(t, "event", r.deliver(event("evt_v"+string(rune('0'+v)), "obj_1", v)), http.StatusOK, "processed")
		}
		if v := r.version("obj_1"); v != 4 {
			t.Errorf("obj_1 at version %d, want 4 (the newest)", v)
		}
		if a := r.get("/v1/effects?object=obj_1"); a.body["count"] != 4.0 {
			t.Errorf("effects of obj_1 = %v, want 4", a.body)
		}
	})
}

// TestMalformedDeliveries are 400s with no effect.
func TestMalformedDeliveries(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{})
	for _, body := range []string{
		`not json`, `[1]`, `null`,
		`{"object":"obj_1","version":1}`,
		`{"id":"","object":"obj_1","version":1}`,
		`{"id":7,"object":"obj_1","version":1}`,
		`{"id":"evt_m","version":1}`,
		`{"id":"evt_m","object":"obj_1"}`,
		`{"id":"evt_m","object":"obj_1","version":-1}`,
		`{"id":"evt_m","object":"obj_1","version":"3"}`,
		`{"id":"evt_m","object":"obj_1","version":1.5}`,
		`{"id":"evt_m","object":"obj_1","version":1,"created":"yesterday"}`,
	} {
		a := r.post([]byte(body), nil)
		if a.status != http.StatusBadRequest || a.str("detail") == "" {
			t.Errorf("POST %s = %d %v, want 400 with a detail", body, a.status, a.body)
		}
	}
	if n := r.effects("evt_m"); n != 0 || len(r.sink.Calls()) != 0 {
		t.Errorf("malformed deliveries had %d effects and %d downstream calls", n, len(r.sink.Calls()))
	}
}

// TestObservers covers the GET endpoints' contract.
func TestObservers(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{})
	if a := r.get("/v1/effects"); a.status != http.StatusBadRequest {
		t.Errorf("GET /v1/effects without a filter = %d, want 400", a.status)
	}
	if a := r.get("/healthz"); a.status != http.StatusOK || a.str("status") != "ok" {
		t.Errorf("GET /healthz = %d %v", a.status, a.body)
	}
	wantStatus(t, "event", r.deliver(event("evt_o", "obj_o", 5)), http.StatusOK, "processed")
	a := r.get("/v1/effects?event=evt_o&object=obj_o")
	items, _ := a.body["items"].([]any)
	item, _ := items[0].(map[string]any)
	if a.body["count"] != 1.0 || item["event"] != "evt_o" || item["object"] != "obj_o" || item["version"] != 5.0 {
		t.Errorf("GET /v1/effects = %v, want the one effect", a.body)
	}
	if a := r.get("/v1/effects?event=evt_o&object=obj_other"); a.body["count"] != 0.0 {
		t.Errorf("GET /v1/effects of another object = %v, want 0", a.body)
	}
}
