package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// backoffOps is how many operations the backoff scenario asks for: at least the jitter
// judgement's sample, two of them retried twice.
const backoffOps = 8

func init() {
	p := &Property{
		Name: "backoff",
		Must: `Given failures the client declares it retries (each status it lists in retries, in the order
listed, then a connection closed where it retries reset; never an attempt held past its timeout),
each delay before a retry (of an answer without a Retry-After the client honours) MUST fall
within the declared backoff's envelope (20 ms early, or max(20 ms, a quarter of its upper bound)
late, at most), and none under 10 ms (hammering); with jitter declared (full, equal or a range of the
cap: {min: 0.75, max: 1.0}), of the first-retry delays of at least 6 operations the
fastest MUST come in the lower three quarters of the envelope, and the fastest three quarters MUST
span at least max(5 ms, 10% of the envelope).`,
		Catches: []string{"no-jitter", "retries-immediately"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].retry.backoff"),
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "backs off within its envelope, with jitter", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			fails := retriedFailures(cfg.Retry)
			if len(fails) == 0 {
				return check.Unknownf("%s", nothingPlanned(c, cfg, "no delay before a retry can be planned"))
			}
			plans := make([]plan, backoffOps)
			for i := range plans {
				f := fails[i%len(fails)]
				plans[i] = plan{f, success}
				if i >= backoffOps-2 {
					plans[i] = plan{f, f, success}
				}
			}
			run, r := s.play(c, cfg, scenario{ops: backoffOps, plans: plans})
			if r != nil {
				return *r
			}
			return check.Backoff(run, cfg.Retry)
		})
	}
	register(p)
}
