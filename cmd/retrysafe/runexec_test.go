package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// syncBuffer is a bytes.Buffer safe for the goroutines that print during a run.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliResult is what one in-process `retrysafe` invocation left behind.
type cliResult struct {
	code    int
	out     string // stdout and stderr, with the final error line main would print
	elapsed time.Duration
}

// invoke runs `retrysafe args...` in-process and returns everything it printed (stdout and
// stderr), the exit code main would use, and the error main would print.
func invoke(args ...string) (string, int, error) {
	root := newRoot()
	var buf syncBuffer
	root.SetArgs(args)
	root.SetOut(&buf)
	root.SetErr(&buf)
	err := root.Execute()
	return buf.String(), exitCode(err), err
}

// execCLI runs `retrysafe args...` in-process, as main would, and returns its exit code
// and everything it printed.
func execCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	start := time.Now()
	out, code, err := invoke(args...)
	res := cliResult{code: code, out: out, elapsed: time.Since(start)}
	if err != nil {
		res.out += "retrysafe: " + err.Error() + "\n"
	}
	return res
}

// writeTargetFile writes a target file into dir and returns its path.
func writeTargetFile(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readReport reads report.json from a report folder.
func readReport(t *testing.T, dir string) *reports.Run {
	t.Helper()
	run, err := reports.ReadJSON(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("report.json: %v", err)
	}
	return run
}

// referenceTarget is a target file for the reference API at url (tenants alice and bob).
func referenceTarget(url string) string {
	return `name: reference-in-test
instances: ["` + url + `"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    variant_body: '{"ref": "{{.Ref}}", "amount": 2000, "currency": "eur"}'
    observer:
      http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}
tenants:
  - {name: alice, headers: {Authorization: Bearer alice}}
  - {name: bob, headers: {Authorization: Bearer bob}}
profile: {base: ietf, replay_header: "Idempotent-Replayed: true"}
`
}

// startSlowReference serves the correct reference API on 127.0.0.1 (memory store), each
// request delayed by delay.
func startSlowReference(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	api, err := reference.NewAPI(reference.Config{Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mustContain fails unless s contains every one of subs.
func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}
