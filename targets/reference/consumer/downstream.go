package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// downstreamCall is the JSON body of the downstream call. The sink attributes calls by
// "ref", the event id.
type downstreamCall struct {
	Ref       string `json:"ref"`
	Event     string `json:"event"`
	Object    string `json:"object"`
	Version   int64  `json:"version"`
	Operation string `json:"operation,omitempty"`
}

// callDownstream POSTs the event's effect to {Downstream}/v1/effects with the event id as
// its Idempotency-Key (the operation's dedupe key when the event names operations), so every
// delivery of one event, or every message of one operation, sends the same downstream key. The
// error wraps ErrDownstream.
func (c *Consumer) callDownstream(ctx context.Context, ev Event) error {
	if c.cfg.Downstream == "" {
		return nil
	}
	var op string
	if ev.opKey != "" {
		op = ev.op
	}
	payload, _ := json.Marshal(downstreamCall{Ref: ev.ID, Event: ev.ID, Object: ev.Object, Version: ev.Version, Operation: op})
	url := strings.TrimRight(c.cfg.Downstream, "/") + DownstreamPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDownstream, err)
	}
	req.GetBody = nil // never let the transport re-send the call behind our back
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", ev.dedupeKey())
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDownstream, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %w", ErrDownstream, statusError(resp.StatusCode))
	}
	return nil
}

// downstreamFailure describes a downstream error without internal addresses.
func downstreamFailure(err error) string {
	var se statusError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	}
	return "no answer"
}

// isTimeout reports a net timeout anywhere in err's chain.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// statusError is a non-2xx downstream answer.
type statusError int

// Error implements error.
func (e statusError) Error() string { return fmt.Sprintf("status %d", int(e)) }
