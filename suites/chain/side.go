// Package chain holds the chain's conformance property: a client, the API it calls, the broker
// the API's events go through and the consumer of those events, run end to end under faults on
// every hop and judged as one (chain.go), with what only it uses: the wiretap that records the
// client's attempts as they reach the API (wiretap.go), the faults of each hop (hops.go) and the
// joint history the checker reads (observe.go). Its target is a chain target file (targets.Chain):
// three ordinary parts, each started with its own lifecycle by the framework's harness. It
// imports the framework and the checkers, never another side.
package chain

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// The framework's names as the property of this side reads them.
type (
	// Env is the run environment.
	Env = framework.Env
	// Spec is one check of a property.
	Spec = framework.Spec
	// Property is one conformance property.
	Property = framework.Property
)

// S is a running spec of this side: the framework's, with the side's helpers as methods.
type S struct{ *framework.S }

// spec returns a spec of property p whose body runs on this side's S.
func spec(p *Property, text string, body func(*S) check.Result) *Spec {
	return p.Spec(text, func(s *framework.S) check.Result { return body(&S{s}) })
}

// register adds a property of this side to the framework's registry.
func register(p *Property) {
	p.Side = framework.SideChain
	framework.Register(p)
}
