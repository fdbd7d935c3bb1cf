package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "no-retry-on-rejection",
		Must: `An operation the API rejected as invalid (a 400, a 422: the statuses the client declares
it never resends) MUST NOT be resent with the same key; given a 422 whose body is {} (not its
error shape), in a one-operation scenario, the client MUST also report the operation failed
(failure-reported-as-success otherwise).`,
		Catches:    []string{"retries-rejections"},
		Needs:      needs,
		Covers:     "each declared client",
		SpecLabels: []string{bareErrorLabel},
	}
	p.Specs = func(e *Env) []*Spec {
		specs := clientSpecs(p, e, "does not resend a 400 or a 422", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			// Without the should-retry header, which would decide over the status.
			run, r := s.play(c, cfg, scenario{ops: 2, plans: []plan{{withShouldRetry(cfg.Retry, status(400, 0), "")},
				{withShouldRetry(cfg.Retry, status(422, 0), "")}}})
			if r != nil {
				return *r
			}
			return check.NoRetryOnRejection(run, cfg.Retry)
		})
		return append(specs, labelled(clientSpecs(p, e, "reports as failed a 422 whose body is {}, not its error shape",
			func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
				run, r := s.play(c, cfg, scenario{ops: 1, plans: []plan{{bareStatus(422, emptyJSON)}}})
				if r != nil {
					return *r
				}
				return check.BareError(run, cfg.Retry)
			}), bareErrorLabel)...)
	}
	register(p)
}
