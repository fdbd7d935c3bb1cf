package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// mismatchFieldsSpec is the mismatch property's field-by-field spec of one operation: the same
// key sent once per field of the body (JSON or form) and per query parameter, that field
// changed on its own. An API whose fingerprint leaves out one field replays the first result for
// a request that differs in that field; a variant_body that happens not to change that field
// cannot see it.
func mismatchFieldsSpec(p *Property, e *Env, def *targets.Operation) []*Spec {
	return []*Spec{spec(p, fmt.Sprintf("%s: the same key with any one field of the body or query changed is rejected", def.Name),
		func(s *S) check.Result {
			op := s.NewOp(def)
			req, body, err := def.Build(targets.BuildInput{Context: s.Ctx(), Instance: s.Instance(0), Tenant: op.Tenant, Vars: op.Vars()})
			if err != nil {
				return check.Unknownf("cannot render %s: %v", def.Name, err)
			}
			variants, more, err := def.FieldVariants(body, req.URL.RawQuery, s.Settings.MaxFields)
			switch {
			case err != nil:
				return check.Skipf("the body of %s is not JSON or a form the harness can change field by field: %v", def.Name, err)
			case len(variants) == 0:
				return check.Skipf("the request of %s has no field to change (no body fields, no query parameters)", def.Name)
			case more:
				s.Notef("the first %d fields of %s were changed (--max-fields); the others were not tried", len(variants), def.Name)
			}
			first := op.Do(framework.Send{Instance: 0})
			if !framework.Succeeded(first) {
				return check.MismatchFields(first, nil, first, check.Count{}, s.Target.Profile)
			}
			var tried []check.FieldVariant
			for i, v := range variants {
				if s.Ctx().Err() != nil {
					break
				}
				tried = append(tried, check.FieldVariant{Field: v.Field, Attempt: op.SendVariant(v, i+1)})
			}
			again := op.Do(framework.Send{Instance: 0})
			return check.MismatchFields(first, tried, again, op.Count(), s.Target.Profile)
		})}
}
