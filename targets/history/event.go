package history

import (
	"fmt"
	"slices"
	"time"
)

// Event is one action of the nemesis, a fault injected or healed, kept beside the attempts so
// that a checker can ask which attempts a fault hit ("was key K in flight at this kill?").
type Event struct {
	// At is when the action took effect (an inject: from then on the fault acted).
	At time.Time
	// Action is "inject" or "heal".
	Action string
	// Kind is what the fault is: kill, pause, hold-downstream, cut-response, ...
	Kind string
	// Target is the instance or link it acts on, e.g. "instance 0", "storage".
	Target string
	// Fault is the fault's full name.
	Fault string
	// Err is the error of a failed action; "" = it succeeded.
	Err string
}

// String renders the event on one line.
func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s (%s)", e.At.Format("15:04:05.000000"), e.Action, e.Kind, e.Target)
	if e.Err != "" {
		s += ": " + e.Err
	}
	return s
}

// AddEvent records a nemesis action. It is safe for concurrent use.
func (h *History) AddEvent(e Event) {
	e.Err = h.redact.String(e.Err)
	e.Fault = h.redact.String(e.Fault)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// Events returns the nemesis actions recorded so far, in the order they took effect.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.events)
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	return out
}
