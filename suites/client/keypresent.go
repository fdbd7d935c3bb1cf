package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "key-present",
		Must: `A POST the client retries MUST carry an idempotency key, where the operation declares it
(without one the API cannot tell the retry from a new operation): two operations each fail once
with what the configuration retries (its first listed status, and a connection closed where it
retries reset). Once per configuration (one that makes a single attempt, max_attempts: 1, and
retried nothing, or one that retries nothing a scenario can plan, is skipped).`,
		Catches: []string{"no-key"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].operations[].key", configNeed),
		Covers:  "each declared client, in each of its configurations",
	}
	p.Specs = func(e *Env) []*Spec {
		return configurationSpecs(p, e, "sends a key with every attempt it retries", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			fails := retriedFailures(cfg.Retry)
			if len(fails) == 0 {
				return check.Skipf("%s", nothingPlanned(c, cfg, "no retry to judge"))
			}
			first, second := fails[0], fails[len(fails)-1] // a status, and a closed connection where retried
			run, r := s.play(c, cfg, scenario{ops: 2, plans: []plan{{first, success}, {second, success}}})
			if r != nil {
				return *r
			}
			return check.KeyPresent(run, cfg.Retry)
		})
	}
	register(p)
}
