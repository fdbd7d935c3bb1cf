package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets"

	refclient "github.com/retrysafe/retrysafe/targets/reference/client"
)

// policyClient is a JSON client of POST /v1/orders that does what its run's policy says, to the
// letter (RetryPolicy.Decide on every answer: its conditions and should-retry header included):
// a key drawn before each operation's first attempt, up to max_attempts attempts, each bounded by
// attempt_timeout, retry n after a full-jitter delay below the backoff's cap (at least 12 ms:
// where the policy declares transport re-sends, which this client never makes, a retry that soon
// after a closed connection may be taken for the re-send it declares), and at least a
// Retry-After it honours on that status.
func policyClient(ctx context.Context, run suites.ClientRun) error {
	p := run.Policy
	hc := &http.Client{Timeout: p.AttemptTimeout}
	defer hc.CloseIdleConnections()
	return eachOperation(ctx, run, func(_ int, op suites.ClientOp) error {
		return policyOperation(ctx, hc, run.BaseURL, p, op.Ref, op.Params)
	})
}

// policyOperation performs one operation of policyClient.
func policyOperation(ctx context.Context, hc *http.Client, base string, p targets.RetryPolicy, ref string, params map[string]any) error {
	key := uuid.NewString()
	body, _ := json.Marshal(map[string]any{"ref": ref, "amount": params["amount"]})
	var err error
	for n := 1; n <= p.MaxAttempts; n++ {
		var wait time.Duration
		var again bool
		again, wait, err = policyAttempt(ctx, hc, base, p, key, body)
		if err == nil || !again || n == p.MaxAttempts {
			return err
		}
		lo, hi := p.Backoff.Envelope(n)
		delay := max(lo+rand.N(hi-lo+1), 12*time.Millisecond, wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
	return err
}

// policyAttempt sends one attempt: err is nil for a 2xx; again says whether the policy retries
// what it got, wait the Retry-After it honours.
func policyAttempt(ctx context.Context, hc *http.Client, base string, p targets.RetryPolicy, key string, body []byte) (again bool, wait time.Duration, err error) {
	resp, data, err := postOnce(ctx, hc, base+"/v1/orders", "application/json", key, body)
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			return p.RetriesFailure("timeout"), 0, err
		}
		return p.RetriesFailure("reset"), 0, err
	}
	if resp.StatusCode < 300 {
		return false, 0, nil
	}
	if secs, e := strconv.Atoi(resp.Header.Get("Retry-After")); e == nil && p.HonoursRetryAfterOn(resp.StatusCode) {
		wait = time.Duration(secs) * time.Second
	}
	return p.Decide(resp.StatusCode, resp.Header, data) == targets.DecideRetry, wait, errors.New(resp.Status)
}

// bounded, retries-transient and key-present run once per configuration, each reading its
// configuration's whole policy: a client that does what each declares passes all three in every
// one of them (retries without 5xx, another never list and max_attempts; a conditional 429, a
// should-retry header, Retry-After on a list, transport re-sends; nothing retried but timeouts).
func TestPerConfigurationPoliciesAreRead(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through three scenarios in four configurations")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, "testdata/policies.yaml", policyClient,
		suites.Select("(property:bounded || property:retries-transient || property:key-present) && !scenario:bare-error", ""))
	specs := 0
	for _, p := range run.Properties {
		for _, s := range p.Specs {
			specs++
			want := reports.Pass
			if p.Name == "key-present" && strings.Contains(s.Text, "(configuration timeouts-only)") {
				want = reports.Skipped // it retries no status and no closed connection: no retry to plan
			}
			if s.Verdict != want {
				t.Errorf("%s: %s, want %s:\n%s", s.Text, s.Verdict, want, s.Failure)
			}
		}
	}
	if specs != 12 {
		t.Errorf("%d specs ran, want 12 (three properties in four configurations)", specs)
	}
}

// againClient is the reference client, driven in-process, whose contract is: restarted with the
// same operations, it resumes the operation pending in its state directory with its key, and then
// performs the operations asked for again, each a new intent under a new key. It is told a restart
// by ClientRun.Restart, which it checks against a mark in its state directory (a mismatch fails
// the operations, and the test).
func againClient(ctx context.Context, run suites.ClientRun) error {
	marker := filepath.Join(run.StateDir, "started")
	if _, err := os.Stat(marker); (err == nil) != run.Restart {
		return fmt.Errorf("ClientRun.Restart is %v, but its state directory says it started before: %v", run.Restart, err == nil)
	}
	if !run.Restart {
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			return err
		}
		return referenceAs(refclient.MutantNone)(ctx, run)
	}
	if err := referenceAs(refclient.MutantNone)(ctx, run); err != nil { // resume
		return err
	}
	again := run
	again.StateDir = filepath.Join(run.StateDir, "again")
	return referenceAs(refclient.MutantNone)(ctx, again)
}

// A client that, restarted, resumes its pending operation with its key and then performs the
// operation again under a new key passes restart-reuses-key and every other property: the new
// key after its 2xx is a new operation (#2), not a retry sent too soon. (restart-reuses-key
// passes only where an attempt was held at the kill: unknown otherwise.)
func TestResumeThenNewOperationPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through every client scenario")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, "testdata/again.yaml", againClient)
	got, kinds := verdicts(run)
	if len(got) != 10 {
		t.Errorf("%d client properties ran, want 10: %v", len(got), got)
	}
	for p, v := range got {
		if v != reports.Pass {
			t.Errorf("%s: %s %v, want pass\n%s", p, v, kinds[p], strings.Join(rec.errs, "\n"))
		}
	}
}
