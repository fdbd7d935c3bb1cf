package consumer

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The fail_next hook fails the next handling of one event (500, claim released), and the
// redelivery takes effect once; without Config.Hooks the endpoint does not exist.
func TestFailNextHook(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{hooks: true, noDownstream: true})
	body := event("evt_fn", "obj_1", 1)
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/_test/fail?event=evt_fn", nil)
	if a := r.do(req); a.status != http.StatusOK {
		t.Fatalf("POST /_test/fail = %d, want 200", a.status)
	}
	wantStatus(t, "the failed handling", r.deliver(body), http.StatusInternalServerError, "")
	wantStatus(t, "the redelivery", r.deliver(body), http.StatusOK, "processed")
	if n := r.effects("evt_fn"); n != 1 {
		t.Errorf("effects = %d, want 1", n)
	}
	off := newRig(t, newBackend(t, "memory"), rigOpts{})
	resp, err := http.Post(off.srv.URL+"/_test/fail?event=evt_fn", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("without hooks, POST /_test/fail = %d, want 404", resp.StatusCode)
	}
}

// The slow hook delays a handling by the header's milliseconds; a bad value is a 400.
func TestSlowHook(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{hooks: true, noDownstream: true, workDelay: -1})
	start := time.Now()
	a, err := r.sendWith(event("evt_slow", "obj_1", 1), http.Header{DelayHeader: {"150"}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); a.status != http.StatusOK || took < 150*time.Millisecond {
		t.Errorf("slowed delivery: %d after %v, want 200 after at least 150ms", a.status, took)
	}
	bad, err := r.sendWith(event("evt_bad", "obj_1", 1), http.Header{DelayHeader: {"soon"}})
	if err != nil || bad.status != http.StatusBadRequest {
		t.Errorf("a bad %s: %d, %v; want 400", DelayHeader, bad.status, err)
	}
}

// With IDFrom a header, the event id is the header's, whatever the body says, and a delivery
// without the header is rejected.
func TestIDFromHeader(t *testing.T) {
	store := NewMemoryStore()
	c, err := New(Config{Store: store, IDFrom: IDFrom{In: IDInHeader, Header: "X-Event-Id"}, WorkDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	post := func(body []byte, id string) int {
		req, _ := http.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		if id != "" {
			req.Header.Set("X-Event-Id", id)
		}
		w := newRecorder()
		c.ServeHTTP(w, req)
		return w.status
	}
	body := []byte(`{"object": "obj_1", "version": 1}`) // no id in the body
	if got := []int{post(body, "evt_a"), post(body, "evt_b"), post(body, "evt_a"), post(body, "")}; got[0] != 200 || got[1] != 200 || got[2] != 200 || got[3] != 400 {
		t.Errorf("statuses = %v, want 200, 200, 200, 400", got)
	}
	for id, want := range map[string]int{"evt_a": 1, "evt_b": 1} {
		if list, _ := store.Effects(t.Context(), EffectFilter{Event: id}); len(list) != want {
			t.Errorf("effects of %s = %d, want %d", id, len(list), want)
		}
	}
	for in, ok := range map[string]bool{"transport": true, "body": true, "header:X-Id": true, "header:": false, "cookie": false} {
		if _, err := ParseIDFrom(in); (err == nil) != ok {
			t.Errorf("ParseIDFrom(%q) error %v, want ok %v", in, err, ok)
		}
	}
}

// recorder is a minimal http.ResponseWriter that keeps the status.
type recorder struct {
	h      http.Header
	status int
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}, status: 200} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// The fail_next hook's points and forms: an after-effect failure answers 500 once the effect
// committed and the redelivery is a duplicate; a hook armed for any event fails the next
// handling whatever its event, once; DELETE disarms; the X-Test-Fail header fails a delivery at
// its point, and only when it is not a redelivery.
func TestFailNextPoints(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{hooks: true, noDownstream: true})
	arm := func(query string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/_test/fail?"+query, nil)
		if a := r.do(req); a.status != http.StatusOK {
			t.Fatalf("POST /_test/fail?%s = %d, want 200", query, a.status)
		}
	}
	arm("event=evt_after&when=after-effect")
	body := event("evt_after", "obj_1", 1)
	wantStatus(t, "the handling failed after its effect", r.deliver(body), http.StatusInternalServerError, "")
	if n := r.effects("evt_after"); n != 1 {
		t.Errorf("after-effect: %d effects after the failed handling, want 1", n)
	}
	wantStatus(t, "the redelivery", r.deliver(body), http.StatusOK, "duplicate")

	arm("when=before-effect") // any event's next handling
	wantStatus(t, "any event's next handling", r.deliver(event("evt_any1", "obj_2", 1)), http.StatusInternalServerError, "")
	wantStatus(t, "the handling after it", r.deliver(event("evt_any2", "obj_3", 1)), http.StatusOK, "processed")

	arm("")
	req, _ := http.NewRequest(http.MethodDelete, r.srv.URL+"/_test/fail", nil)
	if a := r.do(req); a.status != http.StatusOK {
		t.Fatalf("DELETE /_test/fail = %d, want 200", a.status)
	}
	wantStatus(t, "a handling after the disarm", r.deliver(event("evt_any3", "obj_4", 1)), http.StatusOK, "processed")

	bad, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/_test/fail?when=during", nil)
	if a := r.do(bad); a.status != http.StatusBadRequest {
		t.Errorf("POST /_test/fail?when=during = %d, want 400", a.status)
	}

	a, err := r.sendWith(event("evt_hdr", "obj_5", 1), http.Header{FailHeader: {"1"}})
	if err != nil || a.status != http.StatusInternalServerError || r.effects("evt_hdr") != 0 {
		t.Errorf("X-Test-Fail: 1: %d, %v, %d effects; want 500 before the effect", a.status, err, r.effects("evt_hdr"))
	}
	c, err := New(Config{Store: NewMemoryStore(), Hooks: true, WorkDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := Delivery{ID: "evt_q", Body: event("evt_q", "obj_6", 1), Fail: FailBeforeEffect}
	if got := c.Deliver(t.Context(), d).Kind; got != Failed {
		t.Errorf("a first delivery with the header: %s, want failed", got)
	}
	d.Redelivered = true
	if got := c.Deliver(t.Context(), d).Kind; got != Processed {
		t.Errorf("its redelivery, flagged, with the same header: %s, want processed", got)
	}
}

// EFFECT_DELAY_MS slows every handling of a consumer with the hooks (serve --hooks reads it).
func TestEffectDelayFromEnv(t *testing.T) {
	t.Setenv(EnvEffectDelay, "120")
	d, err := EffectDelayFromEnv()
	if err != nil || d != 120*time.Millisecond {
		t.Fatalf("EffectDelayFromEnv = %v, %v; want 120ms", d, err)
	}
	c, err := New(Config{Store: NewMemoryStore(), Hooks: true, WorkDelay: -1, EffectDelay: d})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := c.Deliver(t.Context(), Delivery{ID: "evt_slow", Body: event("evt_slow", "obj_1", 1)}).Kind; got != Processed || time.Since(start) < d {
		t.Errorf("%s after %v, want processed after at least %v", got, time.Since(start), d)
	}
	t.Setenv(EnvEffectDelay, "soon")
	if _, err := EffectDelayFromEnv(); err == nil || !strings.Contains(err.Error(), EnvEffectDelay) {
		t.Errorf("a bad %s: %v, want an error naming it", EnvEffectDelay, err)
	}
}
