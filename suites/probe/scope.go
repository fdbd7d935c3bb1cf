package probe

import (
	"context"
	"github.com/retrysafe/retrysafe/reports/profile"
	"strconv"

	"github.com/retrysafe/retrysafe/targets/history"
)

// scopeFields probes the scope of a key: across tenants (tenant_scope), without credentials
// (unauthenticated_status) and across operations (operation_scope).
func (p *prober) scopeFields(ctx context.Context) []profile.Field {
	return []profile.Field{p.tenantScope(ctx), p.unauthenticated(ctx), p.operationScope(ctx)}
}

// tenantScope sends one request as the first tenant, then the same key and body as the second.
func (p *prober) tenantScope(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldTenantScope, p.def)
	if len(p.t.Tenants) < 2 {
		return fd.notProbed("the target declares fewer than two tenants")
	}
	a := p.newOp(p.def, p.t.Tenants[0])
	b := a
	b.tenant = p.t.Tenants[1]
	return p.scope(ctx, fd, a, b, "per-tenant",
		"response served across tenants: "+b.tenant.Name+" received "+a.tenant.Name+"'s stored response")
}

// operationScope sends one request on the first operation, then the same key and ref on the
// second.
func (p *prober) operationScope(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldOperationScope, p.def)
	if len(p.t.Operations) < 2 {
		return fd.notProbed("the target declares one operation")
	}
	a := p.newOp(p.t.Operations[0], p.tenant)
	b := a
	b.def = p.t.Operations[1]
	fd.f.Operation = a.def.Name + ", " + b.def.Name
	return p.scope(ctx, fd, a, b, "per-operation",
		"response served across operations: "+b.def.Name+" received the stored response of "+a.def.Name)
}

// scope sends a, then b with the same key: own is the value when b is processed as its own
// request; when b gets a's answer the key is "shared" and unsafe; when b is refused the key
// is "shared" too (a global key space), but nothing leaked.
func (p *prober) scope(ctx context.Context, fd *finding, a, b op, own, leak string) profile.Field {
	first, ok := fd.do(ctx, a, sendOpts{})
	if !ok {
		return fd.f
	}
	if !success(first) {
		return fd.notProbed("the first request was answered %d", first.Status)
	}
	second, ok := fd.do(ctx, b, sendOpts{})
	if !ok {
		return fd.f
	}
	fd.count(ctx, a)
	nb, counted := fd.count(ctx, b)
	switch {
	case success(second) && sameAnswer(first, second, p.t.Profile.Ignore):
		fd.unsafe("%s", leak)
		return fd.done("shared")
	case success(second):
		if counted && nb != 1 {
			fd.note("the second request left %d record(s)", nb)
		}
		return fd.done(own)
	}
	fd.note("the same key was refused with %d: one key space for both", second.Status)
	return fd.done("shared")
}

// unauthenticated sends a request as the first tenant, then the same key and body without
// credentials: its status, unsafe when it carries the stored response.
func (p *prober) unauthenticated(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldUnauthenticatedStatus, p.def)
	if p.tenant == nil || len(p.tenant.Headers) == 0 {
		return fd.notProbed("the target declares no tenant credentials")
	}
	o := p.newOp(p.def, p.tenant)
	first, ok := fd.do(ctx, o, sendOpts{})
	if !ok {
		return fd.f
	}
	if !success(first) {
		return fd.notProbed("the first request was answered %d", first.Status)
	}
	stranger, ok := fd.do(ctx, o, sendOpts{noAuth: true})
	if !ok {
		return fd.f
	}
	fd.count(ctx, o)
	if leaked(first, stranger, p) {
		fd.unsafe("response served across tenants: a request without credentials received %s's stored response", p.tenant.Name)
	}
	return fd.done(strconv.Itoa(stranger.Status))
}

// leaked reports whether other carries first's body.
func leaked(first, other history.Attempt, p *prober) bool {
	return len(bodyDifferences(first.RespBody, other.RespBody, p.t.Profile.Ignore)) == 0
}
