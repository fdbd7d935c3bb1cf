package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// mismatch: the same key with another payload, the same payload reformatted, and the same
// key on another operation.
//
// The target MUST answer the same key with a different payload with the profile's mismatch
// status and leave the original untouched (one record; a retry still replays it); MUST NOT
// treat the same JSON with keys reordered and other white space as a mismatch; and MUST
// treat the same key and body on another operation as an independent request (operation_scope
// per-operation, the default) or refuse it with operation_reuse_status and leave no record there
// (shared), never serving the first operation's stored answer.
//
// Catches: no-fingerprint, raw-fingerprint, path-blind, fingerprint-ignores-field (see
// mismatchfields.go: every field of the body changed on its own).
func init() {
	p := &Property{
		Name: "mismatch",
		Must: `The same key with a different payload MUST get the profile's mismatch status and leave the
original untouched (one record, a retry replays it), whichever field of the body or query differs;
the same payload with fields reordered and other white space MUST NOT be a mismatch; the same key and
body on a second operation MUST be an independent request with its own record (operation_scope:
per-operation, the default), or be refused with operation_reuse_status and leave no record there
(operation_scope: shared), and MUST NOT get the first operation's stored answer.`,
		Catches: []string{"no-fingerprint", "raw-fingerprint", "path-blind", "fingerprint-ignores-field"},
		Needs:   []string{"operations[].body (JSON or form) or operations[].variant_body", "two operations (for the scope check)", "profile.operation_scope, profile.operation_reuse_status"},
		Covers:  "the scope spec covers the first two operations; the others cover each operation",
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, def := range e.Target.Operations {
			if def.HasVariant() {
				out = append(out, variantSpec(p, e, def))
			}
			out = append(out, mismatchFieldsSpec(p, e, def)...)
			out = append(out, reformatSpec(p, def))
		}
		if len(e.Target.Operations) >= 2 {
			out = append(out, scopeSpec(p, e, e.Target.Operations[0], e.Target.Operations[1]))
		}
		return out
	}
	register(p)
}

func variantSpec(p *Property, e *Env, def *targets.Operation) *Spec {
	return spec(p, fmt.Sprintf("%s: the same key with the variant payload gets %s and leaves the original untouched",
		def.Name, e.Target.Profile.MismatchStatus), func(s *S) check.Result {
		op := s.NewOp(def)
		first := op.Do(framework.Send{Instance: 0})
		if !framework.Succeeded(first) {
			return check.Mismatch(first, first, first, check.Count{}, s.Target.Profile)
		}
		variant := op.Do(framework.Send{Instance: 1, Variant: true})
		again := op.Do(framework.Send{Instance: 2})
		return check.Mismatch(first, variant, again, op.Count(), s.Target.Profile)
	})
}

func reformatSpec(p *Property, def *targets.Operation) *Spec {
	return spec(p, fmt.Sprintf("%s: the same payload with reordered fields and other white space is a replay, not a mismatch", def.Name),
		func(s *S) check.Result {
			op := s.NewOp(def)
			first := op.Do(framework.Send{Instance: 0})
			again := op.Do(framework.Send{Instance: 1, Reformat: true})
			return check.Reformat(first, again, op.Count(), s.Target.Profile)
		})
}

func scopeSpec(p *Property, e *Env, a, b *targets.Operation) *Spec {
	text := fmt.Sprintf("the same key and body on %s and on %s are two independent requests", a.Name, b.Name)
	if pr := e.Target.Profile; pr.OperationScope == targets.ScopeShared {
		text = fmt.Sprintf("the key of %s reused on %s is refused with %s and leaves no record there (operation_scope: shared)",
			a.Name, b.Name, pr.OperationReuseStatus)
	}
	return spec(p, text,
		func(s *S) check.Result {
			opA := s.NewOp(a)
			opB := opA.Again(b)
			first := opA.Do(framework.Send{Instance: 0})
			second := opB.Do(framework.Send{Instance: 1})
			return check.OperationScope(first, second, opA.Count(), opB.Count(), s.Target.Profile)
		})
}
