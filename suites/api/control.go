package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// control: deduplication is by key, not by body.
//
// The target MUST process the same body sent under two different keys as two operations:
// two records.
//
// Catches: body-dedupe (requests deduplicated by body alone).
func init() {
	p := &Property{
		Name: "control",
		Must: `The same body sent with two different keys MUST be processed twice: two successes with
different results and two business records.`,
		Catches: []string{"body-dedupe"},
		Needs:   []string{"operations", "operations[].observer (for the record count)"},
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, def := range e.Target.Operations {
			out = append(out, spec(p, fmt.Sprintf("%s: the same body with two different keys gives two records", def.Name), func(s *S) check.Result {
				op := s.NewOp(def)
				other := op.WithKey(s.KeyFor(def, s.Next()))
				first := op.Do(framework.Send{Instance: 0})
				second := other.Do(framework.Send{Instance: 1})
				return check.Control(first, second, op.Count(), s.Target.Profile)
			}))
		}
		return out
	}
	register(p)
}
