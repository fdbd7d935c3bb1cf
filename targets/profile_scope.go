package targets

import "strings"

// OperationScope says what an idempotency key names across the operations of an API
// (profile.operation_scope).
type OperationScope string

const (
	// ScopePerOperation: a key is scoped to its operation (method and path): the same key on
	// another operation is an independent request (the default).
	ScopePerOperation OperationScope = "per-operation"
	// ScopeShared: one key space for every operation: the same key on another operation is
	// refused with Profile.OperationReuseStatus and leaves no record (Stripe's contract).
	ScopeShared OperationScope = "shared"
)

// scopeDefaults sets the operation scope fields of a base profile.
func (p *Profile) scopeDefaults() {
	p.OperationScope = ScopePerOperation
	p.OperationReuseStatus = StatusSet{Classes: []int{4}}
}

// operationScope decodes profile.operation_scope and profile.operation_reuse_status.
func (d *decoder) operationScope(o *object, p *Profile) {
	if s, ok := d.str(o, "operation_scope"); ok {
		switch v := OperationScope(strings.TrimSpace(s)); v {
		case ScopePerOperation, ScopeShared:
			p.OperationScope = v
			p.scopeLine = o.lineOf("operation_scope")
		default:
			d.ps.add(o.lineOf("operation_scope"), o.at("operation_scope"), "must be per-operation or shared, got %q", s)
		}
	}
	if v, ok := d.statusSet(o, "operation_reuse_status", false); ok {
		p.OperationReuseStatus = v
		if p.OperationScope != ScopeShared {
			d.warns.add(o.lineOf("operation_reuse_status"), o.at("operation_reuse_status"),
				"is used only with operation_scope: shared (a key reused on another operation is refused); with %s it checks nothing", p.OperationScope)
		}
		if slices5xx(v) {
			d.warns.add(o.lineOf("operation_reuse_status"), o.at("operation_reuse_status"),
				"declares a 5xx for a key reused on another operation: retrysafe reports any 5xx there as a server-error anomaly all the same")
		}
	}
}

// checkOperationScope warns about a shared scope on a file with fewer than two operations:
// there is no other operation to reuse a key on.
func (d *decoder) checkOperationScope(t *Target) {
	if t.Profile.OperationScope == ScopeShared && len(t.Operations) == 1 {
		d.warns.add(t.Profile.scopeLine, "profile.operation_scope",
			"shared, but the file declares one operation: nothing to check (the scope spec needs two)")
	}
}

// slices5xx reports whether a status set names a 5xx.
func slices5xx(s StatusSet) bool {
	for _, c := range s.Codes {
		if c >= 500 {
			return true
		}
	}
	for _, c := range s.Classes {
		if c == 5 {
			return true
		}
	}
	return false
}
