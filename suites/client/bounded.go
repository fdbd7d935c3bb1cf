package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "bounded",
		Must: `Under a persistent 503 the client MUST stop at its declared max_attempts and report the
failure as it declares (clients[].failure); the harness ends a client still retrying at
max_attempts + 2 attempts or at the scenario's timeout (SIGKILL: unbounded-retries).`,
		Catches: []string{"unbounded"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].failure (exit_code, output)", "clients[].timeout"),
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "stops at max_attempts under a persistent 503 and reports the failure", func(s *S, c *targets.Client) check.Result {
			run, r := s.play(c, scenario{ops: 1, plans: []plan{{status(503, 0)}}})
			if r != nil {
				return *r
			}
			return check.Bounded(run, c.Retry)
		})
	}
	register(p)
}
