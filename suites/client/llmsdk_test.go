package client_test

import (
	"context"
	"encoding/json"
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
)

// llmFile describes llmSDK.
const llmFile = "testdata/llm-sdk.yaml"

// llmSDK is a small SDK shaped like an LLM provider's Go SDK (testdata/llm-sdk.yaml): a message
// is a JSON POST with an Idempotency-Key drawn once per operation; an error is read in its
// provider's shape, and only a rate_limit_error (429) and a connection closed or timed out are
// retried on a POST, at most 3 attempts, retry n after a full-jitter delay below min(2 s,
// 300 ms * 2^(n-1)) (at least 12 ms), and at least a 429's Retry-After. Its bugs, for the tests
// that show them caught: noJitter waits the cap itself, ignoreRetryAfter its own delay only.
type llmSDK struct {
	noJitter, ignoreRetryAfter bool
}

// The SDK's settings, as llm-sdk.yaml declares them.
const (
	llmAttempts = 3
	llmTimeout  = time.Second
	llmInitial  = 300 * time.Millisecond
	llmMaxDelay = 2 * time.Second
)

// llmError is the provider's error shape.
type llmError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// run is the RunClientT function: each operation a message, one after another.
func (s llmSDK) run(ctx context.Context, run suites.ClientRun) error {
	hc := &http.Client{Timeout: llmTimeout}
	defer hc.CloseIdleConnections()
	return eachOperation(ctx, run, func(_ int, op suites.ClientOp) error {
		body, _ := json.Marshal(map[string]any{"model": "small", "max_tokens": op.Params["max_tokens"], "metadata": map[string]string{"ref": op.Ref}})
		return s.message(ctx, hc, run.BaseURL, uuid.NewString(), body)
	})
}

// message performs one operation.
func (s llmSDK) message(ctx context.Context, hc *http.Client, base, key string, body []byte) error {
	for n := 1; ; n++ {
		wait, retry, err := s.attempt(ctx, hc, base, key, body)
		if err == nil || !retry || n == llmAttempts {
			return err
		}
		capped := min(llmMaxDelay, llmInitial<<(n-1))
		delay := capped
		if !s.noJitter {
			delay = 12*time.Millisecond + rand.N(capped-12*time.Millisecond)
		}
		if !s.ignoreRetryAfter {
			delay = max(delay, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// attempt sends one attempt: err is nil for a 2xx; retry says whether to retry, wait the
// Retry-After of a 429.
func (s llmSDK) attempt(ctx context.Context, hc *http.Client, base, key string, body []byte) (wait time.Duration, retry bool, err error) {
	resp, data, err := postOnce(ctx, hc, base+"/v1/messages", "application/json", key, body)
	if err != nil {
		return 0, true, err // a connection closed, an attempt timed out
	}
	if resp.StatusCode < 300 {
		return 0, false, nil
	}
	var e llmError
	if json.Unmarshal(data, &e) != nil || e.Type != "error" {
		return 0, false, fmt.Errorf("unexpected answer %d: %.100s", resp.StatusCode, data)
	}
	if e.Error.Type != "rate_limit_error" {
		return 0, false, fmt.Errorf("%d %s: %s", resp.StatusCode, e.Error.Type, e.Error.Message)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		wait = time.Duration(secs) * time.Second
	}
	return wait, true, fmt.Errorf("429 rate_limit_error: %s", e.Error.Message)
}

// An SDK that retries no 5xx and no 409 on a POST has its backoff judged on the 429s and closed
// connections it does retry, and its Retry-After on its 429s: it passes every client property
// (restart-reuses-key left out: it keeps its keys in memory, as it declares; and
// uncertain-stays-pending: it declares no outcome.pending); with its jitter
// removed backoff fails (no-jitter), with Retry-After ignored retry-after fails.
func TestSDKThatRetriesNo5xxHasItsDelaysJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through every client scenario")
	}
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, llmFile, llmSDK{}.run)
	got, kinds := verdicts(run)
	for p, v := range got {
		want := reports.Pass
		if p == "restart-reuses-key" || p == "uncertain-stays-pending" { // keys in memory; no pending report
			want = reports.Skipped
		}
		if v != want {
			t.Errorf("%s: %s %v, want %s\n%s", p, v, kinds[p], want, strings.Join(rec.errs, "\n"))
		}
	}
	if got["backoff"] != reports.Pass || got["retry-after"] != reports.Pass {
		t.Errorf("backoff %s, retry-after %s: want both judged and passed", got["backoff"], got["retry-after"])
	}
	for _, c := range []struct {
		name string
		sdk  llmSDK
		prop string
		want reports.Kind
	}{
		{"jitter removed", llmSDK{noJitter: true}, "backoff", reports.KindNoJitter},
		{"Retry-After ignored", llmSDK{ignoreRetryAfter: true}, "retry-after", reports.KindRetryBeforeRetryAfter},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{t: t}
			run := suites.RunClientT(rec, llmFile, c.sdk.run, suites.Select("property:"+c.prop, ""))
			got, kinds := verdicts(run)
			if got[c.prop] != reports.Fail || !slices.Contains(kinds[c.prop], c.want) {
				t.Errorf("%s: %s %v, want fail with %s", c.prop, got[c.prop], kinds[c.prop], c.want)
			}
		})
	}
}
