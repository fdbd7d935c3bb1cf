package client

import (
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "retry-after",
		Must: `After each status the client retries whose Retry-After it declares it honours
(honors_retry_after: true, or the statuses listed), in the order retries lists them (a 503, a 409
in flight, a 429 by default; a conditional one with its condition met), answered with
Retry-After: S, the client's next attempt MUST arrive no earlier than S − 50 ms after the answer
was written; a retry after another is backoff's, and so is a connection closed (it carries no
Retry-After). A client that retries no such status leaves the scenario unknown.`,
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
		return clientSpecs(p, e, "waits out the Retry-After of each status it retries and honours it on", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			if !c.Retry.HonorsRetryAfter {
				return check.Skipf("client %s declares honors_retry_after: false", c.Name)
			}
			var plans []plan
			for _, st := range retryAfterPlanned(cfg.Retry) {
				plans = append(plans, plan{retriedStatus(cfg.Retry, st, time.Second), success})
			}
			if len(plans) == 0 {
				return check.Unknownf("client %s declares it retries no status whose Retry-After it honours (retry.retries, retry.honors_retry_after): no Retry-After can be planned", c.Name)
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

// retryAfterPlanned are the statuses the scenario answers with a Retry-After: each the policy
// retries (in the order its retries list them: PlannedStatuses) whose Retry-After it declares
// it honours, then each other status honors_retry_after lists that the policy retries (a 502
// under the class 5xx).
func retryAfterPlanned(p targets.RetryPolicy) []int {
	var out []int
	for _, st := range append(p.PlannedStatuses(), p.RetryAfterStatuses...) {
		if p.HonoursRetryAfterOn(st) && (p.RetriesStatus(st) || p.Conditional(st)) && !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out
}
