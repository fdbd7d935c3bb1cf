package reference

import (
	"fmt"
	"net/http"
	"strings"
)

// AuthMode says how the API learns the caller's tenant.
type AuthMode string

const (
	// AuthBearer (the default): `Authorization: Bearer <tenant name>`; a missing or unknown
	// token is 401.
	AuthBearer AuthMode = "bearer"
	// AuthNone: no authentication; the TenantHeader names the tenant. A missing or unknown
	// tenant is 400: there is no credential that could be wrong, only a malformed request.
	AuthNone AuthMode = "none"
)

// TenantHeader names the caller's tenant when the API runs with AuthNone.
const TenantHeader = "X-Tenant"

// ParseAuthMode returns the auth mode with this name ("" is AuthBearer).
func ParseAuthMode(name string) (AuthMode, error) {
	switch AuthMode(name) {
	case "", AuthBearer:
		return AuthBearer, nil
	case AuthNone:
		return AuthNone, nil
	}
	return "", fmt.Errorf("unknown auth mode %q (known: %s, %s)", name, AuthBearer, AuthNone)
}

// authFailure is why a request names no tenant: the status and the problem detail.
type authFailure struct {
	status int
	detail string
}

// authenticate returns the caller's tenant, or why there is none.
func (a *API) authenticate(r *http.Request) (string, *authFailure) {
	if a.cfg.Auth == AuthNone {
		return a.namedTenant(r)
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || !a.tenants[token] {
		return "", &authFailure{http.StatusUnauthorized, "missing or unknown bearer token"}
	}
	return token, nil
}

// namedTenant is AuthNone's rule: exactly one TenantHeader naming a known tenant.
func (a *API) namedTenant(r *http.Request) (string, *authFailure) {
	values := r.Header.Values(TenantHeader)
	known := strings.Join(a.cfg.Tenants, ", ")
	switch {
	case len(values) == 0 || strings.TrimSpace(values[0]) == "":
		return "", &authFailure{http.StatusBadRequest, fmt.Sprintf(
			"%s header is required: this API has no authentication and takes the tenant from it (400, not 401: there is no credential to be wrong); known tenants: %s",
			TenantHeader, known)}
	case len(values) > 1:
		return "", &authFailure{http.StatusBadRequest, TenantHeader + " header must be sent once"}
	}
	name := strings.TrimSpace(values[0])
	if !a.tenants[name] {
		return "", &authFailure{http.StatusBadRequest, fmt.Sprintf(
			"%s names an unknown tenant (400, not 401: this API has no authentication); known tenants: %s", TenantHeader, known)}
	}
	return name, nil
}
