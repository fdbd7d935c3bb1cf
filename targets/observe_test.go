package targets

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// countServer answers GET /count?ref=R with body(R) for the tenant "Bearer alice" and 401 otherwise,
// and records the cleanup requests it gets.
type countServer struct {
	*httptest.Server
	mu       sync.Mutex
	cleanups []string
}

func newCountServer(t *testing.T, body func(ref string) string) *countServer {
	t.Helper()
	cs := &countServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer alice" {
			http.Error(w, `{"error": "unauthorized"}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodDelete {
			cs.mu.Lock()
			cs.cleanups = append(cs.cleanups, r.URL.RequestURI())
			cs.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path != "/count" || r.Header.Get("X-Observer") != "yes" {
			http.NotFound(w, r)
			return
		}
		_, _ = fmt.Fprint(w, body(r.URL.Query().Get("ref")))
	}))
	t.Cleanup(cs.Close)
	return cs
}

// observerTarget builds a target over the given servers with an HTTP observer using jsonpath.
func observerTarget(t *testing.T, shared bool, jsonpath string, urls ...string) *Target {
	t.Helper()
	src := fmt.Sprintf(`instances: [%s]
shared_store: %v
operations:
  - name: orders
    path: /v1/orders
    observer:
      http:
        path: /count
        query: "ref={{.Ref}}"
        headers: {X-Observer: "yes"}
        jsonpath: %q
tenants:
  - name: alice
    headers: {Authorization: Bearer alice}
cleanup:
  path: /cleanup
  query: "prefix={{.Ref}}&tenant={{.Tenant}}"
`, strings.Join(urls, ", "), shared, jsonpath)
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("%s", strings.Join(probs, "\n"))
	}
	return tg
}

func TestHTTPObserver(t *testing.T) {
	ctx := context.Background()
	num := newCountServer(t, func(ref string) string { return fmt.Sprintf(`{"count": %d, "items": []}`, len(ref)) })
	num2 := newCountServer(t, func(ref string) string { return `{"count": 10}` })
	arr := newCountServer(t, func(ref string) string { return `{"items": [{"ref": "a"}, {"ref": "b"}, {"ref": "c"}]}` })
	cases := []struct {
		name     string
		shared   bool
		jsonpath string
		urls     []string
		want     int
	}{
		{"number", true, "$.count", []string{num.URL}, 4},
		{"array", true, "$.items", []string{arr.URL}, 3},
		{"non-singular path counts nodes", true, "$.items[?@.ref != 'b']", []string{arr.URL}, 2},
		{"shared store asks once", true, "$.items", []string{arr.URL, num.URL}, 3},
		{"separate stores are summed", false, "$.count", []string{num.URL, num2.URL + "/"}, 14},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := observerTarget(t, c.shared, c.jsonpath, c.urls...)
			n, err := tg.CountRecords(ctx, tg.Operations[0], tg.Tenants[0], Vars{Ref: "abcd"}, nil)
			if err != nil || n != c.want {
				t.Errorf("CountRecords = %d, %v; want %d", n, err, c.want)
			}
		})
	}
}

func TestHTTPObserverErrors(t *testing.T) {
	ctx := context.Background()
	bad := map[string]string{
		"garbage":     `<html>oops</html>`,
		"empty":       ``,
		"not a count": `{"count": "three"}`,
		"fraction":    `{"count": 1.5}`,
		"negative":    `{"count": -1}`,
		"missing":     `{"total": 3}`,
		"huge":        `{"count": 1, "pad": "` + strings.Repeat("x", 1<<20) + `"}`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			srv := newCountServer(t, func(string) string { return body })
			tg := observerTarget(t, true, "$.count", srv.URL)
			n, err := tg.CountRecords(ctx, tg.Operations[0], tg.Tenants[0], Vars{Ref: "r"}, srv.Client())
			if err == nil {
				t.Fatalf("CountRecords = %d, want an error", n)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), "orders") {
				t.Errorf("error does not name the operation: %v", err)
			}
		})
	}
	srv := newCountServer(t, func(string) string { return `{"count": 1}` })
	tg := observerTarget(t, true, "$.count", srv.URL)
	if _, err := tg.CountRecords(ctx, tg.Operations[0], nil, Vars{Ref: "r"}, nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("unauthenticated observer: %v", err)
	}
	noObs := opTarget(t, "", "")
	if _, err := noObs.CountRecords(ctx, noObs.Operations[0], nil, Vars{}, nil); err == nil || !strings.Contains(err.Error(), "no observer") {
		t.Errorf("operation without observer: %v", err)
	}
	down := observerTarget(t, true, "$.count", "http://127.0.0.1:1")
	if _, err := down.CountRecords(ctx, down.Operations[0], down.Tenants[0], Vars{Ref: "r"}, nil); err == nil {
		t.Error("unreachable observer: no error")
	}
}

func TestRunCleanupHTTP(t *testing.T) {
	srv := newCountServer(t, func(string) string { return `{}` })
	srv2 := newCountServer(t, func(string) string { return `{}` })
	tg := observerTarget(t, false, "$.count", srv.URL, srv2.URL)
	if err := tg.RunCleanup(context.Background(), nil, "run-42"); err != nil {
		t.Fatal(err)
	}
	want := "/cleanup?prefix=run-42&tenant=alice"
	for _, s := range []*countServer{srv, srv2} {
		if len(s.cleanups) != 1 || s.cleanups[0] != want {
			t.Errorf("cleanups = %v, want [%s] on each instance", s.cleanups, want)
		}
	}
	tg.Tenants[0].Headers["Authorization"] = "Bearer mallory"
	if err := tg.RunCleanup(context.Background(), nil, "run-42"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("rejected cleanup: %v", err)
	}
}

func TestTLSObserverWithCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{"count": 7}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("instances: [%s]\ntls: {ca_file: ca.pem}\noperations:\n  - name: a\n    path: /a\n    observer: {http: {path: /n, jsonpath: $.count}}\n", srv.URL)
	tg, err := Parse(filepath.Join(dir, "t.yaml"), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tg.TLS.CAFile != filepath.Join(dir, "ca.pem") || tg.Instances[0].Addr() != srv.Listener.Addr().String() {
		t.Errorf("TLS %+v, addr %s", tg.TLS, tg.Instances[0].Addr())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tg.TLSConfig()}}
	defer hc.CloseIdleConnections()
	if n, err := tg.CountRecords(context.Background(), tg.Operations[0], nil, Vars{Ref: "r"}, hc); err != nil || n != 7 {
		t.Errorf("CountRecords over TLS = %d, %v", n, err)
	}
	if _, err := tg.CountRecords(context.Background(), tg.Operations[0], nil, Vars{Ref: "r"}, nil); err == nil {
		t.Error("the default client trusted a certificate it should not know")
	}
}
