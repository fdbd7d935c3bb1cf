package client

import (
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// retryAfterStatuses are the statuses the retry-after scenario answers with a Retry-After: a 429,
// a 503 and a 409 in flight.
var retryAfterStatuses = []int{429, 503, 409}

func init() {
	p := &Property{
		Name: "retry-after",
		Must: `After a 429, a 503 and a 409 in flight with Retry-After: S (and any other status the client
lists in honors_retry_after and retries), the client's next attempt MUST arrive no earlier than
S − 50 ms after the answer was written, for each status whose Retry-After it declares it honours
(honors_retry_after: true, or the statuses listed) and retries; a retry after another is backoff's.`,
		Catches: []string{"ignores-retry-after", "retry-after-429-ignored"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].retry.honors_retry_after"),
		Covers:  "each declared client",
		Applies: func(e *Env) string {
			for _, c := range e.Target.Clients {
				if c.Retry.HonorsRetryAfter {
					return ""
				}
			}
			return "no client declares honors_retry_after: true or a list of statuses (a deviation from the source articles' rules)"
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "waits out Retry-After on a 429, a 503 and a 409", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			if !c.Retry.HonorsRetryAfter {
				return check.Skipf("client %s declares honors_retry_after: false", c.Name)
			}
			var plans []plan
			for _, st := range retryAfterPlanned(c.Retry) {
				plans = append(plans, plan{status(st, time.Second), success})
			}
			run, r := s.play(c, cfg, scenario{ops: len(plans), plans: plans})
			if r != nil {
				return *r
			}
			return check.RetryAfter(run, cfg.Retry)
		})
	}
	register(p)
}

// retryAfterPlanned are the statuses the scenario answers with a Retry-After: a 429, a 503, a
// 409, and each other status the policy both lists in honors_retry_after and retries.
func retryAfterPlanned(p targets.RetryPolicy) []int {
	out := slices.Clone(retryAfterStatuses)
	for _, st := range p.RetryAfterStatuses {
		if !slices.Contains(out, st) && p.RetriesStatus(st) {
			out = append(out, st)
		}
	}
	return out
}
