package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "new-key-per-operation",
		Must: `N operations MUST be sent with N distinct keys, two operations that share one business
reference but differ in content included (where the client declares how to ask for them:
clients[].ops.same_ref).`,
		Catches: []string{"key-from-ref"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].ops.same_ref (for the shared-reference pair)"),
		Covers:  "each declared client",
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "sends each operation with a key of its own, two with one reference too", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			run, r := s.play(c, cfg, scenario{ops: 3, sameRef: true})
			if r != nil {
				return *r
			}
			if c.Ops.SameRef == nil {
				s.Notef("client %s declares no ops.same_ref: only operations with distinct references were checked", c.Name)
			}
			return check.NewKeyPerOperation(run, cfg.Retry)
		})
	}
	register(p)
}
