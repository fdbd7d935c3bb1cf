package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// tenancy: keys are scoped to the caller.
//
// The target MUST process tenant B's request that carries tenant A's key and an identical
// body as B's own (B gets its own record and never A's body; A still has one record), and
// MUST reject a request with A's key and missing or unknown credentials without ever
// sending A's stored response.
//
// Catches: unscoped (keys are global), replay-without-auth (the stored response is looked
// up before authentication).
func init() {
	p := &Property{
		Name: "tenancy",
		Must: `Tenant B sending tenant A's key with an identical body MUST be processed as B's own request
(B's record, never A's body; A keeps one record); a request with A's key and missing or unknown
credentials MUST be rejected and MUST NOT receive A's stored response.`,
		Catches: []string{"unscoped", "replay-without-auth"},
		Needs:   []string{"tenants (two or more)", "auth (bearer, header or none)"},
		Applies: func(e *Env) string {
			if len(e.Target.Tenants) < 2 {
				return "the target declares fewer than two tenants"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, def := range e.Target.Operations {
			out = append(out, tenantScopeSpec(p, e, def))
			for _, auth := range []string{"none", "unknown"} {
				out = append(out, credentialsSpec(p, e, def, auth))
			}
		}
		return out
	}
	register(p)
}

func tenantScopeSpec(p *Property, e *Env, def *targets.Operation) *Spec {
	alice, bob := e.Target.Tenants[0], e.Target.Tenants[1]
	return spec(p, fmt.Sprintf("%s: %s's key sent by %s with the same body is %s's own request", def.Name, alice.Name, bob.Name, bob.Name),
		func(s *S) check.Result {
			opA := s.NewOp(def)
			opB := opA.As(bob)
			first := opA.Do(framework.Send{Instance: 0})
			other := opB.Do(framework.Send{Instance: 1})
			if def.Observer != nil && !def.Observer.PerTenant() {
				return check.TenantScopeAcross(first, other, opA.Count(), s.Target.Profile) // one count of both
			}
			return check.TenantScope(first, other, opA.Count(), opB.Count(), s.Target.Profile)
		})
}

func credentialsSpec(p *Property, e *Env, def *targets.Operation, auth string) *Spec {
	alice := e.Target.Tenants[0]
	what := map[string]string{"none": "no credentials", "unknown": "unknown credentials"}[auth]
	text := fmt.Sprintf("%s: %s's key with %s is rejected and never gets the stored response", def.Name, alice.Name, what)
	if why := e.Target.CredentialSpecsSkip(); why != "" {
		return &Spec{Property: p, Text: text, Skip: why}
	}
	return spec(p, text, func(s *S) check.Result {
		op := s.NewOp(def)
		first := op.Do(framework.Send{Instance: 0})
		if !framework.Succeeded(first) {
			return check.Credentials(first, first, check.Count{}, what, s.Target.Profile)
		}
		stranger := op.Do(framework.Send{Instance: 1, Auth: auth})
		return check.Credentials(first, stranger, op.Count(), what, s.Target.Profile)
	})
}
