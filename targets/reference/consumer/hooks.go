package consumer

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DelayHeader is the header (of a webhook request, or of a queue message) through which the
// slow hook asks for a handling to take longer: its value is milliseconds.
const DelayHeader = "X-Test-Delay"

// maxHookDelay bounds the delay the slow hook may ask for.
const maxHookDelay = time.Minute

// errHookFailure is the failure the fail_next hook arms.
var errHookFailure = errors.New("the fail_next hook failed this handling")

// testHooks are the consumer's test hooks (Config.Hooks): POST /_test/fail?event=ID arms a
// failure of the next handling of that event in this process, and DelayHeader slows one
// handling. A test deployment offers such hooks so that a harness can fail or slow a handler
// it cannot reach otherwise; the correct consumer treats a failed handling like a failed
// downstream call (the claim is released, the event is delivered again).
type testHooks struct {
	on    bool
	mu    sync.Mutex
	armed map[string]bool
}

// arm makes the next handling of the event fail.
func (h *testHooks) arm(event string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.armed == nil {
		h.armed = map[string]bool{}
	}
	h.armed[event] = true
}

// takeFailure reports whether a failure was armed for the event, and disarms it.
func (h *testHooks) takeFailure(event string) bool {
	if !h.on {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	armed := h.armed[event]
	delete(h.armed, event)
	return armed
}

// ParseDelay reads the slow hook's delay from a header value in milliseconds ("" = none); a
// value that is not a number of milliseconds within a minute is an error.
func ParseDelay(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	d := time.Duration(ms) * time.Millisecond
	if err != nil || ms < 0 || d > maxHookDelay {
		return 0, errors.New(DelayHeader + " must be milliseconds from 0 to 60000, got " + strconv.Quote(v))
	}
	return d, nil
}

// delayOf is the delay the slow hook asks for in headers (none without Config.Hooks).
func (c *Consumer) delayOf(get func(string) string) (time.Duration, error) {
	if !c.hooks.on {
		return 0, nil
	}
	return ParseDelay(get(DelayHeader))
}

// failNext answers POST /_test/fail?event=ID: the next handling of the event in this process
// fails.
func (c *Consumer) failNext(w http.ResponseWriter, r *http.Request) {
	ev := r.URL.Query().Get("event")
	if ev == "" {
		writeProblem(w, http.StatusBadRequest, "query parameter event is required")
		return
	}
	c.hooks.arm(ev)
	writeJSON(w, http.StatusOK, map[string]string{"armed": ev})
}
