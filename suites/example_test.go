package suites_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// An API team runs the properties from its own `go test`: start (or point at) the API, then
// call suites.RunT with a target file that describes it.
func TestExampleRunT(t *testing.T) {
	api, err := reference.NewAPI(reference.Config{
		Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"},
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout,
		WorkDelay: reference.DefaultWorkDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Setenv("RETRYSAFE_URL", srv.URL)

	// The 24h retention is longer than a test waits: leave the expiry waits out.
	run := suites.RunT(t, "../targets/examples/reference.yaml", suites.Select("!wait:retention", ""))
	if len(run.Properties) < 6 {
		t.Fatalf("ran %d properties, want every property but expiry", len(run.Properties))
	}
}

// charges is a small Stripe-style SDK written the way the source articles ask: a key per
// operation drawn before its first attempt and kept with the pending operation in a state
// directory, the same key and form body on every retry, a retry only of what may be transient,
// exponential backoff with full jitter, at least the Retry-After, and a bounded number of
// attempts.
type charges struct {
	base, state string
	hc          *http.Client
}

// errRejected is an answer the SDK never resends.
var errRejected = errors.New("rejected")

// create performs one operation (the i-th of the run): POST /v1/charges until it succeeds,
// is rejected, or has had its 4 attempts.
func (c *charges) create(ctx context.Context, i int, op suites.ClientOp) error {
	pending := filepath.Join(c.state, fmt.Sprintf("op-%d.key", i))
	done := pending + ".done"
	if _, err := os.Stat(done); err == nil {
		return nil // finished before a restart
	}
	key, err := os.ReadFile(pending)
	resumed := err == nil
	if !resumed {
		key = []byte(uuid.NewString())
		if err := os.WriteFile(pending, key, 0o600); err != nil {
			return err
		}
	}
	form := url.Values{"ref": {op.Ref}, "amount": {fmt.Sprint(op.Params["amount"])}, "currency": {fmt.Sprint(op.Params["currency"])}}.Encode()
	var wait time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		if attempt > 1 || resumed {
			n := max(attempt-1, 1) // retry n; a resumed operation waits as for its first retry
			cap := min(time.Second, 200*time.Millisecond<<(n-1))
			d := max(10*time.Millisecond, rand.N(cap), wait)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/charges", strings.NewReader(form))
		req.GetBody = nil // one attempt is one request: net/http must not re-send it by itself
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", string(key))
		resp, err := c.hc.Do(req)
		wait = 0
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			continue // no answer: retry with the same key
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch s := resp.StatusCode; {
		case s < 300:
			return os.WriteFile(done, nil, 0o600)
		case s == 409 || s == 429 || s >= 500:
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				wait = time.Duration(ra) * time.Second
			}
		default:
			os.WriteFile(done, nil, 0o600)
			return fmt.Errorf("%s: %w (%s)", op.Ref, errRejected, resp.Status)
		}
	}
	return fmt.Errorf("%s: giving up after 4 attempts", op.Ref)
}

// An SDK team drives its client from its own `go test`: suites.RunClientT plays the API the
// target file describes (a scripted, faulty and correct one) and judges the SDK's retries. The
// restart scenario re-executes this test to kill and restart the SDK, keeping its state directory.
func TestExampleRunClientT(t *testing.T) {
	run := suites.RunClientT(t, "../targets/examples/client-sdk.yaml", func(ctx context.Context, r suites.ClientRun) error {
		c := &charges{base: r.BaseURL, state: r.StateDir, hc: &http.Client{Timeout: time.Second}}
		defer c.hc.CloseIdleConnections()
		var failed []error
		for i, op := range r.Ops {
			if err := c.create(ctx, i, op); err != nil {
				if ctx.Err() != nil {
					return err
				}
				failed = append(failed, err)
			}
		}
		return errors.Join(failed...)
	})
	if len(run.Properties) != 10 {
		t.Errorf("ran %d client properties, want 10", len(run.Properties))
	}
	for _, p := range run.Properties {
		if p.Name == "uncertain-stays-pending" && p.Verdict != reports.Skipped { // it declares no outcome.pending
			t.Errorf("uncertain-stays-pending: %s, want skipped: client-sdk.yaml declares no outcome.pending", p.Verdict)
		}
	}
}
