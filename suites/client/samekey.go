package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "same-key-on-retry",
		Must: `Every retry of an operation MUST carry the key of its first attempt and an equal body
(canonical JSON or form: the changed field is named); an operation the API processed under two
keys left two records.`,
		Catches: []string{"new-key-per-retry", "body-drift"},
		Needs:   needs,
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "keeps its key and body across a dropped response, a 503 and a 502", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			run, r := s.play(c, cfg, scenario{ops: 2, plans: []plan{{drop, status(503, 0), success}, {status(502, 0), success}}})
			if r != nil {
				return *r
			}
			return check.SameKeyOnRetry(run, cfg.Retry)
		})
	}
	register(p)
}
