package client

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "retry-after",
		Must: `After a 429, a 503 and a 409 in flight with Retry-After: S, the client's next attempt MUST
arrive no earlier than S − 50 ms after the answer was written (for each of them it declares it
retries).`,
		Catches: []string{"ignores-retry-after"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].retry.honors_retry_after"),
		Covers:  "each declared client",
		Applies: func(e *Env) string {
			for _, c := range e.Target.Clients {
				if c.Retry.HonorsRetryAfter {
					return ""
				}
			}
			return "no client declares honors_retry_after: true (a deviation from the source articles' rules)"
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "waits out Retry-After on a 429, a 503 and a 409", func(s *S, c *targets.Client) check.Result {
			if !c.Retry.HonorsRetryAfter {
				return check.Skipf("client %s declares honors_retry_after: false", c.Name)
			}
			ra := time.Second
			run, r := s.play(c, scenario{ops: 3, plans: []plan{{status(429, ra), success}, {status(503, ra), success}, {status(409, ra), success}}})
			if r != nil {
				return *r
			}
			return check.RetryAfter(run, c.Retry)
		})
	}
	register(p)
}
