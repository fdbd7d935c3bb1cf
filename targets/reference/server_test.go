package reference

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// listeningLine is what Serve prints once it accepts connections.
var listeningLine = regexp.MustCompile(`^listening on http://127\.0\.0\.1:([0-9]+)\n$`)

// served is a running Serve.
type served struct {
	url    string
	cancel context.CancelFunc
	done   chan struct{} // closed when Serve has returned err
	err    error
}

// startServe runs Serve on 127.0.0.1:0 and waits for its "listening on" line.
func startServe(t *testing.T, opts ServeOptions) *served {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	if opts.Config.Tenants == nil {
		opts.Config.Tenants = []string{"alice", "bob"}
	}
	opts.Config.Retention, opts.Config.LockTimeout = apiRetention, apiLockTimeout
	pr, pw := io.Pipe()
	opts.Out = pw
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{cancel: cancel, done: make(chan struct{})}
	go func() {
		s.err = Serve(ctx, opts)
		close(s.done)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, pr)
	}()
	select {
	case line := <-lines:
		m := listeningLine.FindStringSubmatch(line)
		if m == nil || m[1] == "0" {
			t.Fatalf("Serve printed %q, want `listening on http://127.0.0.1:PORT` with the real port", line)
		}
		s.url = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	case <-s.done:
		t.Fatalf("Serve returned before listening: %v", s.err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve printed nothing within 30s")
	}
	return s
}

// stop cancels Serve's context and waits for it to return.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	s.wait(t)
}

func (s *served) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("Serve returned %v after cancellation, want nil", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10s of cancellation")
	}
}

// oneShot is a client without keep-alive, so a stopped server is seen as stopped.
var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}

func servePost(base, key string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, base+ordersPath, strings.NewReader(orderJSON("ref-serve", 5, "EUR")))
	if err != nil {
		return 0, err
	}
	req.GetBody = nil
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Idempotency-Key", key)
	resp, err := oneShot.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func serveGet(base, path string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := oneShot.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestServeListensAndShutsDown(t *testing.T) {
	for _, c := range []struct {
		store string
		dsn   func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "" }},
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "serve.db") }},
		{"postgres", newPGSchema},
	} {
		t.Run(c.store, func(t *testing.T) {
			s := startServe(t, ServeOptions{Store: c.store, DSN: c.dsn(t)})
			if st, err := serveGet(s.url, "/healthz"); err != nil || st != http.StatusOK {
				t.Fatalf("GET /healthz = %d, %v", st, err)
			}
			for _, want := range []int{http.StatusCreated, http.StatusCreated} { // a replay is 201 too
				if st, err := servePost(s.url, "serve-1"); err != nil || st != want {
					t.Fatalf("POST = %d, %v; want %d", st, err, want)
				}
			}
			s.stop(t)
			if _, err := serveGet(s.url, "/healthz"); err == nil {
				t.Fatal("the server still answers after Serve returned")
			}
		})
	}
}

// TestServeRedis only reads: Serve opens Redis with the shared default prefix.
func TestServeRedis(t *testing.T) {
	openTestRedis(t, testRedisPrefix(t)) // fails clearly when Redis is not there
	s := startServe(t, ServeOptions{Store: "redis", DSN: testRedisURL()})
	if st, err := serveGet(s.url, "/v1/orders?ref=retrysafe-serve-test-"+randomHex(8)); err != nil || st != http.StatusOK {
		t.Fatalf("GET /v1/orders on Redis = %d, %v", st, err)
	}
	s.stop(t)
}

// TestServeFinishesInFlightRequest: a request in progress when ctx is cancelled completes.
func TestServeFinishesInFlightRequest(t *testing.T) {
	down := newFakeDownstream(t)
	down.holdNext(1)
	s := startServe(t, ServeOptions{Store: "memory", Config: Config{Downstream: down.srv.URL}})
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		st, err := servePost(s.url, "inflight")
		res <- result{st, err}
	}()
	down.waitHeld(t)
	s.cancel()
	select {
	case <-s.done:
		t.Fatalf("Serve returned %v while a request was in flight", s.err)
	case <-time.After(100 * time.Millisecond):
	}
	down.releaseAll()
	if r := <-res; r.err != nil || r.status != http.StatusCreated {
		t.Fatalf("in-flight POST during shutdown = %d, %v; want 201", r.status, r.err)
	}
	s.wait(t)
}

func TestServeErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := Serve(ctx, ServeOptions{Addr: "127.0.0.1:0", Store: "mongo", Out: io.Discard})
	if !errors.Is(err, ErrUnknownStore) {
		t.Errorf("Serve with an unknown store = %v, want ErrUnknownStore", err)
	}
	err = Serve(ctx, ServeOptions{Addr: "127.0.0.1:0", Store: "memory", Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("Serve without tenants = %v, want an error about tenants", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(ctx, ServeOptions{Addr: ln.Addr().String(), Store: "memory", Out: io.Discard,
		Config: Config{Tenants: []string{"alice"}}})
	if err == nil {
		t.Error("Serve on an address in use succeeded")
	}
}

func TestOpenStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func(name, dsn string, want func(Store) bool) {
		t.Helper()
		s, err := OpenStore(ctx, name, dsn)
		if err != nil {
			t.Fatalf("OpenStore(%q, %q): %v", name, dsn, err)
		}
		defer s.Close()
		if !want(s) {
			t.Fatalf("OpenStore(%q) = %T", name, s)
		}
		if row, err := s.Lookup(ctx, "retrysafe-open-store-test-"+randomHex(8)); err != nil || row != nil {
			t.Fatalf("%s store: Lookup of an unknown scope = %+v, %v", name, row, err)
		}
	}
	isMemory := func(s Store) bool { _, ok := s.(*MemoryStore); return ok }
	isSQL := func(s Store) bool { _, ok := s.(*SQLStore); return ok }
	isRedis := func(s Store) bool { _, ok := s.(*RedisStore); return ok }
	check("memory", "", isMemory)
	check("sqlite", filepath.Join(t.TempDir(), "open.db"), isSQL)
	check("postgres", newPGSchema(t), isSQL)
	openTestRedis(t, testRedisPrefix(t)) // a clear failure when Redis is not there
	check("redis", testRedisURL(), isRedis)

	// Empty DSNs take the defaults: the environment overrides, a fresh SQLite file.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	check("sqlite", "", isSQL)
	if dbs, _ := filepath.Glob(filepath.Join(tmp, "retrysafe-sqlite-*", "reference.db")); len(dbs) != 1 {
		t.Errorf("the default SQLite file is not in a new temp dir: %v", dbs)
	}
	t.Setenv(EnvPostgresDSN, newPGSchema(t))
	check("postgres", "", isSQL)
	t.Setenv(EnvRedisURL, testRedisURL())
	check("redis", "", isRedis)

	for _, name := range []string{"mongo", "", "Memory", "sqlite3"} {
		s, err := OpenStore(ctx, name, "")
		if err == nil {
			s.Close()
			t.Errorf("OpenStore(%q) succeeded", name)
			continue
		}
		if !errors.Is(err, ErrUnknownStore) || !strings.Contains(err.Error(), "memory, sqlite, postgres, redis") {
			t.Errorf("OpenStore(%q) = %v, want ErrUnknownStore listing the stores", name, err)
		}
	}
}

func TestDefaultDSN(t *testing.T) {
	t.Setenv(EnvPostgresDSN, "")
	t.Setenv(EnvRedisURL, "")
	for store, want := range map[string]string{"postgres": DefaultPostgresDSN, "redis": DefaultRedisURL, "memory": ""} {
		if got, err := DefaultDSN(store); err != nil || got != want {
			t.Errorf("DefaultDSN(%s) = %q, %v; want %q", store, got, err, want)
		}
	}
	t.Setenv(EnvPostgresDSN, "postgres://elsewhere/db")
	t.Setenv(EnvRedisURL, "redis://elsewhere:6379/1")
	if got, _ := DefaultDSN("postgres"); got != "postgres://elsewhere/db" {
		t.Errorf("DefaultDSN(postgres) ignores %s: %q", EnvPostgresDSN, got)
	}
	if got, _ := DefaultDSN("redis"); got != "redis://elsewhere:6379/1" {
		t.Errorf("DefaultDSN(redis) ignores %s: %q", EnvRedisURL, got)
	}
	t.Setenv("TMPDIR", t.TempDir())
	a, errA := DefaultDSN("sqlite")
	b, errB := DefaultDSN("sqlite")
	if errA != nil || errB != nil || a == b || filepath.Base(a) != "reference.db" {
		t.Errorf("DefaultDSN(sqlite) = %q, %q (%v, %v); want a file in a new temp dir each time", a, b, errA, errB)
	}
	for _, p := range []string{a, b} {
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			t.Errorf("the temp dir of %q does not exist: %v", p, err)
		}
	}
}
