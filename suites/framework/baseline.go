package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/targets/history"
)

// ErrBaseline means a plain request of a declared operation did not succeed, so no property
// could tell a violation from a target that refuses every request (wrong credentials, a key
// shape the API rejects, a wrong path).
var ErrBaseline = errors.New("the baseline request did not succeed")

// baseline sends one plain request per declared operation (default tenant, first instance) and
// returns ErrBaseline, with the request, the answer and what to check, for the first one that
// does not get a 2xx.
func (h *Harness) baseline(ctx context.Context) error {
	s := h.env.Session(ctx)
	for _, def := range h.target.Operations {
		op := s.NewOp(def)
		a := op.Do(Send{Instance: 0})
		if Succeeded(a) {
			continue
		}
		return fmt.Errorf("%w: %s: %s\n%s", ErrBaseline, def.Name, baselineHint(a), strings.TrimRight(a.String(), "\n"))
	}
	// An asynchronous operation's work goes on after its 202: it ends before the first spec, whose
	// faults (a held downstream call, a kill) must find only its own operations at work.
	s.Settle()
	return nil
}

// baselineHint says what to check after a failed baseline request.
func baselineHint(a history.Attempt) string {
	switch {
	case a.Outcome != history.OK:
		return "it got no answer (" + a.Err + "); check the instance URL and that the API is up"
	case a.Status == 401 || a.Status == 403:
		return fmt.Sprintf("it was refused (%d); check the tenants' credentials and the auth mode", a.Status)
	case a.Status == 404 || a.Status == 405:
		return fmt.Sprintf("it got %d; check the operation's method and path and the instance's base URL", a.Status)
	case a.Status == 400 || a.Status == 422:
		return fmt.Sprintf("it was rejected (%d); check the body template and the key (key.in, key.name, key.format: the API may accept only UUIDs, say)", a.Status)
	case a.Status >= 500:
		return fmt.Sprintf("it got a server error (%d); check the key format and the body, or the API's logs", a.Status)
	}
	return fmt.Sprintf("it got %d, not a 2xx", a.Status)
}
