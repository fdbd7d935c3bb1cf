// Package client holds the client side's conformance properties: the harness plays the API (a
// scripted, faulty and correct idempotent API, api.go) and judges what a client of it does, one
// scenario per property (retries-transient, same-key-on-retry, new-key-per-operation,
// no-retry-on-rejection, retry-after, backoff, bounded, restart-reuses-key, key-present), each
// registering itself with the framework from its init. The client under test is a process the
// harness starts and kills (the target file's clients[].command), or a Go function driven through
// RunClientT. It imports the framework and the checkers, never another side.
package client

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
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

// register adds a property of this side to the framework's registry.
func register(p *Property) {
	p.Side = framework.SideClient
	framework.Register(p)
}

// needs are the target-file fields every client property needs.
var needs = []string{"clients[].command (or suites.RunClientT)", "clients[].operations (path, key, identity)", "clients[].retry (the declared policy; defaults otherwise)"}

// clientSpecs returns one spec per client of the target file, labelled client:NAME: text says
// what it checks, body plays the scenario and judges it. A client without a command, outside
// RunClientT, cannot be started: its spec skips and says so.
func clientSpecs(p *Property, e *Env, text string, body func(*S, *targets.Client) check.Result) []*Spec {
	var out []*Spec
	for _, c := range e.Target.Clients {
		sp := p.Spec(fmt.Sprintf("%s: %s", c.Name, text), func(s *framework.S) check.Result { return body(&S{s}, c) })
		sp.Extra = append(sp.Extra, "client:"+c.Name)
		if len(c.Command) == 0 && e.InProcess == nil {
			sp.Skip = fmt.Sprintf("client %s declares no command: run it from go test with suites.RunClientT, or declare clients[].command", c.Name)
		}
		out = append(out, sp)
	}
	return out
}
