package client

import (
	"slices"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// Candidates for the statuses a policy does not declare (neither retries nor never): a 5xx when
// it lists only some, then a 4xx, each the first of its list the policy says nothing about.
var (
	undeclared5xx = []int{501, 500, 502, 503, 504, 505}
	undeclared4xx = []int{408, 425, 409, 429, 410, 412}
)

func init() {
	p := &Property{
		Name: "retries-transient",
		Must: `After a response dropped mid-flight (processed, then the connection closed), an attempt
held past its timeout, a 503, and each status the policy lists in retries (409, 429, 408, ...),
each once in an operation of its own, the client MUST retry each failure it declares it retries,
within its declared attempts (no-retry); given a status the policy neither retries nor never
resends (a 501 when it lists only some 5xx, a 408 outside both lists), it MUST NOT retry it
with the same key (undeclared-retry). Each conditional entry of retries ({status: 429, when:
{jsonpath: $.error.code, equals: lock_timeout}}) is answered with its condition met (retried)
and not met (undeclared-retry if retried); a declared should-retry header is answered saying
never on a status the policy retries (retried-rejection if resent) and retry on one it never
resends (no-retry if not retried). Once per configuration; a scenario in which nothing was
judged is unknown, never a pass.`,
		Catches: []string{"never-retries", "skips-declared-retry", "retries-undeclared-status", "ignores-should-retry-false", "ignores-error-code"},
		Needs:   append(needs[:len(needs):len(needs)], configNeed),
		Covers:  "each declared client, in each of its configurations",
	}
	p.Specs = func(e *Env) []*Spec {
		return configurationSpecs(p, e, "retries a dropped response, a timeout, a 503 and each status it declares, and no status it does not",
			func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
				plans := append(transientPlans(cfg.Retry), conditionPlans(c, cfg.Retry)...)
				run, r := s.play(c, cfg, scenario{ops: len(plans), plans: plans})
				if r != nil {
					return *r
				}
				return check.RetriesTransient(run, cfg.Retry)
			})
	}
	register(p)
}

// transientPlans are the retries-transient scenario's operations: a connection closed after
// processing, an attempt held past the client's timeout, a 503 (its condition met, where only a
// conditional entry retries it), each status the policy lists in retries, and the statuses it
// does not declare (undeclaredStatuses), each failed once and then answered with a success.
func transientPlans(p targets.RetryPolicy) []plan {
	plans := []plan{{drop, success}, {hold, success}, {retriedStatus(p, 503, 0), success}}
	seen := []int{503}
	for _, st := range append(p.RetriedStatuses(), undeclaredStatuses(p)...) {
		if !slices.Contains(seen, st) {
			seen = append(seen, st)
			plans = append(plans, plan{status(st, 0), success})
		}
	}
	return plans
}

// undeclaredStatuses are the statuses the policy neither retries nor never resends that the
// scenario answers: a 5xx when retries does not list the class 5xx, and a 4xx.
func undeclaredStatuses(p targets.RetryPolicy) []int {
	var out []int
	for _, list := range [][]int{undeclared5xx, undeclared4xx} {
		if i := slices.IndexFunc(list, func(st int) bool { return !p.Declares(st) }); i >= 0 {
			out = append(out, list[i])
		}
	}
	return out
}
