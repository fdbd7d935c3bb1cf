package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
)

// providerFile describes providerSDK (targets/examples/client-provider-sdk.yaml).
const providerFile = "../../targets/examples/client-provider-sdk.yaml"

// providerSDK is a small payments SDK shaped like the form-body SDKs of payment providers: a
// charge is a form POST with the reference in metadata[ref] and an Idempotency-Key drawn once and
// stored (with the charge's state) before the first attempt; an error is read as the provider
// writes it ({"error": {"type", "message"}}: anything else is an answer it does not understand,
// never retried), its X-Should-Retry header obeyed (absent: 409, 429 and 5xx are retried, and a
// connection closed or timed out); Retry-After is honoured on 429 and 503 only; retry n waits
// 75-100 % of min(2 s, 300 ms * 2^(n-1)). It makes at most 4 attempts; a charge none of whose
// attempts was answered it reports pending (suites.ErrPending) and resumes on its next run.
type providerSDK struct {
	base  string
	hc    *http.Client
	state string
}

// The SDK's settings, as client-provider-sdk.yaml declares them.
const (
	providerAttempts       = 4
	providerAttemptTimeout = time.Second
	providerInitial        = 300 * time.Millisecond
	providerMaxDelay       = 2 * time.Second
)

// providerError is the provider's error shape.
type providerError struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// charge is a charge's state in the SDK's state directory.
type charge struct {
	Ref  string `json:"ref"`
	Key  string `json:"key"`
	Done bool   `json:"done"`
}

// runProvider is the RunClientT function: each operation a charge, one after another.
func runProvider(ctx context.Context, run suites.ClientRun) error {
	tr := &http.Transport{ForceAttemptHTTP2: false, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	defer tr.CloseIdleConnections()
	sdk := &providerSDK{base: run.BaseURL, hc: &http.Client{Transport: tr}, state: run.StateDir}
	return eachOperation(ctx, run, func(i int, op suites.ClientOp) error { return sdk.charge(ctx, i, op.Ref, op.Params) })
}

// charge performs operation index (1-based) with its stored key, or a new one stored first.
func (c *providerSDK) charge(ctx context.Context, index int, ref string, params map[string]any) error {
	file := filepath.Join(c.state, fmt.Sprintf("charge-%d.json", index))
	var st charge
	if data, err := os.ReadFile(file); err != nil || json.Unmarshal(data, &st) != nil || st.Ref != ref {
		st = charge{Ref: ref, Key: uuid.NewString()}
		if err := save(file, st); err != nil {
			return err
		}
	}
	if st.Done {
		return nil
	}
	form := url.Values{"amount": {fmt.Sprint(params["amount"])}, "currency": {fmt.Sprint(params["currency"])}, "metadata[ref]": {ref}}
	answered := false
	for n := 1; ; n++ {
		wait, retry, got, err := c.attempt(ctx, st.Key, []byte(form.Encode()))
		answered = answered || got
		if err == nil {
			st.Done = true
			return save(file, st)
		}
		if !retry || n == providerAttempts || ctx.Err() != nil {
			if !answered && ctx.Err() == nil { // kept in the state: the next run resumes it
				return fmt.Errorf("%w: none of %d attempts answered, the last: %v", suites.ErrPending, n, err)
			}
			return err
		}
		capped := min(providerMaxDelay, providerInitial<<(n-1))
		delay := max(wait, time.Duration(float64(capped)*(0.75+0.25*rand.Float64())))
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// attempt sends one attempt and says what its answer asks: the Retry-After to honour, whether to
// retry; answered says whether it got an answer at all; err is nil for a 2xx.
func (c *providerSDK) attempt(ctx context.Context, key string, body []byte) (wait time.Duration, retry, answered bool, err error) {
	actx, cancel := context.WithTimeout(ctx, providerAttemptTimeout)
	defer cancel()
	resp, data, err := postOnce(actx, c.hc, c.base+"/v1/charges", "application/x-www-form-urlencoded", key, body)
	if err != nil {
		return 0, true, false, err // a connection closed, an attempt timed out
	}
	if resp.StatusCode < 300 {
		return 0, false, true, nil
	}
	var pe providerError
	if json.Unmarshal(data, &pe) != nil || pe.Error.Type == "" {
		return 0, false, true, fmt.Errorf("unexpected answer %d: %.100s", resp.StatusCode, data)
	}
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		retry = true
	case "false":
	default:
		retry = resp.StatusCode == 409 || resp.StatusCode == 429 || resp.StatusCode >= 500
	}
	if resp.StatusCode == 429 || resp.StatusCode == 503 {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(secs) * time.Second
		}
	}
	return wait, retry, true, fmt.Errorf("%d %s: %s", resp.StatusCode, pe.Error.Type, pe.Error.Message)
}

// save writes a charge's state: a temporary file renamed over the old one.
func save(file string, st charge) error {
	data, _ := json.Marshal(st)
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// providerVariant writes client-provider-sdk.yaml changed by edit into a temporary file.
func providerVariant(t *testing.T, edit func(string) string) string {
	t.Helper()
	return fileVariant(t, providerFile, edit)
}

// fileVariant writes a target file changed by edit into a temporary file of the same name.
func fileVariant(t *testing.T, name string, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	changed := edit(string(data))
	if changed == string(data) {
		t.Fatalf("the edit changed nothing in %s", name)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// The SDK, as client-provider-sdk.yaml describes it, passes every client property: its errors
// come in its provider's shape, its form identity is read from metadata[ref], its Retry-After is
// judged on 429 and 503 only, its 75-100 % jitter against that envelope.
func TestProviderSDKPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through every client scenario")
	}
	run := suites.RunClientT(t, providerFile, runProvider)
	got, kinds := verdicts(run)
	if len(got) != 10 {
		t.Errorf("%d client properties ran, want 10: %v", len(got), got)
	}
	for p, v := range got {
		if v != reports.Pass {
			t.Errorf("%s: %s %v, want pass", p, v, kinds[p])
		}
	}
}

// Without the errors block the scripted API writes its own error body, not the provider's
// shape: the SDK does not understand it and does not retry, and fails retries-transient (the
// 503, the 409, the 429 and the 400 whose X-Should-Retry says true not retried) and bounded
// (given up after one attempt).
func TestProviderSDKFailsWithoutItsErrorShape(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through two client scenarios")
	}
	file := providerVariant(t, func(s string) string {
		start, end := strings.Index(s, "    errors:\n"), strings.Index(s, "    operations:\n")
		if start < 0 || end < start {
			return s
		}
		return s[:start] + s[end:]
	})
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, file, runProvider, suites.Select("property:retries-transient || property:bounded", ""))
	got, kinds := verdicts(run)
	noRetry := func(n int) []reports.Kind { return slices.Repeat([]reports.Kind{reports.KindNoRetry}, n) }
	if got["retries-transient"] != reports.Fail || !slices.Equal(kinds["retries-transient"], noRetry(4)) {
		t.Errorf("retries-transient: %s %v, want fail with four no-retry (a 503, a 409, a 429 and a 400 saying X-Should-Retry: true in the harness's own shape are not retried)",
			got["retries-transient"], kinds["retries-transient"])
	}
	if got["bounded"] != reports.Fail || !slices.Equal(kinds["bounded"], noRetry(1)) {
		t.Errorf("bounded: %s %v, want fail with one no-retry (a 503 in the harness's own shape is not retried)", got["bounded"], kinds["bounded"])
	}
}

// Declared honouring Retry-After on every status (true), the SDK fails retry-after on the 409
// it retries on its own backoff: the false alarm a per-status list avoids.
func TestProviderSDKFailsRetryAfterOnEveryStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through the retry-after scenario")
	}
	file := providerVariant(t, func(s string) string {
		return strings.Replace(s, "honors_retry_after: [429, 503]", "honors_retry_after: true", 1)
	})
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, file, runProvider, suites.Select("property:retry-after", ""))
	got, kinds := verdicts(run)
	if got["retry-after"] != reports.Fail || len(kinds["retry-after"]) != 1 || kinds["retry-after"][0] != reports.KindRetryBeforeRetryAfter {
		t.Errorf("retry-after: %s %v, want fail with one retry-before-retry-after", got["retry-after"], kinds["retry-after"])
	}
	var msgs []string
	for _, p := range run.Properties {
		for _, s := range p.Specs {
			for _, a := range s.Anomalies {
				msgs = append(msgs, a.Message)
			}
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "after a 409 with Retry-After 1s") {
		t.Errorf("retry-after anomalies %q, want one after the 409", msgs)
	}
}
