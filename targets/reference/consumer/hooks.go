package consumer

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// DelayHeader is the header (of a webhook request, or of a queue message) through which the
// slow hook asks for a handling to take longer: its value is milliseconds.
const DelayHeader = "X-Test-Delay"

// FailHeader is the header (of a webhook request, or of a queue message) that fails the handling
// of the delivery that carries it, unless the delivery is a redelivery: its value is the point,
// FailBeforeEffect or FailAfterEffect (any other value: before the effect).
const FailHeader = "X-Test-Fail"

// EnvEffectDelay names the environment variable whose milliseconds every handling takes longer
// (with Config.Hooks: `retrysafe serve --hooks` reads it into Config.EffectDelay).
const EnvEffectDelay = "EFFECT_DELAY_MS"

// The points of a handling at which a hook fails it.
const (
	// FailBeforeEffect fails the handling before its effect: nothing is applied.
	FailBeforeEffect = "before-effect"
	// FailAfterEffect fails the handling once its effect committed: the delivery is answered
	// as failed (a 500, a message given back) although the event took effect.
	FailAfterEffect = "after-effect"
)

// maxHookDelay bounds the delay the slow hook may ask for.
const maxHookDelay = time.Minute

// errHookFailure is the failure the fail_next hook arms.
var errHookFailure = errors.New("the fail_next hook failed this handling")

// testHooks are the consumer's test hooks (Config.Hooks): POST /_test/fail?event=ID&when=POINT
// arms a failure of the next handling of that event (without event=: of any event) in this
// process at that point (before-effect by default), DELETE /_test/fail disarms them all,
// FailHeader fails a first delivery, and DelayHeader slows one handling. A test deployment offers
// such hooks so that a harness can fail or slow a handler it cannot reach otherwise; the correct
// consumer treats a failed handling like a failed downstream call (the claim is released, the
// event is delivered again), and a failure after the effect as an error of a handling whose
// effect is already committed (the redelivery is a duplicate).
type testHooks struct {
	on    bool
	mu    sync.Mutex
	armed map[string]string // event id → the point its next handling fails at
	any   string            // the point the next handling of any event fails at ("" = none)
}

// arm makes the next handling of the event (of any event when event is "") fail at point.
func (h *testHooks) arm(event, point string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if event == "" {
		h.any = point
		return
	}
	if h.armed == nil {
		h.armed = map[string]string{}
	}
	h.armed[event] = point
}

// disarm forgets every armed failure.
func (h *testHooks) disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.any = nil, ""
}

// takeFailure reports whether the handling of ev fails at point: a failure armed for the event
// or for any event at that point (used up), or the delivery's FailHeader naming the point on a
// delivery that is not a redelivery.
func (h *testHooks) takeFailure(ev Event, point string) bool {
	if !h.on {
		return false
	}
	if ev.fail != "" && !ev.redelivered && failPoint(ev.fail) == point {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if p, ok := h.armed[ev.ID]; ok && p == point {
		delete(h.armed, ev.ID)
		return true
	}
	if h.any == point {
		h.any = ""
		return true
	}
	return false
}

// failPoint is the point a FailHeader value names: after-effect, else before-effect.
func failPoint(v string) string {
	if v == FailAfterEffect {
		return FailAfterEffect
	}
	return FailBeforeEffect
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
		return 0, errors.New("milliseconds from 0 to 60000 expected, got " + strconv.Quote(v))
	}
	return d, nil
}

// EffectDelayFromEnv reads EnvEffectDelay: the milliseconds every handling takes longer (0 when
// it is not set).
func EffectDelayFromEnv() (time.Duration, error) {
	d, err := ParseDelay(os.Getenv(EnvEffectDelay))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", EnvEffectDelay, err)
	}
	return d, nil
}

// delayOf is the delay the slow hook asks for in headers (none without Config.Hooks).
func (c *Consumer) delayOf(get func(string) string) (time.Duration, error) {
	if !c.hooks.on {
		return 0, nil
	}
	d, err := ParseDelay(get(DelayHeader))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", DelayHeader, err)
	}
	return d, nil
}

// failNext answers POST /_test/fail?event=ID&when=POINT: the next handling of the event (of any
// event without event=) in this process fails at the point (before-effect by default).
func (c *Consumer) failNext(w http.ResponseWriter, r *http.Request) {
	ev, when := r.URL.Query().Get("event"), r.URL.Query().Get("when")
	switch when {
	case "":
		when = FailBeforeEffect
	case FailBeforeEffect, FailAfterEffect:
	default:
		writeProblem(w, http.StatusBadRequest, "query parameter when must be "+FailBeforeEffect+" or "+FailAfterEffect)
		return
	}
	c.hooks.arm(ev, when)
	writeJSON(w, http.StatusOK, map[string]string{"armed": ev, "when": when})
}

// disarmAll answers DELETE /_test/fail: every armed failure is forgotten.
func (c *Consumer) disarmAll(w http.ResponseWriter, _ *http.Request) {
	c.hooks.disarm()
	writeJSON(w, http.StatusOK, map[string]string{"disarmed": "all"})
}
