package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The HTTP-level tests serve NewAPI on httptest servers (127.0.0.1 only) over a fresh
// store each: memory, SQLite in t.TempDir(), PostgreSQL on a fresh schema, Redis on a
// fresh key prefix. Time is a fakeClock (Config.Now): no test sleeps for a retention or a
// lock timeout.

// apiBase is the start of every harness clock.
var apiBase = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

const (
	apiRetention   = time.Hour
	apiLockTimeout = 30 * time.Second
	ordersPath     = "/v1/orders"
	refundsPath    = "/v1/refunds"
	// noKey as a key sends no Idempotency-Key header at all.
	noKey = "\x00no key"
)

// fakeClock is the injectable clock of a harness.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openAPIStore opens a fresh, isolated store of the named kind; unreachable services
// fail the test (the helpers of sqlstore_test.go and redisstore_test.go).
func openAPIStore(t *testing.T, name string) Store {
	t.Helper()
	switch name {
	case "memory":
		return NewMemoryStore()
	case "sqlite":
		return openTestSQLite(t, filepath.Join(t.TempDir(), "api.db"))
	case "postgres":
		return openTestPostgres(t, newPGSchema(t))
	case "redis":
		return newTestRedis(t)
	}
	t.Fatalf("unknown store %q", name)
	return nil
}

// apiOpts configures a harness.
type apiOpts struct {
	mutant            Mutant
	workDelay         time.Duration
	downstream        bool          // serve a fakeDownstream and point Config.Downstream at it
	downstreamTimeout time.Duration // 0: the default
	// The shape options (Config.KeyFormat, Auth, Hooks, MismatchStatus); zero: the defaults.
	keyFormat      KeyFormat
	auth           AuthMode
	hooks          bool
	mismatchStatus int
	store          Store // nil: a fresh store of the harness's kind
	events         bool  // publish events to a capturePublisher; the test relays them (relayEvents)
	async          bool  // Config.Async, its worker running until the test ends
}

// apiHarness is one API under test with its clock, client and optional downstream.
type apiHarness struct {
	t      *testing.T
	store  string
	clock  *fakeClock
	url    string
	client *http.Client
	down   *fakeDownstream
	auth   AuthMode
	api    *API
	events *capturePublisher // with apiOpts.events
	// stopWorker stops the worker of an asynchronous API (apiOpts.async) as its process's end would.
	stopWorker func()
}

func newAPIHarness(t *testing.T, store string, o apiOpts) *apiHarness {
	t.Helper()
	h := &apiHarness{t: t, store: store, clock: &fakeClock{now: apiBase}, auth: o.auth}
	st := o.store
	if st == nil {
		st = openAPIStore(t, store)
	}
	cfg := Config{
		Store:             st,
		Tenants:           []string{"alice", "bob"},
		Mutant:            o.mutant,
		Retention:         apiRetention,
		LockTimeout:       apiLockTimeout,
		WorkDelay:         o.workDelay,
		DownstreamTimeout: o.downstreamTimeout,
		Now:               h.clock.Now,
		KeyFormat:         o.keyFormat,
		Auth:              o.auth,
		Hooks:             o.hooks,
		MismatchStatus:    o.mismatchStatus,
	}
	if o.downstream {
		h.down = newFakeDownstream(t)
		cfg.Downstream = h.down.srv.URL + "/charges"
	}
	if o.events {
		h.events = &capturePublisher{}
		cfg.Events = &EventsConfig{Publisher: h.events}
	}
	cfg.Async = o.async
	api, err := NewAPI(cfg)
	if err != nil {
		t.Fatalf("NewAPI: %v", err)
	}
	h.api = api
	if o.async {
		h.stopWorker = startWorker(t, api)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	if h.down != nil {
		t.Cleanup(h.down.releaseAll) // runs before srv.Close, which waits for held requests
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64} // no Proxy: traffic stays on 127.0.0.1
	t.Cleanup(tr.CloseIdleConnections)
	h.url = srv.URL
	h.client = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	return h
}

// orderJSON is a request body.
func orderJSON(ref string, amount int64, currency string) string {
	return fmt.Sprintf(`{"ref":%q,"amount":%d,"currency":%q}`, ref, amount, currency)
}

// apiResp is an answer, fully read.
type apiResp struct {
	status int
	header http.Header
	body   []byte
}

func (r apiResp) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

func (r apiResp) replayed() bool { return r.header.Get("Idempotent-Replayed") == "true" }

// newPost builds a POST; tenant "" sends no Authorization (with AuthNone: no X-Tenant), key
// noKey no Idempotency-Key.
func (h *apiHarness) newPost(path, tenant, key, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatalf("new request: %v", err)
	}
	// Without GetBody the transport never re-sends the POST behind the test's back.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	h.setTenant(req, tenant)
	if key != noKey {
		req.Header["Idempotency-Key"] = []string{key}
	}
	return req
}

// setTenant names the caller as the harness's auth mode asks: a bearer token, or X-Tenant.
func (h *apiHarness) setTenant(req *http.Request, tenant string) {
	switch {
	case tenant == "":
	case h.auth == AuthNone:
		req.Header.Set(TenantHeader, tenant)
	default:
		req.Header.Set("Authorization", "Bearer "+tenant)
	}
}

// send sends a request and reads the answer; safe from any goroutine.
func (h *apiHarness) send(req *http.Request) (apiResp, error) {
	resp, err := h.client.Do(req)
	if err != nil {
		return apiResp{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return apiResp{}, err
	}
	return apiResp{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// do sends a request from the test goroutine.
func (h *apiHarness) do(req *http.Request) apiResp {
	h.t.Helper()
	r, err := h.send(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	return r
}

func (h *apiHarness) post(path, tenant, key, body string) apiResp {
	h.t.Helper()
	return h.do(h.newPost(path, tenant, key, body))
}

// postAsync sends a POST from a goroutine; the channel yields its answer.
func (h *apiHarness) postAsync(path, tenant, key, body string) <-chan apiResp {
	return h.sendAsync(h.newPost(path, tenant, key, body))
}

// sendAsync sends req from a goroutine; the channel yields its answer (status -1 and the
// error as body when it got none).
func (h *apiHarness) sendAsync(req *http.Request) <-chan apiResp {
	ch := make(chan apiResp, 1)
	go func() {
		r, err := h.send(req)
		if err != nil {
			r = apiResp{status: -1, body: []byte(err.Error())}
		}
		ch <- r
	}()
	return ch
}

// await waits for an asynchronous answer.
func (h *apiHarness) await(ch <-chan apiResp) apiResp {
	h.t.Helper()
	select {
	case r := <-ch:
		if r.status < 0 {
			h.t.Fatalf("asynchronous POST failed: %s", r.body)
		}
		return r
	case <-time.After(30 * time.Second):
		h.t.Fatal("asynchronous POST did not answer within 30s")
	}
	return apiResp{}
}

// burst sends n requests at once (goroutines released by a closed channel).
func (h *apiHarness) burst(n int, mk func(i int) *http.Request) []apiResp {
	h.t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = mk(i)
	}
	resps, errs := make([]apiResp, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			resps[i], errs[i] = h.send(reqs[i])
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			h.t.Fatalf("burst request %d: %v", i, err)
		}
	}
	return resps
}

// listing is the answer of GET /v1/orders?ref=X.
type listing struct {
	Count int         `json:"count"`
	Items []orderBody `json:"items"`
}

// list asks the observer of path for the tenant's records with this ref.
func (h *apiHarness) list(tenant, path, ref string) listing {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+path+"?ref="+url.QueryEscape(ref), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.setTenant(req, tenant)
	r := h.do(req)
	if r.status != http.StatusOK {
		h.t.Fatalf("GET %s?ref=%s as %s: %s", path, ref, tenant, r)
	}
	var l listing
	if err := json.Unmarshal(r.body, &l); err != nil || l.Count != len(l.Items) {
		h.t.Fatalf("GET %s?ref=%s: bad listing %s (%v)", path, ref, r.body, err)
	}
	return l
}

func (h *apiHarness) count(tenant, path, ref string) int {
	h.t.Helper()
	return h.list(tenant, path, ref).Count
}

func (h *apiHarness) wantCount(tenant, path, ref string, want int) {
	h.t.Helper()
	if got := h.count(tenant, path, ref); got != want {
		h.t.Fatalf("%s has %d records of %s with ref %q, want %d", tenant, got, path, ref, want)
	}
}

// wantStatus checks an answer's status and, for errors, the problem+json form.
func wantStatus(t *testing.T, r apiResp, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %s, want %d", r, status)
	}
	if status >= 400 {
		var p struct {
			Status int `json:"status"`
		}
		ct := r.header.Get("Content-Type")
		if ct != "application/problem+json" || json.Unmarshal(r.body, &p) != nil || p.Status != status {
			t.Fatalf("error answer %s (Content-Type %q) is not an RFC 9457 problem with status %d", r, ct, status)
		}
		if r.replayed() && status != http.StatusBadGateway {
			t.Fatalf("error answer %s carries Idempotent-Replayed", r)
		}
	}
}

// wantNew checks a first execution: 201, not marked as a replay; it returns the order.
func wantNew(t *testing.T, r apiResp) orderBody {
	t.Helper()
	wantStatus(t, r, http.StatusCreated)
	if r.replayed() {
		t.Fatalf("first execution %s is marked Idempotent-Replayed", r)
	}
	return decodeOrder(t, r)
}

// wantReplay checks that r replays first byte for byte.
func wantReplay(t *testing.T, r, first apiResp) {
	t.Helper()
	if r.status != first.status || !bytes.Equal(r.body, first.body) {
		t.Fatalf("replay %s, want %s", r, first)
	}
	if !r.replayed() {
		t.Fatalf("replay %s lacks Idempotent-Replayed: true", r)
	}
}

func decodeOrder(t *testing.T, r apiResp) orderBody {
	t.Helper()
	var o orderBody
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatalf("body %s is not an order: %v", r.body, err)
	}
	return o
}

// fakeDownstream is a downstream provider that records every charge's Idempotency-Key,
// answers with a settable status, and can hold calls until released.
type fakeDownstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []string
	status  int
	hold    int           // the next hold calls wait for release
	held    chan struct{} // receives one value per held call
	release chan struct{}
	once    sync.Once
}

func newFakeDownstream(t *testing.T) *fakeDownstream {
	d := &fakeDownstream{status: http.StatusOK, held: make(chan struct{}, 64), release: make(chan struct{})}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		d.mu.Lock()
		d.keys = append(d.keys, r.Header.Get("Idempotency-Key"))
		status, hold := d.status, d.hold > 0
		if hold {
			d.hold--
		}
		d.mu.Unlock()
		if hold {
			d.held <- struct{}{}
			<-d.release
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(d.srv.Close)
	t.Cleanup(d.releaseAll)
	return d
}

// holdNext makes the next n calls wait until releaseAll.
func (d *fakeDownstream) holdNext(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold = n
}

func (d *fakeDownstream) setStatus(status int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.status = status
}

func (d *fakeDownstream) releaseAll() { d.once.Do(func() { close(d.release) }) }

// waitHeld waits until a call is being held.
func (d *fakeDownstream) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-d.held:
	case <-time.After(20 * time.Second):
		t.Fatal("the downstream call was not made within 20s")
	}
}

// calls returns the downstream Idempotency-Key of every call so far.
func (d *fakeDownstream) calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.keys...)
}

// failNext calls the fail hook (Config.Hooks) with this body ("" sends none) and returns its
// answer.
func (h *apiHarness) failNext(body string) apiResp {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+FailPath, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.GetBody = nil
	return h.do(req)
}

// wantFailNext calls the fail hook and checks its 204.
func (h *apiHarness) wantFailNext(body string) {
	h.t.Helper()
	if r := h.failNext(body); r.status != http.StatusNoContent || len(r.body) != 0 {
		h.t.Fatalf("POST %s %s = %s, want 204 and no body", FailPath, body, r)
	}
}

// wantError checks a stored error result: the status, problem+json, and whether it is marked
// as a replay (wantStatus refuses replayed errors other than 502).
func wantError(t *testing.T, r apiResp, status int, replayed bool) {
	t.Helper()
	var p struct {
		Status int `json:"status"`
	}
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" ||
		json.Unmarshal(r.body, &p) != nil || p.Status != status {
		t.Fatalf("answer %s (Content-Type %q), want a %d problem+json", r, r.header.Get("Content-Type"), status)
	}
	if r.replayed() != replayed {
		t.Fatalf("answer %s: Idempotent-Replayed %q, want replayed=%v", r, r.header.Get("Idempotent-Replayed"), replayed)
	}
}
