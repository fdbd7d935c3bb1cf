package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"

	refclient "github.com/retrysafe/retrysafe/targets/reference/client"
)

// referenceAs is retrysafe's reference client, as mutant m, driven in-process: its policy is the
// run's (the configuration's), its operations the run's.
func referenceAs(m refclient.Mutant) suites.ClientFunc {
	return func(ctx context.Context, run suites.ClientRun) error {
		b := run.Policy.Backoff
		cfg := refclient.Config{BaseURL: run.BaseURL, StateDir: run.StateDir, Mutant: m,
			Policy: refclient.Policy{MaxAttempts: run.Policy.MaxAttempts, AttemptTimeout: run.Policy.AttemptTimeout,
				Initial: b.Initial, Multiplier: b.Multiplier, Max: b.Max, Jitter: refclient.JitterFull}}
		for _, op := range run.Ops {
			cfg.Ops = append(cfg.Ops, refclient.Operation{Ref: op.Ref, Params: op.Params})
		}
		sum, err := refclient.Run(ctx, cfg)
		switch {
		case err != nil:
		case sum.Failed > 0:
			err = fmt.Errorf("%d of %d operations failed", sum.Failed, len(sum.Results))
		case sum.Pending > 0:
			err = fmt.Errorf("%d of %d operations pending: %w", sum.Pending, len(sum.Results), suites.ErrPending)
		}
		return err
	}
}

// bounded is the bounded scenario under a persistent 503 (not the bare-error ones).
var bounded = suites.Select("property:bounded && !scenario:bare-error", "")

// A client whose transport re-sends an attempt at once after a connection closed (the reference
// client as transport-resend: net/http replays a request with an Idempotency-Key and a rewindable
// body on a reused connection) makes one attempt more than it counts: it fails bounded, past its
// max_attempts and hammering. Declared (retry.transport_resends: 1), the re-send is allowed and
// the summary lists it; the correct client passes either way.
func TestTransportResendFailsBoundedUnlessDeclared(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through the bounded scenario four times")
	}
	declared := fileVariant(t, "testdata/resend.yaml", func(s string) string {
		return strings.Replace(s, "      max_attempts: 4\n", "      max_attempts: 4\n      transport_resends: 1\n", 1)
	})
	for _, c := range []struct {
		name   string
		file   string
		client refclient.Mutant
		want   []reports.Kind
	}{
		{"re-sends, undeclared", "testdata/resend.yaml", refclient.MutantTransportResend, []reports.Kind{reports.KindUnboundedRetries}},
		{"re-sends, declared", declared, refclient.MutantTransportResend, nil},
		{"correct, undeclared", "testdata/resend.yaml", refclient.MutantNone, nil},
		{"correct, declared", declared, refclient.MutantNone, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{t: t}
			run := suites.RunClientT(rec, c.file, referenceAs(c.client), bounded)
			got, kinds := verdicts(run)
			want := reports.Pass
			if len(c.want) > 0 {
				want = reports.Fail
			}
			// The re-send is also hammering when it comes under 10 ms, as it does unless the
			// machine is loaded: no-backoff may come with unbounded-retries.
			found := slices.DeleteFunc(slices.Clone(kinds["bounded"]), func(k reports.Kind) bool { return k == reports.KindNoBackoff && len(c.want) > 0 })
			if got["bounded"] != want || !slices.Equal(found, c.want) {
				t.Errorf("bounded: %s %v, want %s %v\n%s", got["bounded"], kinds["bounded"], want, c.want, strings.Join(rec.errs, "\n"))
			}
			resends := strings.Contains(strings.Join(run.Target.Deviations, "\n"), "lets its transport re-send a request at once")
			if resends != (c.file == declared) {
				t.Errorf("the summary's deviations %q: listing the transport's re-send is %v, want %v", run.Target.Deviations, resends, !resends)
			}
		})
	}
}

// A client declaring that it retries a 429 and never retrying it fails retries-transient
// (no-retry); one that retries a 501, which it declares neither retried nor never resent, fails
// it too (undeclared-retry); the same client as declared passes. One target, one configuration
// each.
func TestDeclaredStatusesJudgedBothWays(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through the retries-transient scenario three times")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, "testdata/statuses.yaml", statusClient, suites.Select("property:retries-transient", ""))
	want := map[string]struct {
		kinds []reports.Kind
		says  string
	}{
		"as-declared": {nil, ""},
		"skips-429":   {[]reports.Kind{reports.KindNoRetry}, "was not retried after a 429"},
		"retries-501": {[]reports.Kind{reports.KindUndeclaredRetry}, "was retried after a 501, a status the client declares neither"},
	}
	specs := 0
	for _, p := range run.Properties {
		for _, s := range p.Specs {
			name := s.Text[strings.Index(s.Text, "(configuration ")+len("(configuration ") : strings.Index(s.Text, "):")]
			w, ok := want[name]
			if !ok {
				t.Errorf("a spec of no configuration declared: %q", s.Text)
				continue
			}
			specs++
			var kinds []reports.Kind
			for _, a := range s.Anomalies {
				kinds = append(kinds, a.Kind)
			}
			if !slices.Equal(kinds, w.kinds) || !strings.Contains(s.Failure, w.says) || (w.kinds == nil) != (s.Verdict == reports.Pass) {
				t.Errorf("configuration %s: %s %v, want %v saying %q:\n%s", name, s.Verdict, kinds, w.kinds, w.says, s.Failure)
			}
		}
	}
	if specs != len(want) {
		t.Errorf("%d retries-transient specs ran, want one per configuration (%d)", specs, len(want))
	}
}

// statusClient is a small JSON client: each operation a POST /v1/orders with a key drawn before
// its first attempt, retried (up to the run's max_attempts, with a full jitter below the run's
// backoff) after a connection closed, a timeout, or a status its env's RETRIED lists (codes, or
// 5xx); any other answer fails the operation.
func statusClient(ctx context.Context, run suites.ClientRun) error {
	retried := strings.Split(run.Env["RETRIED"], ",")
	retries := func(status int) bool {
		return slices.Contains(retried, strconv.Itoa(status)) || status >= 500 && slices.Contains(retried, "5xx")
	}
	hc := &http.Client{Timeout: run.Policy.AttemptTimeout}
	defer hc.CloseIdleConnections()
	var failed []error
	for _, op := range run.Ops {
		key := uuid.NewString()
		body, _ := json.Marshal(map[string]any{"ref": op.Ref, "amount": op.Params["amount"]})
		err := errors.New("no attempt")
		for n := 1; n <= run.Policy.MaxAttempts && err != nil; n++ {
			if n > 1 {
				delay := 10*time.Millisecond + rand.N(max(run.Policy.Backoff.Cap(n-1)-10*time.Millisecond, 1))
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(delay):
				}
			}
			var again bool
			again, err = postOrder(ctx, hc, run.BaseURL, key, body, retries)
			if !again {
				break
			}
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", op.Ref, err))
		}
	}
	return errors.Join(failed...)
}

// postOrder sends one attempt: err is nil for a 2xx; again says whether to retry.
func postOrder(ctx context.Context, hc *http.Client, base, key string, body []byte, retries func(int) bool) (again bool, err error) {
	resp, _, err := postOnce(ctx, hc, base+"/v1/orders", "application/json", key, body)
	if err != nil {
		return ctx.Err() == nil, err
	}
	if resp.StatusCode < 300 {
		return false, nil
	}
	return retries(resp.StatusCode), errors.New(resp.Status)
}
