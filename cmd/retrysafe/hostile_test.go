package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

// hostileServer answers GET / politely (so the run starts) and misbehaves, in one way, on
// every other path: the operations and their observers.
type hostileServer struct {
	mode  string
	quit  chan struct{} // closed when the test ends: ends the handlers that hang
	posts atomic.Int64  // POSTs seen: the first (the run's baseline) is answered normally
}

// hostileModes are the ways hostileServer misbehaves.
var hostileModes = []string{"hang", "reset", "garbage", "endless", "huge", "badjson", "redirect"}

const hugeBody = 50 << 20

func (h *hostileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		_, _ = w.Write([]byte("ok"))
		return
	}
	if r.Method == http.MethodPost && h.posts.Add(1) == 1 {
		w.WriteHeader(http.StatusCreated) // the baseline: the target misbehaves from then on (mid-run)
		_, _ = w.Write([]byte(`{"id":"ord_0"}`))
		return
	}
	switch h.mode {
	case "hang":
		select {
		case <-r.Context().Done():
		case <-h.quit:
		}
	case "reset":
		if conn := hijack(w); conn != nil {
			_ = conn.(*net.TCPConn).SetLinger(0) // close with RST
			conn.Close()
		}
	case "garbage":
		if conn := hijack(w); conn != nil {
			_, _ = conn.Write([]byte("\x00\x01\x02 SSH-2.0-not-http \xff\xfe\r\n\r\n"))
			conn.Close()
		}
	case "endless":
		w.WriteHeader(http.StatusCreated)
		chunk := []byte(strings.Repeat(`{"id":1}`, 512))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "huge":
		w.Header().Set("Content-Length", fmt.Sprint(hugeBody))
		w.WriteHeader(http.StatusCreated)
		chunk := []byte(strings.Repeat("a", 1<<16))
		for sent := 0; sent < hugeBody; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "badjson":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id": "ord_1", "count": 1, "ref": `))
	case "redirect":
		http.Redirect(w, r, r.URL.String(), http.StatusFound)
	}
}

// hijack takes the connection over from net/http (nil if it cannot).
func hijack(w http.ResponseWriter) net.Conn {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return nil
	}
	return conn
}

const hostileTarget = `name: hostile
instances: ["%s"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000}'
    observer:
      http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}
`

// TestRunAgainstHostileTarget checks that a run against a target that, once the run is under
// way, hangs, resets, answers garbage, endless or huge bodies, invalid JSON or a redirect loop
// ends within its deadline with the verdict the misbehaviour implies, never a hang or a panic.
func TestRunAgainstHostileTarget(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		exit    int
		verdict reports.Verdict
		reason  string // in the failure or reason of the replay property
	}{
		{"hang", exitIncomplete, reports.Unknown, "got no answer"},
		{"reset", exitIncomplete, reports.Unknown, "got no answer"},
		{"garbage", exitIncomplete, reports.Unknown, "malformed HTTP"},
		{"endless", exitIncomplete, reports.Unknown, "larger than 1 MiB"},
		{"huge", exitIncomplete, reports.Unknown, "larger than 1 MiB"},
		{"badjson", exitIncomplete, reports.Unknown, "not JSON"},
		{"redirect", exitViolation, reports.Fail, "expected a 2xx for the first send, got 302"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := &hostileServer{mode: tc.mode, quit: make(chan struct{})}
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer close(h.quit)
			dir := t.TempDir()
			target := writeTargetFile(t, dir, fmt.Sprintf(hostileTarget, srv.URL))
			reportDir := filepath.Join(dir, "report")
			res := execCLI(t, "run", "--target", target, "--report-dir", reportDir, "--timeout", "20s",
				"--attempt-timeout", "1s", "--label-filter", "property:replay || property:race",
				"--replays", "2", "--burst", "2", "--rounds", "1")
			if res.elapsed > 20*time.Second {
				t.Errorf("the run took %v, beyond its 20s deadline", res.elapsed)
			}
			if res.code != tc.exit {
				t.Fatalf("exit %d, want %d:\n%s", res.code, tc.exit, res.out)
			}
			run := readReport(t, reportDir)
			if len(run.Properties) != 2 {
				t.Fatalf("properties %+v, want replay and race", run.Properties)
			}
			for _, p := range run.Properties {
				if p.Verdict != tc.verdict {
					t.Errorf("%s: verdict %s, want %s", p.Name, p.Verdict, tc.verdict)
				}
			}
			replay := run.Properties[0]
			if got := replay.Reason + " " + replay.Specs[0].Failure; !strings.Contains(got, tc.reason) {
				t.Errorf("replay: reason and failure %q, want %q in them", got, tc.reason)
			}
			if strings.Contains(res.out, "panic") {
				t.Errorf("output mentions a panic:\n%s", res.out)
			}
		})
	}
}

// TestRunBaselineRefused checks that a target that refuses every request (wrong credentials,
// say) stops the run before any property, with exit 2, the request and answer, and what to check.
func TestRunBaselineRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"bad token"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	target := writeTargetFile(t, dir, fmt.Sprintf(hostileTarget, srv.URL))
	res := execCLI(t, "run", "--target", target, "--report-dir", filepath.Join(dir, "report"))
	if res.code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", res.code, exitUsage, res.out)
	}
	mustContain(t, "output", res.out, "baseline request did not succeed", "orders", "refused (401)", "credentials", "< 401", `bad token`)
	if strings.Contains(res.out, "violated") || strings.Contains(res.out, "PROPERTY") {
		t.Errorf("a refused baseline must stop before any property:\n%s", res.out)
	}
}
