package consumer

import (
	"bytes"
	"net/http"
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
