package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Credentials of the secrets test: none of these may appear in any output.
const (
	aliceToken    = "sekrit-alice-TOKEN-123"
	bobAPIKey     = "key-bob-SECRET-456"
	bobExtra      = `bob-"quoted"\SECRET-321` // found escaped in JSON and in quoted error text
	topSecret     = "top-level-SECRET-654"
	sessionCookie = "srv-COOKIE-SECRET-789"
	aliceCookie   = "alice-COOKIE-SECRET-147"
)

// echoServer is a deliberately broken API that leaks everything it is sent: every answer
// echoes the request headers (in the body and in a response header) and sets a session
// cookie. POSTs create a new record each time (no idempotency: replay, race and control
// evidence); the orders observer counts them; the refunds observer fails with the request
// headers in its error body.
type echoServer struct {
	mu      sync.Mutex
	records map[string]int // by path and ref
	seq     int
}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	echo := map[string]any{"headers": r.Header, "url": r.URL.String(), "body": string(body)}
	w.Header().Set("X-Echo-Authorization", r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key"))
	w.Header().Set("Set-Cookie", "session="+sessionCookie+"; Path=/; HttpOnly")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost:
		var in struct{ Ref string }
		_ = json.Unmarshal(body, &in)
		s.mu.Lock()
		s.seq++
		s.records[r.URL.Path+" "+in.Ref]++
		echo["id"] = s.seq
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case r.URL.Path == "/v1/orders":
		s.mu.Lock()
		echo["count"] = s.records["/v1/orders "+r.URL.Query().Get("ref")]
		s.mu.Unlock()
	case r.URL.Path == "/v1/refunds":
		w.WriteHeader(http.StatusInternalServerError)
	}
	_ = json.NewEncoder(w).Encode(echo)
}

const secretsTarget = `name: leaky
instances: ["%s"]
operations:
  - name: orders
    path: /v1/orders
    headers: {X-Signature: "${RS_TEST_TOP_SECRET}"}
    body: '{"ref": "{{.Ref}}", "amount": 1000}'
    variant_body: '{"ref": "{{.Ref}}", "amount": 2000}'
    observer:
      http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}
  - name: refunds
    path: /v1/refunds
    body: '{"ref": "{{.Ref}}", "amount": 10}'
    observer:
      http: {path: /v1/refunds, query: "ref={{.Ref}}", jsonpath: $.count}
tenants:
  - name: alice
    headers:
      Authorization: "Bearer ${RS_TEST_ALICE_TOKEN}"
      Cookie: "pref=1; sid=` + aliceCookie + `"
  - name: bob
    headers: {X-Api-Key: "${RS_TEST_BOB_KEY}", X-Bob-Note: '` + bobExtra + `'}
    secrets: ['` + bobExtra + `']
secrets: ["${RS_TEST_TOP_SECRET}"]
retention: 1s
`

// TestRunLeaksNoSecret runs every property against a target that echoes its credentials
// and fails on purpose, and greps everything the run printed and wrote for them.
func TestRunLeaksNoSecret(t *testing.T) {
	t.Setenv("RS_TEST_ALICE_TOKEN", aliceToken)
	t.Setenv("RS_TEST_BOB_KEY", bobAPIKey)
	t.Setenv("RS_TEST_TOP_SECRET", topSecret)
	srv := httptest.NewServer(&echoServer{records: map[string]int{}})
	defer srv.Close()
	dir := t.TempDir()
	target := writeTargetFile(t, dir, fmt.Sprintf(secretsTarget, srv.URL))
	reportDir := filepath.Join(dir, "report")
	res := execCLI(t, "run", "--target", target, "--report-dir", reportDir, "--timeout", "60s",
		"--replays", "3", "--burst", "2", "--rounds", "1", "--max-wait", "5s", "--attempt-timeout", "2s")
	if res.code != exitViolation {
		t.Fatalf("exit %d, want %d (the target is broken on purpose):\n%s", res.code, exitViolation, res.out)
	}
	// The distinctive part of each secret: what stays whole however the secret is escaped.
	secrets := []string{aliceToken, bobAPIKey, "SECRET-321", topSecret, sessionCookie, aliceCookie,
		base64.StdEncoding.EncodeToString([]byte(aliceToken))}
	outputs := map[string]string{"terminal output": res.out}
	files, _ := os.ReadDir(reportDir)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(reportDir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		outputs[f.Name()] = string(b)
	}
	for _, must := range []string{"junit.xml", "report.json", "summary.md"} {
		if _, ok := outputs[must]; !ok {
			t.Errorf("the run wrote no %s", must)
		}
	}
	// The evidence must be there, or the test proves nothing.
	mustContain(t, "report.json", outputs["report.json"], `"verdict": "fail"`, "[REDACTED]", "X-Echo-Authorization")
	for name, text := range outputs {
		for _, s := range secrets {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("%s leaks %q: ...%s...", name, s, text[max(0, i-200):min(len(text), i+len(s)+50)])
			}
		}
	}
}
