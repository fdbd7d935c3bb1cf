package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// DefaultKeyHeader is the header a downstream call carries its idempotency key in.
const DefaultKeyHeader = "Idempotency-Key"

// maxSinkBody bounds the request body the sink reads and keeps.
const maxSinkBody = 1 << 20

// Sink is the downstream provider the target calls (a payment provider, say), run by the
// harness. It behaves like a real provider that honours idempotency keys: the first call with a
// key performs the effect and stores its answer, every later call with the same key gets that
// answer again (with Idempotent-Replayed: true) and performs nothing. A call without a key is an
// effect of its own every time. The sink records every call it answered, and the harness can
// hold calls, fail them or answer them late while it runs. Its methods are safe for concurrent
// use.
type Sink struct {
	keyHeader string
	server    *http.Server
	url       string
	served    chan struct{} // closed when the server stopped serving
	closing   chan struct{} // closed by Close: nothing waits any more
	closeOnce sync.Once
	closeErr  error
	inflight  sync.WaitGroup // calls being handled; Add only under mu while !stopped

	mu       sync.Mutex
	stopped  bool
	calls    []Call
	answers  map[string]answer // by downstream key
	gate     chan struct{}     // non-nil while holding; closed by Release
	held     []Call
	failLeft int
	failCode int
	delay    time.Duration
	changed  chan struct{} // closed and replaced whenever calls or held change
}

// Call is one call the target made to the sink.
type Call struct {
	// Time is when the call arrived.
	Time time.Time `json:"time"`
	// Method and Path are the request's method and URL path.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Key is the downstream idempotency key ("" = none was sent).
	Key string `json:"key,omitempty"`
	// Ref is the body's top-level "ref" string, if any: the operation the call belongs to.
	Ref string `json:"ref,omitempty"`
	// Body is the request body (at most 1 MiB).
	Body []byte `json:"body,omitempty"`
	// Status is the status the sink answered (or was about to, when the client gave up).
	Status int `json:"status"`
	// Effect says the call performed a new effect (the first 2xx for its key).
	Effect bool `json:"effect,omitempty"`
	// Replayed says the call got the stored answer of an earlier call with the same key.
	Replayed bool `json:"replayed,omitempty"`
}

// answer is what the sink stored for a key.
type answer struct {
	status int
	body   []byte
}

// NewSink starts a sink on listen (host:port; "" = 127.0.0.1 on any free port) that reads the
// downstream key from keyHeader ("" = Idempotency-Key).
func NewSink(listen, keyHeader string) (*Sink, error) {
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if keyHeader == "" {
		keyHeader = DefaultKeyHeader
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("downstream sink: listen on %s: %w", listen, err)
	}
	s := &Sink{
		keyHeader: http.CanonicalHeaderKey(keyHeader),
		url:       "http://" + ln.Addr().String(),
		served:    make(chan struct{}),
		closing:   make(chan struct{}),
		answers:   map[string]answer{},
		changed:   make(chan struct{}),
	}
	s.server = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.server.Serve(ln)
	}()
	return s, nil
}

// URL returns the sink's base URL, e.g. http://127.0.0.1:41234.
func (s *Sink) URL() string { return s.url }

// KeyHeader returns the header the sink reads downstream keys from.
func (s *Sink) KeyHeader() string { return s.keyHeader }

// Close releases every held call, stops answering late, stops listening, closes every
// connection and waits for the calls in progress, so Calls is final once it returns. Held calls
// that it releases are still processed (their clients may be gone). Calling Close again returns
// the first result.
func (s *Sink) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		close(s.closing)
		s.Release()
		// Not Shutdown: it waits up to 5s for connections that never sent a request.
		s.closeErr = s.server.Close()
		<-s.served
		s.inflight.Wait() // short: once closing is closed, nothing blocks a call
	})
	return s.closeErr
}

// begin registers a call in progress; false once the sink is closing.
func (s *Sink) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.inflight.Add(1)
	return true
}

// serve handles one call: wait while held, decide the answer, answer (late if asked to).
func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	if !s.begin() {
		http.Error(w, "downstream sink closed", http.StatusServiceUnavailable)
		return
	}
	defer s.inflight.Done()
	c, err := s.arrive(r)
	if err != nil { // a truncated request performs nothing, as at a real provider
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.waitWhileHeld(c)
	a, delay := s.decide(&c)
	s.sleep(r.Context(), delay)
	w.Header().Set("Content-Type", "application/json")
	if c.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// arrive reads the call off the request.
func (s *Sink) arrive(r *http.Request) (Call, error) {
	c := Call{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Key: r.Header.Get(s.keyHeader)}
	var err error
	if c.Body, err = io.ReadAll(io.LimitReader(r.Body, maxSinkBody)); err != nil {
		return c, err
	}
	var body struct {
		Ref any `json:"ref"`
	}
	if json.Unmarshal(c.Body, &body) == nil {
		if ref, ok := body.Ref.(string); ok {
			c.Ref = ref
		}
	}
	return c, nil
}

// decide picks the answer to c and records c, all under one lock, so that two calls with the
// same key can never both perform the effect. It returns how long to wait before answering.
func (s *Sink) decide(c *Call) (answer, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, stored := s.answers[c.Key]
	switch {
	case s.failLeft > 0:
		s.failLeft--
		a = answer{s.failCode, jsonBody(map[string]any{"error": "injected failure", "status": s.failCode})}
	case stored && c.Key != "":
		c.Replayed = true
	default:
		c.Effect = true
		a = answer{http.StatusOK, jsonBody(map[string]any{
			"id": fmt.Sprintf("ch_%06d", len(s.calls)+1), "key": c.Key, "ref": c.Ref, "status": "succeeded",
		})}
		if c.Key != "" {
			s.answers[c.Key] = a
		}
	}
	c.Status = a.status
	s.calls = append(s.calls, *c)
	s.notifyLocked()
	return a, s.delay
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// sleep waits d, or less if the client or the sink goes away.
func (s *Sink) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	}
}

// FailNext makes the next n calls fail with status (400-599; anything else means 503) without
// performing an effect or storing an answer, so a retry with the same key performs it. n <= 0
// stops failing.
func (s *Sink) FailNext(n, status int) {
	if status < 400 || status > 599 {
		status = http.StatusServiceUnavailable
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLeft, s.failCode = max(n, 0), status
}

// Delay makes every later call answered d after it was decided (0 = at once). The effect is
// performed and recorded at once; only the answer is late, as with a slow provider whose client
// times out: the work is done, the caller does not know.
func (s *Sink) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = max(d, 0)
}

// Calls returns every call answered so far, in the order the sink decided them. Held calls
// appear once released.
func (s *Sink) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneCalls(s.calls)
}

// CallsFor returns the calls whose body's "ref" is ref.
func (s *Sink) CallsFor(ref string) []Call {
	return slices.DeleteFunc(s.Calls(), func(c Call) bool { return c.Ref != ref })
}

// Effects returns how many effects the sink performed: distinct keys answered 2xx, plus every
// keyless call answered 2xx.
func (s *Sink) Effects() int { return s.EffectsFor(func(Call) bool { return true }) }

// EffectsFor returns how many effects were performed by calls that match.
func (s *Sink) EffectsFor(match func(Call) bool) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Effect && match(c) {
			n++
		}
	}
	return n
}

// EffectsForRef returns how many effects were performed for the operation ref.
func (s *Sink) EffectsForRef(ref string) int {
	return s.EffectsFor(func(c Call) bool { return c.Ref == ref })
}

// WaitCalls waits until at least n calls have been answered (or decided, for late answers) and
// returns them all.
func (s *Sink) WaitCalls(ctx context.Context, n int) ([]Call, error) {
	return s.waitFor(ctx, func() []Call { return s.calls }, n, "answered calls")
}

func cloneCalls(calls []Call) []Call {
	out := slices.Clone(calls)
	for i := range out {
		out[i].Body = slices.Clone(out[i].Body)
	}
	return out
}

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Sink) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until list (read under s.mu) has at least n calls and returns a copy.
func (s *Sink) waitFor(ctx context.Context, list func() []Call, n int, what string) ([]Call, error) {
	for {
		s.mu.Lock()
		got, changed := cloneCalls(list()), s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return got, fmt.Errorf("downstream sink: %d of %d %s: %w", len(got), n, what, ctx.Err())
		case <-s.closing:
			return got, fmt.Errorf("downstream sink: %d of %d %s: %w", len(got), n, what, ErrSinkClosed)
		}
	}
}

// ErrSinkClosed is returned by waits that the sink's Close ended.
var ErrSinkClosed = errors.New("downstream sink closed")
