package targets

// AuthMode is how the API tells its callers apart (the target file's top-level auth).
type AuthMode string

const (
	// AuthBearer: each tenant sends credentials (typically Authorization: Bearer ...); a request
	// without them, or with unknown ones, must be rejected.
	AuthBearer AuthMode = "bearer"
	// AuthHeader: each tenant sends credentials in other headers (an API key header, say);
	// missing or unknown ones must be rejected.
	AuthHeader AuthMode = "header"
	// AuthNone: no authentication; tenants are told apart by identity headers alone (X-Tenant),
	// so there is no credential to omit or get wrong.
	AuthNone AuthMode = "none"
)

// CredentialSpecsSkip says why the specs that send missing or unknown credentials do not apply
// to the target ("" = they apply).
func (t *Target) CredentialSpecsSkip() string {
	if t.Auth == AuthNone {
		return "the target declares auth: none: there are no credentials to leave out or get wrong"
	}
	for _, tn := range t.Tenants {
		if len(tn.Credentials()) > 0 {
			return ""
		}
	}
	return "no tenant declares credentials (headers or credentials): there are none to leave out or get wrong"
}

// PerTenant reports whether the observer counts one tenant's records (the default), as opposed to
// every tenant's records of a ref (observer.per_tenant: false).
func (o *Observer) PerTenant() bool { return o.perTenant == nil || *o.perTenant }
