package reference

import (
	"context"
	"net/http"
	"sync"
)

// HoldPublishPath is the test hook that holds the API's publications between the commit and
// the publish (Config.Hooks): POST arms it (from then on every publication of this process waits
// before it publishes), GET answers {"held": N, "holding": true|false} (N publications wait
// now), DELETE lets them go. Nothing else ends a hold but the process's end: a harness kills the
// process while it holds an event that is committed and not yet published.
const HoldPublishPath = "/_test/hold-publish"

// publishHold is the state of the hold before publish.
type publishHold struct {
	mu      sync.Mutex
	release chan struct{} // closed to let the held publications go; nil when not holding
	held    int
}

// arm makes every later publication wait (a second arm changes nothing).
func (h *publishHold) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release == nil {
		h.release = make(chan struct{})
	}
}

// disarm lets the held publications go, and the later ones through.
func (h *publishHold) disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
		h.release = nil
	}
}

// state is how many publications wait, and whether the hold is armed.
func (h *publishHold) state() (held int, holding bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held, h.release != nil
}

// wait holds a publication while the hold is armed, until released or ctx ends (the error).
// A nil hold (no hooks) never holds.
func (h *publishHold) wait(ctx context.Context) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	release := h.release
	if release == nil {
		h.mu.Unlock()
		return nil
	}
	h.held++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
	}()
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// holdPublish answers the HoldPublishPath hook: POST arms, DELETE releases (204 both), GET
// reads the hold.
func (a *API) holdPublish(w http.ResponseWriter, r *http.Request) {
	h := &a.hooks.publish
	switch r.Method {
	case http.MethodPost:
		h.arm()
	case http.MethodDelete:
		h.disarm()
	default:
		held, holding := h.state()
		writeJSON(w, http.StatusOK, map[string]any{"held": held, "holding": holding})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
