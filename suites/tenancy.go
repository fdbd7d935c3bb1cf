package suites

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
	register(&Property{
		Name: "tenancy",
		Must: `Tenant B sending tenant A's key with an identical body MUST be processed as B's own request
(B's record, never A's body; A keeps one record); a request with A's key and missing or unknown
credentials MUST be rejected and MUST NOT receive A's stored response.`,
		Catches: []string{"unscoped", "replay-without-auth"},
		Needs:   []string{"tenants (two or more)"},
		applies: func(e *Env) string {
			if len(e.Target.Tenants) < 2 {
				return "the target declares fewer than two tenants"
			}
			return ""
		},
		specs: tenancySpecs,
	})
}

func tenancySpecs(e *Env) {
	def := e.Target.Operations[0]
	alice, bob := e.Target.Tenants[0], e.Target.Tenants[1]
	It(sprintf("%s: %s's key sent by %s with the same body is %s's own request", def.Name, alice.Name, bob.Name, bob.Name), func() {
		opA := e.NewOp(def)
		opB := opA.As(bob)
		first := e.ok(opA.Do(Send{Instance: 0}))
		expectSuccess(first, alice.Name)
		other := e.ok(opB.Do(Send{Instance: 1}))
		expectSuccess(other, bob.Name+" with "+alice.Name+"'s key")
		Expect(CompareBodies(first.RespBody, other.RespBody, e.Target.Profile.Ignore)).NotTo(BeEmpty(),
			"%s received %s's stored response:\n%s", bob.Name, alice.Name, other)
		e.expectRecords(opB, 1)
		e.expectRecords(opA, 1)
	})
	for _, auth := range []string{"none", "unknown"} {
		what := map[string]string{"none": "no", "unknown": "unknown"}[auth]
		It(sprintf("%s: %s's key with %s credentials is rejected and never gets the stored response", def.Name, alice.Name, what), func() {
			op := e.NewOp(def)
			first := e.ok(op.Do(Send{Instance: 0}))
			expectSuccess(first, alice.Name)
			stranger := e.ok(op.Do(Send{Instance: 1, Auth: auth}))
			Expect(CompareBodies(first.RespBody, stranger.RespBody, e.Target.Profile.Ignore)).NotTo(BeEmpty(),
				"a request with %s credentials received %s's stored response:\n%s", auth, alice.Name, stranger)
			expectRejected(stranger, auth+" credentials")
			e.expectRecords(op, 1)
		})
	}
}
