package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// fakeClock is the consumer's clock in tests: it moves only when told.
type fakeClock struct{ nanos atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.nanos.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.nanos.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.nanos.Add(int64(d)) }

// rigOpts configures a rig.
type rigOpts struct {
	mutant       Mutant
	signing      webhook.Config
	noDownstream bool
	workDelay    time.Duration
	downTimeout  time.Duration
	hooks        bool
}

// rig is one consumer behind an httptest server, with a real downstream sink, a fake
// clock and the harness's signer. restart replaces the consumer by a new instance on the
// same backend, as a process restarted after a crash.
type rig struct {
	t       *testing.T
	b       backend
	opts    rigOpts
	clock   *fakeClock
	sink    *faults.Sink
	signer  *webhook.Signer
	srv     *httptest.Server
	current atomic.Pointer[Consumer]
	store   Store // the current instance's store
}

func newRig(t *testing.T, b backend, opts rigOpts) *rig {
	t.Helper()
	r := &rig{t: t, b: b, opts: opts, clock: newFakeClock()}
	if !opts.noDownstream {
		sink, err := faults.NewSink("127.0.0.1:0", "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sink.Close() })
		r.sink = sink
	}
	signer, err := webhook.New(opts.signing)
	if err != nil {
		t.Fatal(err)
	}
	r.signer = signer
	r.restart()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.current.Load().ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// restart starts a new consumer instance on a newly opened store of the backend.
func (r *rig) restart() *Consumer {
	r.t.Helper()
	cfg := Config{Store: r.b.open(r.t), Signing: r.opts.signing, Mutant: r.opts.mutant,
		Now: r.clock.Now, WorkDelay: r.opts.workDelay, DownstreamTimeout: r.opts.downTimeout,
		LockTimeout: 30 * time.Second, Hooks: r.opts.hooks}
	if r.sink != nil {
		cfg.Downstream = r.sink.URL()
	}
	c, err := New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.store = cfg.Store
	r.current.Store(c)
	return c
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a answer) str(field string) string { s, _ := a.body[field].(string); return s }

// event is the body of an event delivery.
func event(id, object string, version int64) []byte {
	b, _ := json.Marshal(Event{ID: id, Type: "object.updated", Object: object, Version: version,
		Created: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Data: json.RawMessage(`{"name":"x"}`)})
	return b
}

// opEvent is an event body whose data names business operations: one (data.operation), or
// several (data.operations).
func opEvent(id, object string, version int64, ops ...string) []byte {
	data := map[string]any{"operation": ops[0]}
	if len(ops) > 1 {
		data = map[string]any{"operations": ops}
	}
	raw, _ := json.Marshal(data)
	b, _ := json.Marshal(Event{ID: id, Type: "payment.approved", Object: object, Version: version,
		Created: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Data: raw})
	return b
}

// opEffects counts the effects of one business operation.
func (r *rig) opEffects(op string) int {
	r.t.Helper()
	a := r.get("/v1/effects?operation=" + op)
	n, ok := a.body["count"].(float64)
	if a.status != http.StatusOK || !ok {
		r.t.Fatalf("GET /v1/effects?operation=%s = %d %v", op, a.status, a.body)
	}
	return int(n)
}

// post sends body to POST /webhooks with the given headers.
func (r *rig) post(body []byte, h http.Header) answer {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/webhooks", bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	return r.do(req)
}

// deliver sends body signed by the harness's signer at the rig's clock.
func (r *rig) deliver(body []byte) answer {
	r.t.Helper()
	a, err := r.send(body)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// send is deliver for any goroutine: it returns its error.
func (r *rig) send(body []byte) (answer, error) { return r.sendWith(body, nil) }

// sendWith is send with extra headers (the slow hook's, say).
func (r *rig) sendWith(body []byte, extra http.Header) (answer, error) {
	var ev Event
	json.Unmarshal(body, &ev)
	h, err := r.signer.Sign(ev.ID, r.clock.Now(), body)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/webhooks", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header = h
	for k, v := range extra {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	return r.try(req)
}

func (r *rig) get(path string) answer {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+path, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.do(req)
}

func (r *rig) do(req *http.Request) answer {
	r.t.Helper()
	a, err := r.try(req)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// try sends req and decodes its JSON answer.
func (r *rig) try(req *http.Request) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		return a, fmt.Errorf("%s %s: %d with a body that is not JSON: %q", req.Method, req.URL.Path, resp.StatusCode, raw)
	}
	return a, nil
}

// effects counts the effects of an event through the observer, GET /v1/effects.
func (r *rig) effects(eventID string) int {
	r.t.Helper()
	a := r.get("/v1/effects?event=" + eventID)
	n, ok := a.body["count"].(float64)
	if a.status != http.StatusOK || !ok {
		r.t.Fatalf("GET /v1/effects?event=%s = %d %v", eventID, a.status, a.body)
	}
	return int(n)
}

// version reads an object's version through GET /v1/objects/{id}.
func (r *rig) version(object string) int64 {
	r.t.Helper()
	a := r.get("/v1/objects/" + object)
	v, ok := a.body["version"].(float64)
	if a.status != http.StatusOK || !ok || a.str("object") != object {
		r.t.Fatalf("GET /v1/objects/%s = %d %v", object, a.status, a.body)
	}
	return int64(v)
}

// burst delivers body from n goroutines released together and returns their answers.
func (r *rig) burst(n int, body []byte) []answer {
	r.t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		out   = make([]answer, n)
		errs  = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			out[i], errs[i] = r.send(body)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// wantStatus checks an answer's status and, for 200s, its "status" field.
func wantStatus(t *testing.T, what string, a answer, status int, outcome string) {
	t.Helper()
	if a.status != status || outcome != "" && a.str("status") != outcome {
		t.Fatalf("%s: %d %v, want %d %s", what, a.status, a.body, status, outcome)
	}
}
