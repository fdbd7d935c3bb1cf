// Package api holds the API side's conformance properties: one file per property (replay, race,
// mismatch, tenancy, expiry, keys, control, load, dropped-response, slow-first-attempt,
// crash-after-claim, crash-under-load, error-replay, and the events an API publishes:
// event-per-record, event-not-before-commit, event-after-crash, event-under-broker-outage), each
// registering itself with the framework from its init, with the helpers only they share. It
// imports the framework and the checkers, never another side.
package api

import (
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
type S struct{ *framework.S }

// spec returns a spec of property p whose body runs on this side's S.
func spec(p *Property, text string, body func(*S) check.Result) *Spec {
	return p.Spec(text, func(s *framework.S) check.Result { return body(&S{s}) })
}

// register adds a property of this side to the framework's registry.
func register(p *Property) {
	p.Side = framework.SideAPI
	framework.Register(p)
}
