package faults

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"
)

// Fault is one thing that can go wrong, as a value: Inject makes it happen, Heal undoes it.
// Fault values should be comparable (pointers are), so that a Nemesis can tell them apart.
// Heal is idempotent: healing a fault that is not injected (or was healed already) is a no-op
// that returns nil, so a run can always heal everything at its end.
type Fault interface {
	// Name says what the fault is and where it acts, for timelines and reports.
	Name() string
	// Inject makes the fault happen; injecting an injected fault is a no-op.
	Inject(ctx context.Context) error
	// Heal undoes the fault; healing a healthy fault is a no-op.
	Heal(ctx context.Context) error
}

// Described is implemented by faults that say what kind of fault they are and what they act on,
// for the history and the reports (see KindOf).
type Described interface {
	// Kind is one of the Kind constants.
	Kind() string
	// Target names what the fault acts on: "instance 0", "downstream", "storage", a proxy's name.
	Target() string
}

// The kinds of faults, as report.json names them (docs/report-schema.md).
const (
	KindKill            = "kill"
	KindPause           = "pause"
	KindHoldDownstream  = "hold-downstream"
	KindFailDownstream  = "fail-downstream"
	KindDelayDownstream = "delay-downstream"
	KindStorageLatency  = "storage-latency"
	KindStorageReset    = "storage-reset"
	KindCutResponse     = "cut-response"
	KindLatency         = "latency"
	KindResetPeer       = "reset-peer"
	KindTimeout         = "timeout"
	KindPartition       = "partition"
	KindCutBrokerLink   = "cut-broker-link"
	KindLoseConfirm     = "lose-confirm"
	KindHoldPublish     = "hold-publish"
	KindFailNext        = "fail-next"
	KindRestartEnv      = "restart-env"
	KindOther           = "other"
)

// KindOf returns a fault's kind and target: its own when it is Described, else KindOther and its
// name.
func KindOf(f Fault) (kind, target string) {
	if d, ok := f.(Described); ok {
		return d.Kind(), d.Target()
	}
	return KindOther, f.Name()
}

// Noop is the fault that does nothing: the nemesis of a run without faults.
type Noop struct{}

var _ Fault = Noop{}

// Name returns "noop".
func (Noop) Name() string { return "noop" }

// Inject does nothing.
func (Noop) Inject(context.Context) error { return nil }

// Heal does nothing.
func (Noop) Heal(context.Context) error { return nil }

// Func returns a fault made of two functions, for faults that live elsewhere (a process kill,
// a pause), of the given kind acting on target. A nil function does nothing; heal must be
// idempotent.
func Func(kind, target, name string, inject, heal func(ctx context.Context) error) Fault {
	return &funcFault{kind: kind, target: target, name: name, inject: inject, heal: heal}
}

type funcFault struct {
	kind, target, name string
	inject, heal       func(ctx context.Context) error
}

var _ Described = (*funcFault)(nil)

func (f *funcFault) Name() string                     { return f.name }
func (f *funcFault) Kind() string                     { return f.kind }
func (f *funcFault) Target() string                   { return f.target }
func (f *funcFault) Inject(ctx context.Context) error { return call(ctx, f.inject) }
func (f *funcFault) Heal(ctx context.Context) error   { return call(ctx, f.heal) }

func call(ctx context.Context, fn func(context.Context) error) error {
	if fn == nil {
		return nil
	}
	return fn(ctx)
}

// Action is what the nemesis did to a fault.
type Action string

// The actions of a timeline.
const (
	ActionInject Action = "inject"
	ActionHeal   Action = "heal"
)

// Event is one entry of a nemesis timeline.
type Event struct {
	// Time is when the action returned: from then on the fault was in effect (or healed).
	Time time.Time `json:"time"`
	// Fault is the fault's Name.
	Fault string `json:"fault"`
	// Kind and Target say what the fault is and what it acts on (see KindOf).
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Action is what was done.
	Action Action `json:"action"`
	// Error is the error the action returned; "" = it succeeded.
	Error string `json:"error,omitempty"`
}

// String renders the event as one line of a report.
func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s", e.Time.Format("15:04:05.000000"), e.Action, e.Fault)
	if e.Error != "" {
		s += ": " + e.Error
	}
	return s
}

// Nemesis injects and heals faults, remembers every fault it injected until it is healed, and
// records a timeline of what it did. HealAll must be called at the end of every run. A Nemesis
// is safe for concurrent use; its zero value is ready to use.
type Nemesis struct {
	mu       sync.Mutex
	injected []Fault
	events   []Event
	observe  func(Event)
}

// NewNemesis returns an empty nemesis.
func NewNemesis() *Nemesis { return &Nemesis{} }

// Observe makes the nemesis call fn with every event as it is recorded (e.g. to add it to a run's
// history). fn must be safe for concurrent use.
func (n *Nemesis) Observe(fn func(Event)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.observe = fn
}

// Inject injects f and remembers it, also when Inject fails (a half-injected fault must still
// be healed).
func (n *Nemesis) Inject(ctx context.Context, f Fault) error {
	n.remember(f)
	err := f.Inject(ctx)
	n.record(f, ActionInject, err)
	if err != nil {
		return fmt.Errorf("inject %s: %w", f.Name(), err)
	}
	return nil
}

// Heal heals f and forgets it once healed. A fault the nemesis does not hold (never injected, or
// healed already) is left alone and nothing is recorded: every heal on the timeline follows an
// inject of the same fault. A fault whose type cannot be compared is always healed, as the
// nemesis cannot tell whether it holds it.
func (n *Nemesis) Heal(ctx context.Context, f Fault) error {
	if !n.holds(f) {
		return nil
	}
	err := f.Heal(ctx)
	n.record(f, ActionHeal, err)
	if err != nil {
		return fmt.Errorf("heal %s: %w", f.Name(), err)
	}
	n.forget(f)
	return nil
}

// HealAll heals every fault injected and not yet healed, the latest first, and returns every
// error. Faults that fail to heal stay remembered, so a second HealAll tries them again.
func (n *Nemesis) HealAll(ctx context.Context) error {
	n.mu.Lock()
	pending := slices.Clone(n.injected)
	n.mu.Unlock()
	var errs []error
	for _, f := range slices.Backward(pending) {
		errs = append(errs, n.Heal(ctx, f))
	}
	return errors.Join(errs...)
}

// Injected returns the faults injected and not yet healed, in injection order.
func (n *Nemesis) Injected() []Fault {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.injected)
}

// Timeline returns every inject and heal so far, in the order they returned.
func (n *Nemesis) Timeline() []Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.events)
}

// holds reports whether f is injected and not healed yet (always true for a fault that cannot be
// compared).
func (n *Nemesis) holds(f Fault) bool {
	if !reflect.TypeOf(f).Comparable() {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.ContainsFunc(n.injected, func(g Fault) bool { return same(f, g) })
}

func (n *Nemesis) remember(f Fault) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.ContainsFunc(n.injected, func(g Fault) bool { return same(f, g) }) {
		n.injected = append(n.injected, f)
	}
}

func (n *Nemesis) forget(f Fault) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.injected = slices.DeleteFunc(n.injected, func(g Fault) bool { return same(f, g) })
}

// same reports whether a and b are the same fault value; values of types that cannot be
// compared (structs holding funcs or slices) are never the same as anything.
func same(a, b Fault) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

func (n *Nemesis) record(f Fault, a Action, err error) {
	e := Event{Fault: f.Name(), Action: a}
	e.Kind, e.Target = KindOf(f)
	if err != nil {
		e.Error = err.Error()
	}
	n.mu.Lock()
	e.Time = time.Now()
	n.events = append(n.events, e)
	observe := n.observe
	n.mu.Unlock()
	if observe != nil {
		observe(e)
	}
}
