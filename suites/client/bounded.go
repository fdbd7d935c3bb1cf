package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// bareErrors are the bodies the bare-error scenarios answer a persistent 503 with, each in a
// scenario of its own: the client's exit says how it ended one operation.
var bareErrors = []struct {
	text string
	body *bareBody
}{
	{"a persistent 503 in text/plain", plainText},
	{"a persistent 503 whose body is {}", emptyJSON},
}

func init() {
	p := &Property{
		Name: "bounded",
		Must: `Under a persistent failure the configuration retries (the first status its retries list,
a 503 by default, its second attempt's connection closed after processing instead where it retries
reset; a closed connection alone for a policy that retries no status) the client MUST stop at its
declared max_attempts (not before, unless its last answer is one the policy does not retry), its
transport's immediate re-sends beyond retry.transport_resends counted, and report the failure as it
declares (clients[].failure; pending, as outcome.pending declares, is accepted too where every
attempt went unanswered); the harness ends a client still retrying at max_attempts + 2 attempts
or at the scenario's timeout (SIGKILL: unbounded-retries). Once per configuration, each reading
its whole policy (a policy that retries nothing it can plan gets a persistent 503: it must stop at
once and report it). Given a persistent 503 whose body is not
its error shape (text/plain; {}), each in a one-operation scenario, it MUST report the operation
failed (failure-reported-as-success otherwise).`,
		Catches:    []string{"unbounded", "transport-resend", "success-on-bare-error"},
		Needs:      append(needs[:len(needs):len(needs)], "clients[].failure (exit_code, output)", "clients[].timeout", "clients[].retry.transport_resends", configNeed),
		Covers:     "each declared client, in each of its configurations",
		SpecLabels: []string{bareErrorLabel},
	}
	p.Specs = func(e *Env) []*Spec {
		specs := configurationSpecs(p, e, "stops at max_attempts under a persistent failure it retries (a connection closed once) and reports the failure",
			func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
				run, r := s.play(c, cfg, scenario{ops: 1, plans: []plan{boundedPlan(cfg.Retry)}})
				if r != nil {
					return *r
				}
				return check.Bounded(run, cfg.Retry)
			})
		for _, b := range bareErrors {
			specs = append(specs, labelled(clientSpecs(p, e, "reports as failed "+b.text+", not its error shape",
				func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
					run, r := s.play(c, cfg, scenario{ops: 1, plans: []plan{{bareStatus(503, b.body)}}})
					if r != nil {
						return *r
					}
					return check.BareError(run, cfg.Retry)
				}), bareErrorLabel)...)
		}
		return specs
	}
	register(p)
}

// boundedPlan is a persistent failure the policy retries: its first planned status, the second
// attempt's connection closed instead where it retries reset (a closed connection alone when it
// retries no status); a persistent 503 when it retries nothing a scenario can plan.
func boundedPlan(p targets.RetryPolicy) plan {
	fails := retriedFailures(p)
	switch {
	case len(fails) == 0:
		return plan{status(503, 0)}
	case fails[0].kind == drop.kind:
		return plan{drop}
	case p.RetriesFailure("reset"):
		return plan{fails[0], drop, fails[0]}
	}
	return plan{fails[0]}
}
