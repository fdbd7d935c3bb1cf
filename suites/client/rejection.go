package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "no-retry-on-rejection",
		Must: `An operation the API rejected as invalid (a 400, a 422: the statuses the client declares
it never resends) MUST NOT be resent with the same key.`,
		Catches: []string{"retries-rejections"},
		Needs:   needs,
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "does not resend a 400 or a 422", func(s *S, c *targets.Client) check.Result {
			run, r := s.play(c, scenario{ops: 2, plans: []plan{{status(400, 0)}, {status(422, 0)}}})
			if r != nil {
				return *r
			}
			return check.NoRetryOnRejection(run, c.Retry)
		})
	}
	register(p)
}
