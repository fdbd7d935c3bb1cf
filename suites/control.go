package suites

import (
	. "github.com/onsi/ginkgo/v2"
)

// control: deduplication is by key, not by body.
//
// The target MUST process the same body sent under two different keys as two operations:
// two records.
//
// Catches: body-dedupe (requests deduplicated by body alone).
func init() {
	register(&Property{
		Name: "control",
		Must: `The same body sent with two different keys MUST be processed twice: two successes with
different results and two business records.`,
		Catches: []string{"body-dedupe"},
		Needs:   []string{"operations", "operations[].observer (for the record count)"},
		specs:   controlSpecs,
	})
}

func controlSpecs(e *Env) {
	for _, def := range e.Target.Operations {
		It(sprintf("%s: the same body with two different keys gives two records", def.Name), func() {
			op := e.NewOp(def)
			other := op.WithKey(op.Key + "-b")
			first := e.ok(op.Do(Send{Instance: 0}))
			expectSuccess(first, "first key")
			second := e.ok(other.Do(Send{Instance: 1}))
			expectSuccess(second, "second key, same body")
			if def.Observer == nil && len(CompareBodies(first.RespBody, second.RespBody, e.Target.Profile.Ignore)) == 0 {
				// Without an observer, an identical answer is the only sign of body dedupe.
				Fail(sprintf("the second key got the first key's answer:\n%s", second))
			}
			e.expectRecords(op, 2)
		})
	}
}
