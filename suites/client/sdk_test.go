package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/retrysafe/retrysafe/suites"
)

// What the hand-written test clients (llmSDK, providerSDK, policyClient, statusClient) share:
// each attempt is one request that net/http never re-sends on its own, and a run's operations
// are performed one after another, their failures reported together.

// maxAnswer bounds the body a test client reads of one answer.
const maxAnswer = 1 << 20

// postOnce sends one attempt, a POST of body to url with the idempotency key, and returns the
// answer with its body read (at most maxAnswer) and closed. Its request has no GetBody, so that
// net/http does not re-send it when a reused connection closes (Request.isReplayable): one
// attempt, one request.
func postOnce(ctx context.Context, hc *http.Client, url, contentType, key string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.GetBody = nil
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Idempotency-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return resp, data, nil
}

// eachOperation performs the run's operations one after another (perform is given each one's
// 1-based index): the run ends at once when ctx does, and otherwise fails with every failed
// operation's error, named by its reference and wrapped (so that suites.ErrPending is still
// seen through it).
func eachOperation(ctx context.Context, run suites.ClientRun, perform func(index int, op suites.ClientOp) error) error {
	var failed []error
	for i, op := range run.Ops {
		if err := perform(i+1, op); err != nil {
			if ctx.Err() != nil {
				return err
			}
			failed = append(failed, fmt.Errorf("%s: %w", op.Ref, err))
		}
	}
	return errors.Join(failed...)
}
