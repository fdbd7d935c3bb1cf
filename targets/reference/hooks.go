package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The black-box test hooks (Config.Hooks), as a real test deployment offers them: a harness
// that cannot reach into the API's process uses them to make a handler fail or run slowly.
const (
	// FailPath: POST here makes the next claimed idempotent POST of this process fail.
	FailPath = "/_test/fail"
	// DelayHeader on an idempotent POST adds that many milliseconds between claiming the
	// key and writing the result (the in-flight window), at most MaxTestDelay.
	DelayHeader = "X-Test-Delay"
	// MaxTestDelay caps DelayHeader.
	MaxTestDelay = 60 * time.Second
	// DefaultFailStatus is the status of an injected failure when the hook names none.
	DefaultFailStatus = http.StatusInternalServerError
)

// injectedFailureDetail is the problem detail of an injected failure.
const injectedFailureDetail = "the handler failed (injected by POST " + FailPath + ")"

// hooks is the state of the test hooks.
type hooks struct {
	// failStatus is the status of the pending injected failure; 0 = none pending.
	failStatus atomic.Int32
	// publish is the hold before publish (HoldPublishPath).
	publish publishHold
}

// failNext answers POST FailPath: 204, and the next claimed attempt fails with the status
// of the optional body {"status": 5xx} (default 500). One failure is pending at most: a
// second call before it is consumed replaces its status.
func (a *API) failNext(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "cannot read body: "+err.Error())
		return
	}
	status, err := parseFailStatus(body)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, err.Error())
		return
	}
	a.hooks.failStatus.Store(int32(status))
	w.WriteHeader(http.StatusNoContent)
}

// parseFailStatus reads the optional body of POST FailPath.
func parseFailStatus(body []byte) (int, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return DefaultFailStatus, nil
	}
	var req struct {
		Status *int `json:"status"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return 0, fmt.Errorf(`body must be empty or {"status": 500..599}: %v`, err)
	}
	if dec.More() {
		return 0, fmt.Errorf(`body must be empty or {"status": 500..599}: data after the object`)
	}
	if req.Status == nil {
		return DefaultFailStatus, nil
	}
	if s := *req.Status; s < 500 || s > 599 {
		return 0, fmt.Errorf("status %d is not a server error (500 to 599): an injected failure is a handler error", s)
	}
	return *req.Status, nil
}

// takeFailure consumes the pending injected failure: its status, or 0 when none is pending.
func (a *API) takeFailure() int {
	if !a.cfg.Hooks {
		return 0
	}
	return int(a.hooks.failStatus.Swap(0))
}

// injectedFailure is the result an injected failure stores, as a handler error would.
func injectedFailure(status int) Response {
	return Response{Status: status, Body: problemBody(status, injectedFailureDetail)}
}

// testDelay reads the DelayHeader of a request: 0 without hooks or without the header.
func (a *API) testDelay(r *http.Request) (time.Duration, error) {
	v := strings.TrimSpace(r.Header.Get(DelayHeader))
	if !a.cfg.Hooks || v == "" {
		return 0, nil
	}
	return parseTestDelay(v)
}

// parseTestDelay parses a DelayHeader value: whole milliseconds, capped at MaxTestDelay.
func parseTestDelay(v string) (time.Duration, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	switch {
	case ms > MaxTestDelay.Milliseconds() && (err == nil || errors.Is(err, strconv.ErrRange)):
		return MaxTestDelay, nil // a huge number is only capped
	case err != nil || ms < 0:
		return 0, fmt.Errorf("%s must be a whole number of milliseconds (at most %d are used)",
			DelayHeader, MaxTestDelay.Milliseconds())
	}
	return time.Duration(ms) * time.Millisecond, nil
}
