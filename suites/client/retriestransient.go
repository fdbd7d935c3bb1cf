package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "retries-transient",
		Must: `After a response dropped mid-flight (processed, then the connection closed), an attempt
held past its timeout, and a 503, the client MUST retry each failure it declares it retries, within
its declared attempts; a scenario in which the client retried nothing it was given is unknown,
never a pass.`,
		Catches: []string{"never-retries"},
		Needs:   needs,
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "retries a dropped response, a timeout and a 503", func(s *S, c *targets.Client) check.Result {
			run, r := s.play(c, scenario{ops: 3, plans: []plan{{drop, success}, {hold, success}, {status(503, 0), success}}})
			if r != nil {
				return *r
			}
			return check.RetriesTransient(run, c.Retry)
		})
	}
	register(p)
}
