package suites

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/retrysafe/retrysafe/targets"
)

// mismatch: the same key with another payload, the same payload reformatted, and the same
// key on another operation.
//
// The target MUST answer the same key with a different payload with the profile's mismatch
// status and leave the original untouched (one record; a retry still replays it); MUST NOT
// treat the same JSON with keys reordered and other white space as a mismatch; and MUST
// treat the same key and body on another operation as an independent request.
//
// Catches: no-fingerprint, raw-fingerprint, path-blind.
func init() {
	register(&Property{
		Name: "mismatch",
		Must: `The same key with a different payload MUST get the profile's mismatch status and leave the
original untouched (one record, a retry replays it); the same payload with fields reordered and other
white space MUST NOT be a mismatch; the same key and body on a second operation MUST be an independent
request with its own record.`,
		Catches: []string{"no-fingerprint", "raw-fingerprint", "path-blind"},
		Needs:   []string{"operations[].variant_body", "two operations (for the scope check)"},
		applies: func(e *Env) string {
			if variantOp(e) == nil {
				return "no operation declares a variant_body"
			}
			return ""
		},
		specs: mismatchSpecs,
	})
}

// variantOp is the first operation with a variant body.
func variantOp(e *Env) *targets.Operation {
	for _, op := range e.Target.Operations {
		if op.HasVariant() {
			return op
		}
	}
	return nil
}

func mismatchSpecs(e *Env) {
	def := variantOp(e)
	want := e.Target.Profile.MismatchStatus
	It(sprintf("%s: the same key with another payload gets %d and leaves the original untouched", def.Name, want), func() {
		op := e.NewOp(def)
		first := e.ok(op.Do(Send{Instance: 0}))
		expectSuccess(first, "first answer")
		other := e.ok(op.Do(Send{Instance: 1, Variant: true}))
		expectStatus(other, want, "same key, different payload")
		again := e.ok(op.Do(Send{Instance: 2}))
		e.expectSame(first, again, "the retry with the original payload after the mismatch")
		e.expectRecords(op, 1)
	})
	It(sprintf("%s: the same payload with reordered fields and other white space is a replay, not a mismatch", def.Name), func() {
		op := e.NewOp(def)
		first := e.ok(op.Do(Send{Instance: 0}))
		expectSuccess(first, "first answer")
		again := e.ok(op.Do(Send{Instance: 1, Reformat: true}))
		e.expectSame(first, again, "the reformatted retry")
		e.expectRecords(op, 1)
	})
	if len(e.Target.Operations) < 2 {
		return
	}
	a, b := e.Target.Operations[0], e.Target.Operations[1]
	It(sprintf("the same key and body on %s and on %s are two independent requests", a.Name, b.Name), func() {
		opA := e.NewOp(a)
		opB := opA.Again(b)
		first := e.ok(opA.Do(Send{Instance: 0}))
		expectSuccess(first, a.Name)
		second := e.ok(opB.Do(Send{Instance: 1}))
		expectSuccess(second, b.Name+" with the same key")
		Expect(CompareBodies(first.RespBody, second.RespBody, e.Target.Profile.Ignore)).NotTo(BeEmpty(),
			"%s answered with %s's stored body:\n%s", b.Name, a.Name, second)
		e.expectRecords(opA, 1)
		e.expectRecords(opB, 1)
	})
}
