package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
)

// retryMaxEnv is the variable of the run's env (a configuration's) that sets the client's
// RetryMax.
const retryMaxEnv = "RETRYABLEHTTP_RETRY_MAX"

// payments is a small SDK on go-retryablehttp as its README shows it: one client, each
// operation a POST whose Idempotency-Key is set once, before the first attempt; the library
// retries it. The run's configuration sets RetryMax (RETRYABLEHTTP_RETRY_MAX in its env);
// configure sets the rest up.
// retryWaitMin is the SDK's RetryWaitMin, declared as the backoff's initial in
// testdata/retryablehttp.yaml.
const retryWaitMin = 400 * time.Millisecond

func payments(configure func(*retryablehttp.Client)) suites.ClientFunc {
	return func(ctx context.Context, run suites.ClientRun) error {
		c := retryablehttp.NewClient()
		// 400 ms, not the library's 1 s (a shorter test), nor less: a loaded runner delays an
		// in-process client's retries by tens of milliseconds the harness cannot see as its own
		// stalls (CI: 50 ms waits came after 102-109 ms), past a 50 ms envelope's 20 ms slack.
		c.RetryWaitMin = retryWaitMin
		c.HTTPClient.Timeout = time.Second
		c.Logger = nil
		if v, ok := run.Env[retryMaxEnv]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s %q: %v", retryMaxEnv, v, err)
			}
			c.RetryMax = n
		}
		configure(c)
		defer c.HTTPClient.CloseIdleConnections()
		var failed []error
		for _, op := range run.Ops {
			body, _ := json.Marshal(map[string]any{"ref": op.Ref, "amount": op.Params["amount"]})
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, run.BaseURL+"/v1/payments", body)
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", uuid.NewString())
			resp, err := c.Do(req)
			if err != nil {
				failed = append(failed, fmt.Errorf("%s: %w", op.Ref, err))
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				failed = append(failed, fmt.Errorf("%s: %s", op.Ref, resp.Status))
			}
		}
		return errors.Join(failed...)
	}
}

// recorder is a T that keeps RunClientT's errors instead of failing the test: the test asserts
// the verdicts itself, failing ones included. It has the test's name, so that the restart
// scenario can re-execute the test.
type recorder struct {
	t    *testing.T
	errs []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Name() string                      { return r.t.Name() }
func (r *recorder) Context() context.Context          { return r.t.Context() }
func (r *recorder) Cleanup(f func())                  { r.t.Cleanup(f) }
func (r *recorder) Logf(format string, args ...any)   { r.t.Logf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.t.Fatalf(format, args...) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.t.Logf("(recorded) "+format, args...)
}

// verdicts maps each property of a run to its verdict, and to its anomaly kinds.
func verdicts(run *reports.Run) (map[string]reports.Verdict, map[string][]reports.Kind) {
	v, kinds := map[string]reports.Verdict{}, map[string][]reports.Kind{}
	for _, p := range run.Properties {
		v[p.Name] = p.Verdict
		for _, s := range p.Specs {
			for _, a := range s.Anomalies {
				kinds[p.Name] = append(kinds[p.Name], a.Kind)
			}
		}
	}
	return v, kinds
}

// The verdicts that follow from go-retryablehttp's documented defaults (DefaultRetryPolicy,
// DefaultBackoff), with the key set once per operation, in its two configurations: RetryMax 4
// retries a reset, a timeout and a 503, keeps key and body, bounds itself at 5 attempts besides
// net/http's one re-send after a reset (declared), honours Retry-After on 429 and 503 (a 409 it
// does not retry at all), but backs off without jitter, and a restarted process has forgotten
// its pending key; RetryMax 0 makes one attempt per operation, and every property run in it
// passes (key-present, with no retry to judge, skips).
func TestRetryableHTTPDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through every client scenario")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, "testdata/retryablehttp.yaml", payments(func(*retryablehttp.Client) {}))
	if run == nil {
		t.Fatal("no report")
	}
	got, kinds := verdicts(run)
	want := map[string]reports.Verdict{
		"retries-transient": reports.Pass, "same-key-on-retry": reports.Pass, "new-key-per-operation": reports.Pass,
		"no-retry-on-rejection": reports.Pass, "retry-after": reports.Pass, "bounded": reports.Pass, "key-present": reports.Pass,
		"backoff": reports.Fail, "restart-reuses-key": reports.Fail,
	}
	for p, v := range want {
		if got[p] != v {
			t.Errorf("%s: verdict %s, want %s (anomalies %v)", p, got[p], v, kinds[p])
		}
	}
	if k := kinds["backoff"]; len(k) != 1 || k[0] != reports.KindNoJitter {
		t.Errorf("backoff anomalies %v, want one no-jitter (DefaultBackoff doubles without jitter)", k)
	}
	if k := kinds["restart-reuses-key"]; len(k) == 0 || k[0] != reports.KindKeyLostOnRestart {
		t.Errorf("restart-reuses-key anomalies %v, want key-lost-on-restart (nothing is persisted)", k)
	}
	if len(rec.errs) != 2 {
		t.Errorf("RunClientT reported %d errors, want 2 (backoff, restart-reuses-key):\n%s", len(rec.errs), strings.Join(rec.errs, "\n"))
	}
	for _, c := range []string{"retry-max-4", "retry-max-0"} {
		for _, p := range []string{"bounded", "retries-transient", "key-present"} {
			if v := specVerdict(run, p, "(configuration "+c+")"); v != reports.Pass && (v != reports.Skipped || p != "key-present" || c != "retry-max-0") {
				t.Errorf("%s in configuration %s: %q, want pass", p, c, v)
			}
		}
	}
	devs := strings.Join(run.Target.Deviations, "\n")
	for _, d := range []string{"does not retry a 409", "lets its transport re-send a request", "in configuration retry-max-0: never retries"} {
		if !strings.Contains(devs, d) {
			t.Errorf("the summary's deviations %q do not say %q", run.Target.Deviations, d)
		}
	}
}

// specVerdict is the verdict of the spec of property p whose text contains text ("" when none).
func specVerdict(run *reports.Run, p, text string) reports.Verdict {
	for _, prop := range run.Properties {
		if i := slices.IndexFunc(prop.Specs, func(s reports.Spec) bool { return strings.Contains(s.Text, text) }); prop.Name == p && i >= 0 {
			return prop.Specs[i].Verdict
		}
	}
	return ""
}

// With Backoff = LinearJitterBackoff (RetryWaitMin 50 ms, RetryWaitMax 100 ms) the first two
// retries are an equal jitter from 100 ms doubling, and backoff passes so declared.
func TestRetryableHTTPLinearJitter(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through the backoff scenario")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, "testdata/retryablehttp-linear.yaml", payments(func(c *retryablehttp.Client) {
		c.Backoff, c.RetryWaitMin, c.RetryWaitMax = retryablehttp.LinearJitterBackoff, 50*time.Millisecond, 100*time.Millisecond
	}), suites.Select("property:backoff", ""))
	got, kinds := verdicts(run)
	if got["backoff"] != reports.Pass || len(rec.errs) > 0 {
		t.Errorf("backoff: %s %v, want pass\n%s", got["backoff"], kinds["backoff"], strings.Join(rec.errs, "\n"))
	}
}
