package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// clientFile describes a JSON client of /v1/orders whose identity is its ref; %EXTRA% is
// replaced by each test.
const clientFile = `name: client-api-test
clients:
  - name: t
    timeout: 20s
%EXTRA%
    operations:
      - name: orders
        path: /v1/orders
        identity: [$.ref]
        response: {status: 201, body: '{"n": {{.Seq}}, "ref": {{json .Ref}}}'}
    retry: {max_attempts: 3, attempt_timeout: 1s, backoff: {initial: 50ms, max: 200ms}}
`

// testClient parses clientFile.
func testClient(t *testing.T, extra string) *targets.Client {
	t.Helper()
	tg, err := targets.Parse("t.yaml", []byte(strings.Replace(clientFile, "%EXTRA%", extra, 1)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return tg.Clients[0]
}

// post sends one attempt and returns its status and body (status 0: no answer).
func post(t *testing.T, hc *http.Client, url, key, ref string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"ref": %q}`, ref)))
	req.GetBody = nil // no re-send by net/http on a dropped connection
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The scripted API answers as planned per operation (told apart by identity, in order of first
// arrival), processes and stores only what it processes, replays by key, refuses a key reused by
// another operation, answers 404 to another path, and records every attempt with its answer.
func TestScriptedAPI(t *testing.T) {
	c := testClient(t, "")
	hist := history.New(history.NewRedactor(nil, nil))
	a, err := newAPI(c, c.Retry, hist, []plan{{drop, success}, {status(429, time.Second)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	hc := &http.Client{Timeout: 5 * time.Second}
	steps := []struct {
		key, ref, path string
		status         int
		body           string
	}{
		{"k1", "r-1", "/v1/orders", 0, ""},                            // processed, then the connection closed
		{"k1", "r-1", "/v1/orders", 201, `{"n": 1, "ref": "r-1"}`},    // the stored answer replayed
		{"k1", "r-2", "/v1/orders", 422, "used by another operation"}, // the key of another operation
		{"k2", "r-2", "/v1/orders", 429, "planned by the harness"},
		{"k2", "r-2", "/v1/orders", 429, ""},                       // the plan's last answer repeats
		{"k3", "r-3", "/v1/orders", 201, `{"n": 2, "ref": "r-3"}`}, // past the plans: success
		{"k3", "r-3", "/v1/refunds", 404, "no operation"},
	}
	for i, st := range steps {
		status, body := post(t, hc, a.url+st.path, st.key, st.ref)
		if status != st.status || !strings.Contains(body, st.body) {
			t.Errorf("step %d (%s %s): %d %q, want %d %q", i+1, st.key, st.ref, status, body, st.status, st.body)
		}
	}
	a.settle() // a closed connection reaches the client before its handler records the attempt
	var answers []string
	for _, at := range a.history() {
		answers = append(answers, at.Answer)
		if at.Answered.Before(at.Start) || at.Life != 1 {
			t.Errorf("attempt %d answered at %v, before its start %v (life %d)", at.Seq, at.Answered, at.Start, at.Life)
		}
	}
	want := []string{check.AnswerDrop, check.AnswerReplay, "422", "429", "429", check.AnswerSuccess, check.AnswerUnknownPath}
	if strings.Join(answers, ",") != strings.Join(want, ",") {
		t.Errorf("answers %v, want %v", answers, want)
	}
	if h := a.history(); h[3].RetryAfter != time.Second || h[3].Identity != "r-2" || h[3].Key != "k2" {
		t.Errorf("the 429 recorded %+v", h[3])
	}
	if a.records != 2 {
		t.Errorf("%d records processed, want 2 (r-1 once, r-3)", a.records)
	}
}

// Every non-2xx is written in the shape the client declares for its status (planned failures,
// the 422 of a key reused by another operation, the 404 of another path alike); a planned
// Retry-After replaces a declared one, and the Retry-After written, either, is the attempt's.
func TestScriptedAPIErrorShapes(t *testing.T) {
	c := testClient(t, `    errors:
      default:
        body: '{"error": {"type": "api_error", "status": {{.Status}}, "text": {{json .Text}}, "ref": {{json .Ref}}, "key": {{json .Key}}, "req": {{.Seq}}}}'
        headers: {X-Should-Retry: "true", Retry-After: "2"}
      4xx: {body: '{"error": {"type": "invalid_request_error", "status": {{.Status}}}}', headers: {X-Should-Retry: "false"}}
      "429": {body: 'slow down', content_type: text/plain}`)
	hist := history.New(history.NewRedactor(nil, nil))
	a, err := newAPI(c, c.Retry, hist, []plan{{status(503, 0), success}, {status(503, time.Second)}, {}, {status(429, 0)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	hc := &http.Client{Timeout: 5 * time.Second}
	steps := []struct {
		key, ref, path string
		status         int
		body           string
		header         http.Header
	}{
		{"k1", "r-1", "/v1/orders", 503, `{"error": {"type": "api_error", "status": 503, "text": "Service Unavailable", "ref": "r-1", "key": "k1", "req": 1}}`,
			http.Header{"X-Should-Retry": {"true"}, "Retry-After": {"2"}, "Content-Type": {"application/json"}}},
		{"k1", "r-1", "/v1/orders", 201, `{"n": 1, "ref": "r-1"}`, nil},
		{"k2", "r-2", "/v1/orders", 503, `"req": 3`, http.Header{"Retry-After": {"1"}}},
		{"k1", "r-3", "/v1/orders", 422, `{"error": {"type": "invalid_request_error", "status": 422}}`, http.Header{"X-Should-Retry": {"false"}}},
		{"k3", "r-4", "/v1/orders", 429, "slow down", http.Header{"Content-Type": {"text/plain"}}},
		{"k4", "r-5", "/v1/refunds", 404, `{"error": {"type": "invalid_request_error", "status": 404}}`, nil},
	}
	for i, st := range steps {
		req, _ := http.NewRequest(http.MethodPost, a.url+st.path, strings.NewReader(fmt.Sprintf(`{"ref": %q}`, st.ref)))
		req.Header.Set("Idempotency-Key", st.key)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != st.status || !strings.Contains(string(b), st.body) {
			t.Errorf("step %d: %d %s, want %d %s", i+1, resp.StatusCode, b, st.status, st.body)
		}
		for k := range st.header {
			if resp.Header.Get(k) != st.header.Get(k) {
				t.Errorf("step %d: %s: %q, want %q", i+1, k, resp.Header.Get(k), st.header.Get(k))
			}
		}
	}
	a.settle()
	var ras []time.Duration
	for _, at := range a.history() {
		ras = append(ras, at.RetryAfter)
	}
	if want := []time.Duration{2 * time.Second, 0, time.Second, 0, 0, 0}; !slices.Equal(ras, want) {
		t.Errorf("recorded Retry-After %v, want %v (the declared 2s, the planned 1s over it, none where the entry declares none)", ras, want)
	}
}

// A bare error is written as planned, whatever error shape the client declares: a 503 in
// text/plain, a 422 whose body is {}; and every request is in the history once the API settles.
func TestScriptedAPIBareErrors(t *testing.T) {
	c := testClient(t, `    errors:
      default: {body: '{"error": {"type": "api_error"}}', headers: {X-Should-Retry: "true"}}`)
	a, err := newAPI(c, c.Retry, history.New(history.NewRedactor(nil, nil)), []plan{{bareStatus(503, plainText)}, {bareStatus(422, emptyJSON)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	hc := &http.Client{Timeout: 5 * time.Second}
	for i, want := range []struct {
		ref, ctype, body string
		status           int
	}{
		{"r-1", "text/plain; charset=utf-8", "Service Unavailable\n", 503},
		{"r-2", "application/json", "{}", 422},
	} {
		req, _ := http.NewRequest(http.MethodPost, a.url+"/v1/orders", strings.NewReader(fmt.Sprintf(`{"ref": %q}`, want.ref)))
		req.Header.Set("Idempotency-Key", want.ref+"-k")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want.status || string(b) != want.body || resp.Header.Get("Content-Type") != want.ctype || resp.Header.Get("X-Should-Retry") != "" {
			t.Errorf("attempt %d: %d %q %q (X-Should-Retry %q), want %d %q %q and no declared header", i+1, resp.StatusCode,
				resp.Header.Get("Content-Type"), b, resp.Header.Get("X-Should-Retry"), want.status, want.ctype, want.body)
		}
	}
	a.settle()
	if h := a.history(); len(h) != 2 || h[0].Answer != "503" || string(h[1].RespBody) != "{}" {
		t.Errorf("history %+v, want the 503 and the 422 {}", h)
	}
}

// A hold answer waits for the client to give up, at most its attempt timeout and a second, and
// closes the connection without an answer, processing nothing.
func TestScriptedAPIHolds(t *testing.T) {
	c := testClient(t, "")
	a, err := newAPI(c, c.Retry, history.New(history.NewRedactor(nil, nil)), []plan{{hold}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	a.holdFor = 300 * time.Millisecond
	start := time.Now()
	status, _ := post(t, &http.Client{Timeout: 5 * time.Second}, a.url+"/v1/orders", "k1", "r-1")
	if took := time.Since(start); status != 0 || took < 250*time.Millisecond || took > 3*time.Second {
		t.Errorf("a held attempt got %d after %v, want no answer after about 300ms", status, took)
	}
	if a.records != 0 {
		t.Errorf("a held attempt was processed")
	}
}

// A client that insists on https gets the scripted API over TLS, its CA in {{.CAFile}}.
func TestRunClientTOverHTTPS(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(clientFile, "%EXTRA%", "    https: true", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := RunClientT(t, file, func(ctx context.Context, r framework.ClientRun) error {
		pem, err := os.ReadFile(r.CAFile)
		if err != nil || !strings.HasPrefix(r.BaseURL, "https://") {
			return fmt.Errorf("no CA file (%v) or not https: %s", err, r.BaseURL)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		defer hc.CloseIdleConnections()
		var errs []error
		for _, op := range r.Ops {
			key := uuid.NewString()
			for attempt := 1; ; attempt++ {
				status, body := post(t, hc, r.BaseURL+"/v1/orders", key, op.Ref)
				if status == 201 {
					break
				}
				if attempt == 3 {
					errs = append(errs, fmt.Errorf("%s: %d %s", op.Ref, status, body))
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return errors.Join(errs...)
	}, framework.Select("property:same-key-on-retry", ""))
	if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Pass {
		t.Errorf("same-key-on-retry over https: %+v", run.Properties)
	}
}

// bareT is a T without a name: RunClientT cannot re-execute its test.
type bareT struct{ t *testing.T }

func (b bareT) Helper()                           {}
func (b bareT) Logf(format string, args ...any)   { b.t.Logf(format, args...) }
func (b bareT) Errorf(format string, args ...any) { b.t.Errorf(format, args...) }
func (b bareT) Fatalf(format string, args ...any) { b.t.Fatalf(format, args...) }
func (b bareT) Cleanup(f func())                  { b.t.Cleanup(f) }

// Without a test name to re-execute, the restart scenario skips and says why.
func TestRunClientTRestartNeedsATestName(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(clientFile, "%EXTRA%", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := RunClientT(bareT{t}, file, func(context.Context, framework.ClientRun) error { return errors.New("never called") },
		framework.Select("property:restart-reuses-key", ""))
	if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Skipped || !strings.Contains(run.Properties[0].Reason, "re-executes the test binary by test name") {
		t.Errorf("restart-reuses-key without a test name: %+v", run.Properties)
	}
}

// The scripted API tells operations apart as the checkers do: a new key after a 2xx is a new
// operation of its identity, answered with a success (it takes no plan: the next identity still
// gets the plan meant for it); a new key after a failure stays in the operation and follows its
// plan.
func TestScriptedAPIGroupsLikeTheCheckers(t *testing.T) {
	c := testClient(t, "")
	hist := history.New(history.NewRedactor(nil, nil))
	a, err := newAPI(c, c.Retry, hist, []plan{{status(503, 0), success}, {status(429, 0), success}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	hc := &http.Client{Timeout: 5 * time.Second}
	steps := []struct {
		key, ref string
		status   int
	}{
		{"k1", "r-1", 503},
		{"k2", "r-1", 201}, // a new key after a failure: the operation's second attempt
		{"k3", "r-1", 201}, // a new key after the 201: r-1 #2, a success
		{"k4", "r-2", 429}, // the second identity's plan
		{"k4", "r-2", 201},
	}
	for i, st := range steps {
		if status, body := post(t, hc, a.url+"/v1/orders", st.key, st.ref); status != st.status {
			t.Errorf("step %d (%s %s): %d %s, want %d", i+1, st.key, st.ref, status, body, st.status)
		}
	}
	a.settle()
	var got []string
	for _, op := range check.GroupClientOps(c, a.history(), nil) {
		got = append(got, fmt.Sprintf("%s:%d", op.Name(), len(op.Attempts)))
	}
	if want := []string{"r-1:2", "r-1 #2:1", "r-2:2"}; !slices.Equal(got, want) {
		t.Errorf("operations %q, want %q", got, want)
	}
}

// A planned condition of the policy's retries sets its member in the declared error shape (met)
// or removes it (not met); a planned should-retry value replaces the declared header, "" removes
// it; unplanned, the shape is written as declared.
func TestScriptedAPIWritesWhatDecides(t *testing.T) {
	c := testClient(t, `    errors:
      default: {body: '{"error": {"type": "api_error", "code": "other"}}', headers: {Should-Retry: "true"}}`)
	p := c.Retry
	p.RetriesWhen = []targets.RetryWhen{{Status: 429, JSONPath: "$.error.code", Equals: "lock_timeout"}}
	p.ShouldRetryHeader = &targets.ShouldRetryHeader{Name: "Should-Retry", Retry: "true", Never: "false"}
	met, unmet := status(429, 0), status(429, 0)
	met.when, met.met, unmet.when = &p.RetriesWhen[0], true, &p.RetriesWhen[0]
	plans := []plan{{withShouldRetry(p, met, "")}, {unmet}, {withShouldRetry(p, status(503, 0), "false")}, {status(503, 0)}}
	a, err := newAPI(c, p, history.New(history.NewRedactor(nil, nil)), plans, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	hc := &http.Client{Timeout: 5 * time.Second}
	for i, want := range []struct {
		body, header string
		decision     targets.RetryDecision
	}{
		{`{"error":{"code":"lock_timeout","type":"api_error"}}`, "", targets.DecideRetry},
		{`{"error":{"type":"api_error"}}`, "true", targets.DecideRetry}, // the declared header still decides
		{`{"error": {"type": "api_error", "code": "other"}}`, "false", targets.DecideNever},
		{`{"error": {"type": "api_error", "code": "other"}}`, "true", targets.DecideRetry},
	} {
		req, _ := http.NewRequest(http.MethodPost, a.url+"/v1/orders", strings.NewReader(fmt.Sprintf(`{"ref": "r-%d"}`, i)))
		req.Header.Set("Idempotency-Key", fmt.Sprintf("k-%d", i))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want.body || resp.Header.Get("Should-Retry") != want.header {
			t.Errorf("attempt %d: %s with Should-Retry %q, want %s with %q", i+1, b, resp.Header.Get("Should-Retry"), want.body, want.header)
		}
		if d := p.Decide(resp.StatusCode, resp.Header, b); d != want.decision {
			t.Errorf("attempt %d: the policy decides %d, want %d", i+1, d, want.decision)
		}
	}
}
