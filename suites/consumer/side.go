// Package consumer holds the consumer side's conformance properties: one file per property
// (redelivery, distinct-events, concurrent-redelivery, lost-ack, failed-then-redelivered,
// out-of-order, event-crash-after-claim, crash-before-ack, crash-after-ack, crash-under-delivery,
// late-redelivery, signature, delivery-load), each registering itself with the framework from its
// init, with what only they share: the events they deliver (Event), the broker fault helpers and the
// delivery load. It imports the framework and the checkers, never another side.
package consumer

import (
	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// The framework's names as the properties of this side read them.
type (
	// Env is the run environment.
	Env = framework.Env
	// Spec is one check of a property.
	Spec = framework.Spec
	// Property is one conformance property.
	Property = framework.Property
)

// S is a running spec of this side: the framework's, with the side's helpers as methods.
type S struct {
	*framework.S
	// atEnd are faults healed when the spec ends, once its verdict is formed: the fail_next
	// hooks it armed (healing disarms them), the slow environment it restarted the consumer with.
	atEnd []faults.Fault
}

// spec returns a spec of property p whose body runs on this side's S.
func spec(p *Property, text string, body func(*S) check.Result) *Spec {
	return p.Spec(text, func(fs *framework.S) check.Result {
		s := &S{S: fs}
		defer func() { s.healLeft(s.atEnd...) }()
		return body(s)
	})
}

// register adds a property of this side to the framework's registry.
func register(p *Property) {
	p.Side = framework.SideConsumer
	framework.Register(p)
}
