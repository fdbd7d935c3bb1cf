// Package client holds the client side's conformance properties: the harness plays the API (a
// scripted, faulty and correct idempotent API, api.go) and judges what a client of it does, one
// scenario per property (retries-transient, same-key-on-retry, new-key-per-operation,
// no-retry-on-rejection, retry-after, backoff, bounded, restart-reuses-key, key-present,
// uncertain-stays-pending), each
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

// configNeed is what a property run once per configuration also reads.
const configNeed = "clients[].configurations (optional: the settings it runs in, once each)"

// clientSpecs returns one spec per client of the target file, labelled client:NAME, run in the
// client's own configuration: text says what it checks, body plays the scenario and judges it. A
// client without a command, outside RunClientT, cannot be started: its spec skips and says so.
func clientSpecs(p *Property, e *Env, text string, body func(*S, *targets.Client, *targets.ClientConfiguration) check.Result) []*Spec {
	var out []*Spec
	for _, c := range e.Target.Clients {
		out = append(out, clientSpec(p, e, c, c.Own(), text, body))
	}
	return out
}

// configurationSpecs returns one spec per client and per configuration it is tested in (those
// it declares, clients[].configurations, or its own), each named with its configuration and
// labelled client:NAME and config:CONFIG.
func configurationSpecs(p *Property, e *Env, text string, body func(*S, *targets.Client, *targets.ClientConfiguration) check.Result) []*Spec {
	var out []*Spec
	for _, c := range e.Target.Clients {
		for _, cfg := range c.Configurations() {
			out = append(out, clientSpec(p, e, c, cfg, text, body))
		}
	}
	return out
}

// clientSpec is the spec of one client in one configuration.
func clientSpec(p *Property, e *Env, c *targets.Client, cfg *targets.ClientConfiguration, text string,
	body func(*S, *targets.Client, *targets.ClientConfiguration) check.Result) *Spec {
	name := c.Name
	if cfg.Name != "" {
		name += " (configuration " + cfg.Name + ")"
	}
	sp := p.Spec(fmt.Sprintf("%s: %s", name, text), func(s *framework.S) check.Result { return body(&S{s}, c, cfg) })
	sp.Extra = append(sp.Extra, "client:"+c.Name)
	if cfg.Name != "" {
		sp.Extra = append(sp.Extra, "config:"+cfg.Name)
	}
	if len(c.Command) == 0 && e.InProcess == nil {
		sp.Skip = fmt.Sprintf("client %s declares no command: run it from go test with suites.RunClientT, or declare clients[].command", c.Name)
	}
	return sp
}

// bareErrorLabel marks the specs whose scenario answers an error that is not the client's error
// shape (scenario:bare-error), so that a run can select or leave them out.
const bareErrorLabel = "scenario:bare-error"

// labelled adds a label to specs and returns them.
func labelled(specs []*Spec, label string) []*Spec {
	for _, sp := range specs {
		sp.Extra = append(sp.Extra, label)
	}
	return specs
}
