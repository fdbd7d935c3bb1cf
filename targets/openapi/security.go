package openapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// tenantNames are the two callers a generated target declares (two enable the tenancy checks).
var tenantNames = []string{"tenant-a", "tenant-b"}

// credential is one header that a tenant sends, with %s standing for the tenant's environment
// variable placeholder.
type credential struct {
	header string
	format string // e.g. "Bearer %s"
	env    string // the variable's name after the tenant prefix, e.g. BEARER_AUTH
}

// credentials maps the security schemes of the first requirement that applies (the first
// selected operation's own, else the document's) to tenant headers.
func credentials(doc *openapi3.T, ops []*openapi3.Operation) ([]credential, []string) {
	var reqs openapi3.SecurityRequirements
	for _, op := range ops {
		if op.Security != nil {
			reqs = *op.Security
			break
		}
	}
	if reqs == nil {
		reqs = doc.Security
	}
	var names []string
	for _, r := range reqs {
		if len(r) > 0 {
			names = slices.Sorted(maps.Keys(r))
			break
		}
	}
	var schemes openapi3.SecuritySchemes
	if doc.Components != nil {
		schemes = doc.Components.SecuritySchemes
	}
	if len(names) == 0 && len(schemes) > 0 {
		names = slices.Sorted(maps.Keys(schemes))[:1]
	}
	var out []credential
	var notes []string
	for _, name := range names {
		ref := schemes[name]
		if ref == nil || ref.Value == nil {
			notes = append(notes, fmt.Sprintf("Security scheme %q is not defined", name))
			continue
		}
		c, note := credentialOf(name, ref.Value)
		if note != "" {
			notes = append(notes, note)
		}
		if c.header != "" {
			out = append(out, c)
		}
	}
	return out, notes
}

// credentialOf maps one security scheme to a header.
func credentialOf(name string, s *openapi3.SecurityScheme) (credential, string) {
	env := envName(name)
	switch strings.ToLower(s.Type) {
	case "http":
		switch strings.ToLower(s.Scheme) {
		case "bearer":
			return credential{"Authorization", "Bearer %s", env}, ""
		case "basic":
			return credential{"Authorization", "Basic %s", env}, name + ": set the base64 of user:password"
		}
		return credential{"Authorization", s.Scheme + " %s", env}, ""
	case "apikey":
		switch strings.ToLower(s.In) {
		case "header":
			return credential{s.Name, "%s", env}, ""
		case "cookie":
			return credential{"Cookie", s.Name + "=%s", env}, ""
		}
		return credential{}, fmt.Sprintf("%s: an API key in the %s is not supported; add it to the operations by hand", name, s.In)
	case "oauth2", "openidconnect":
		return credential{"Authorization", "Bearer %s", env}, name + ": set an access token"
	}
	return credential{}, fmt.Sprintf("%s: security scheme type %q is not mapped to headers", name, s.Type)
}

// value is the header value for one tenant: the format with a ${TENANT_X_NAME:-changeme}
// placeholder, so that secrets stay in the environment and the file validates without them.
func (c credential) value(tenant string) string {
	return fmt.Sprintf(c.format, "${"+c.variable(tenant)+":-changeme}")
}

// variable is the environment variable that holds a tenant's credential.
func (c credential) variable(tenant string) string {
	return envName(tenant) + "_" + c.env
}

// envName turns a name into an environment variable name: bearerAuth -> BEARER_AUTH.
func envName(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			b.WriteRune('_')
			b.WriteRune(r)
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(unicode.ToUpper(r))
		default:
			if prev != '_' && b.Len() > 0 {
				b.WriteRune('_')
			}
			r = '_'
		}
		prev = r
	}
	out := strings.Trim(b.String(), "_")
	if out == "" || unicode.IsDigit(rune(out[0])) {
		out = "X_" + out
	}
	return out
}
