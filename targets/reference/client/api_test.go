package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is what the scripted API does with one attempt.
type step struct {
	status int               // answer with this status (201 when zero and neither drop nor hold)
	header map[string]string // headers of the answer
	drop   bool              // read the request, then close the connection without answering
	hold   bool              // hold the attempt until the client gives up and closes the connection
	// bare, with a status, is the answer's whole body, written as text/plain: not the API's
	// error shape ({"error": ...}, which every other error answer has).
	bare string
	// json, with an error status, is the answer's body instead of {"error":{"message": ...}}.
	json string
}

var (
	okStep   = step{status: http.StatusCreated}
	dropStep = step{drop: true}
	holdStep = step{hold: true}
)

// answerWith is a step answering status with headers given as name, value pairs.
func answerWith(status int, header ...string) step {
	s := step{status: status, header: map[string]string{}}
	for i := 0; i+1 < len(header); i += 2 {
		s.header[header[i]] = header[i+1]
	}
	return s
}

// script says what the API does with the n-th attempt (n = 1 the first) carrying a ref. It
// runs when the attempt has arrived, so it may also stop the client then (as a kill would).
type script func(ref string, n int) step

// steps is the script doing the same steps for every ref, then answering 201.
func steps(ss ...step) script {
	return func(_ string, n int) step {
		if n <= len(ss) {
			return ss[n-1]
		}
		return okStep
	}
}

// always is the script doing one step for every attempt.
func always(s step) script { return func(string, int) step { return s } }

// seen is one attempt as the API received it.
type seen struct {
	at     time.Time // when its headers arrived
	ref    string
	n      int // its number among the attempts with this ref
	key    string
	hasKey bool
	ctype  string
	body   []byte
	remote string // the client's address: one per connection
}

// api is a scripted orders API on 127.0.0.1 that records every attempt.
type api struct {
	t      *testing.T
	srv    *httptest.Server
	script script
	done   chan struct{}

	mu   sync.Mutex
	seen []seen
}

// newAPI starts a scripted API, closed when the test ends.
func newAPI(t *testing.T, sc script) *api {
	t.Helper()
	a := &api{t: t, script: sc, done: make(chan struct{})}
	a.srv = httptest.NewServer(a)
	t.Cleanup(a.srv.Close)
	t.Cleanup(func() { close(a.done) }) // runs first: releases held attempts
	return a
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != OrdersPath || err != nil {
		a.t.Errorf("API: got %s %s (body error %v), want POST %s", r.Method, r.URL.Path, err, OrdersPath)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var b struct{ Ref string }
	_ = json.Unmarshal(body, &b)
	keys, has := r.Header["Idempotency-Key"]
	s := seen{at: at, ref: b.Ref, hasKey: has, ctype: r.Header.Get("Content-Type"), body: body, remote: r.RemoteAddr}
	if has {
		s.key = strings.Join(keys, ",")
	}
	a.mu.Lock()
	for _, prev := range a.seen {
		if prev.ref == s.ref {
			s.n++
		}
	}
	s.n++
	a.seen = append(a.seen, s)
	a.mu.Unlock()
	a.do(w, r, a.script(s.ref, s.n))
}

// do carries out one step.
func (a *api) do(w http.ResponseWriter, r *http.Request, st step) {
	switch {
	case st.drop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			a.t.Errorf("API: hijack: %v", err)
			return
		}
		conn.Close()
	case st.hold:
		select {
		case <-r.Context().Done():
		case <-a.done:
		}
	default:
		for name, v := range st.header {
			w.Header().Set(name, v)
		}
		status := st.status
		if status == 0 {
			status = http.StatusCreated
		}
		switch {
		case st.bare != "":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			fmt.Fprint(w, st.bare)
		case status >= 300 && st.json != "":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, st.json)
		case status >= 300:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, http.StatusText(status))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"id":"ord_%d","status":%q}`, time.Now().UnixNano(), http.StatusText(status))
		}
	}
}

// attempts returns the attempts seen with a ref ("" for all), in arrival order.
func (a *api) attempts(ref string) []seen {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []seen
	for _, s := range a.seen {
		if ref == "" || s.ref == ref {
			out = append(out, s)
		}
	}
	return out
}

// fast is the policy of tests where the delays are not under test.
var fast = Policy{Initial: 20 * time.Millisecond, Max: 80 * time.Millisecond, AttemptTimeout: 2 * time.Second}

// run is one run of the client in a test.
type run struct {
	sum Summary
	err error
	out string // what Out received
	log string // what Log received
}

// runClient runs the client against a with the given settings; dir "" is a new directory.
func runClient(ctx context.Context, t *testing.T, a *api, cfg Config) run {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = testStateDir(t)
	}
	if cfg.Policy == (Policy{}) {
		cfg.Policy = fast
	}
	if cfg.Ops == nil {
		cfg.Ops = Operations("order", 1)
	}
	cfg.BaseURL = a.srv.URL
	var out, log bytes.Buffer
	cfg.Out, cfg.Log = &out, &log
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sum, err := Run(ctx, cfg)
	return run{sum: sum, err: err, out: out.String(), log: log.String()}
}

// keys returns the keys of attempts, in order.
func keys(ss []seen) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.key
	}
	return out
}

// gaps returns the time between consecutive attempts.
func gaps(ss []seen) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ss); i++ {
		out = append(out, ss[i].at.Sub(ss[i-1].at))
	}
	return out
}

// testStateDir is a test's state directory: in /dev/shm when the machine has it (a durable save's
// fsync there does not wait on a busy disk, which on a CI runner delayed a retry timed by a test
// from 200 ms to 536 ms), else t.TempDir().
func testStateDir(t *testing.T) string {
	t.Helper()
	if dir, err := os.MkdirTemp("/dev/shm", "retrysafe-client-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return t.TempDir()
}
