package probe

import (
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The probe sends through the harness's operations; what it adds is its budget (at most
// Options.MaxAttempts requests) and its pace (Options.MinInterval between two requests).

// left is how many requests the budget still allows.
func (p *prober) left() int { return p.opts.MaxAttempts - p.s.History.Attempts() }

// send sends one attempt of o (Op.Do) once the pace allows it. ok is false when the budget is
// spent (nothing was sent).
func (p *prober) send(o *framework.Op, s framework.Send) (history.Attempt, bool) {
	if p.left() <= 0 {
		return history.Attempt{}, false
	}
	p.pace.wait(p.s)
	return o.Do(s), true
}

// sendVariant sends o with one field changed (Op.DoVariant), as send does.
func (p *prober) sendVariant(o *framework.Op, v targets.FieldVariant) (history.Attempt, bool) {
	if p.left() <= 0 {
		return history.Attempt{}, false
	}
	p.pace.wait(p.s)
	return o.DoVariant(v, 0), true
}

// pacer spaces requests at least every apart. Safe for concurrent use: each caller reserves
// its own slot.
type pacer struct {
	every time.Duration

	mu   sync.Mutex
	last time.Time // the slot of the latest request
}

// wait waits until the caller's slot, or until the session ends.
func (pc *pacer) wait(s *framework.S) {
	if pc.every <= 0 {
		return
	}
	pc.mu.Lock()
	slot := time.Now()
	if next := pc.last.Add(pc.every); next.After(slot) {
		slot = next
	}
	pc.last = slot
	pc.mu.Unlock()
	timer := time.NewTimer(time.Until(slot))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-s.Ctx().Done():
	}
}
