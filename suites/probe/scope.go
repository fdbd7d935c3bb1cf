package probe

import (
	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// scopeFields probes the scope of a key: across tenants (tenant_scope), without or with unknown
// credentials (unauthenticated_status) and across operations (operation_scope).
func (p *prober) scopeFields() []profile.Field {
	return []profile.Field{p.tenantScope(), p.unauthenticated(), p.operationScope()}
}

// tenantScope sends one request as the first tenant, then the same key and body as the second.
func (p *prober) tenantScope() profile.Field {
	fd := p.field(profile.FieldTenantScope, p.def)
	if len(p.t.Tenants) < 2 {
		return fd.notProbed("the target declares fewer than two tenants")
	}
	a := p.s.NewOp(p.def).As(p.t.Tenants[0])
	b := a.As(p.t.Tenants[1])
	return p.scope(fd, a, b, "per-tenant",
		"response served across tenants: "+b.Tenant.Name+" received "+a.Tenant.Name+"'s stored response")
}

// operationScope sends one request on the first operation, then the same key and ref on the
// second.
func (p *prober) operationScope() profile.Field {
	fd := p.field(profile.FieldOperationScope, p.def)
	if len(p.t.Operations) < 2 {
		return fd.notProbed("the target declares one operation")
	}
	a := p.s.NewOp(p.t.Operations[0])
	b := a.Again(p.t.Operations[1])
	fd.f.Operation = a.Def.Name + ", " + b.Def.Name
	return p.scope(fd, a, b, "per-operation",
		"response served across operations: "+b.Def.Name+" received the stored response of "+a.Def.Name)
}

// scope sends a, then b with the same key: own is the value when b is processed as its own
// request; when b gets a's answer the key is "shared" and unsafe; when b is refused the key
// is "shared" too (a global key space), but nothing leaked.
func (p *prober) scope(fd *finding, a, b *framework.Op, own, leak string) profile.Field {
	first, ok := fd.doFirst(a)
	if !ok {
		return fd.f
	}
	second, ok := fd.do(b, framework.Send{})
	if !ok {
		return fd.f
	}
	fd.count(a)
	nb, counted := fd.count(b)
	switch {
	case success(second) && p.same(first, second):
		fd.unsafe("%s", leak)
		return fd.done("shared")
	case success(second):
		want := 1
		if a.Def == b.Def && b.Def.Observer != nil && !b.Def.Observer.PerTenant() {
			want = 2 // the observer counts every tenant's records of the ref
		}
		if counted && nb != want {
			fd.note("the second request's count is %d, not %d", nb, want)
		}
		return fd.done(own)
	}
	fd.note("the same key was refused with %d: one key space for both", second.Status)
	return fd.done("shared")
}

// unauthenticated sends a request as the first tenant, then the same key and body without
// credentials, then with unknown ones: the status without credentials, unsafe when either
// carries the stored response.
func (p *prober) unauthenticated() profile.Field {
	fd := p.field(profile.FieldUnauthenticatedStatus, p.def)
	if why := p.t.CredentialSpecsSkip(); why != "" || len(p.t.Tenants) == 0 {
		if why == "" {
			why = "the target declares no tenants"
		}
		return fd.notProbed("%s", why)
	}
	o := p.s.NewOp(p.def)
	first, ok := fd.doFirst(o)
	if !ok {
		return fd.f
	}
	stranger, ok := fd.do(o, framework.Send{Auth: "none"})
	if !ok {
		return fd.f
	}
	impostor, ok := fd.do(o, framework.Send{Auth: "unknown"})
	if !ok {
		return fd.f
	}
	fd.count(o)
	switch {
	case p.leaked(first, stranger):
		fd.unsafe("response served across tenants: a request without credentials received %s's stored response", o.Tenant.Name)
	case p.leaked(first, impostor):
		fd.unsafe("response served across tenants: a request with unknown credentials received %s's stored response", o.Tenant.Name)
	}
	if impostor.Status != stranger.Status {
		fd.note("unknown credentials got %d", impostor.Status)
	}
	return fd.done(statusText(stranger.Status))
}

// leaked reports whether other carries first's body.
func (p *prober) leaked(first, other history.Attempt) bool {
	return len(bodyDifferences(first.RespBody, other.RespBody, p.t.Profile.Ignore)) == 0
}
