package history

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted is what replaces a secret in any output.
const Redacted = "[REDACTED]"

// alwaysSecret lists the headers whose values are always redacted.
var alwaysSecret = []string{"Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"}

// Redactor removes credentials from headers, strings and bodies. It is safe
// for concurrent use. A nil *Redactor is valid and redacts only the
// always-secret headers and the DefaultSignatureHeaders.
//
// Three things are redacted:
//   - the whole value of every header named Authorization, Cookie,
//     Set-Cookie or Proxy-Authorization, plus the extra names given to
//     NewRedactor (names compare case-insensitively);
//   - the signatures in every webhook signature header (those given to
//     NewRedactor and the DefaultSignatureHeaders), by the header's form:
//     what a reader needs is kept ("t=1796283885,v1=[REDACTED]", "v1,[REDACTED]",
//     "sha256=[REDACTED]"), and a value not in its form is redacted whole;
//   - every occurrence of every secret value, anywhere: header values, URLs,
//     bodies, error text, notes.
//
// Secret values are those given to NewRedactor or Learn, and those LearnHeader
// (and so Attempt) learns from the secret headers it sees (the whole value, the
// credentials after an Authorization scheme, each cookie value) and from the
// signature headers (each signature), so that a target echoing a token or a
// signature in a body or an error does not leak it.
//
// Every non-empty value given explicitly is replaced, however short: a one- or
// two-character secret therefore redacts far more than itself, which errs on
// the safe side and is the caller's to avoid. Learned values shorter than
// MinLearned bytes are not learned (their header is still redacted whole).
// Values are replaced longest first, so a secret that contains another is
// removed whole.
type Redactor struct {
	headers map[string]bool // lower-case header names
	canon   map[string]bool // the same names in canonical form
	sigs    signatureIndex  // the signature headers and their forms

	mu       sync.RWMutex
	values   map[string]bool
	learned  learnedSignatures // signatures learned from signature headers
	public   map[string]bool   // values never learned from headers (tenant names)
	replacer *strings.Replacer // nil when there are no values
	gen      atomic.Int64      // counts the changes of values and learned
}

// MinLearned is the shortest header-derived value a Redactor learns.
const MinLearned = 4

// NewRedactor returns a Redactor for the given secret values (tokens,
// passwords, tenant credentials), extra secret header names (for example
// a tenant header or "X-Api-Key") and the signature headers the target's
// webhook signing schemes use, besides DefaultSignatureHeaders. Empty values
// and names are ignored.
func NewRedactor(secretValues, secretHeaders []string, signatures ...SignatureHeader) *Redactor {
	r := &Redactor{headers: make(map[string]bool), canon: make(map[string]bool), values: make(map[string]bool),
		sigs: newSignatureIndex(signatures)}
	for _, name := range append(append([]string(nil), alwaysSecret...), secretHeaders...) {
		if name = strings.TrimSpace(name); name != "" {
			r.headers[strings.ToLower(name)] = true
			r.canon[http.CanonicalHeaderKey(name)] = true
		}
	}
	r.Learn(secretValues...)
	return r
}

// Learn adds secret values to redact from now on. Empty values are ignored.
func (r *Redactor) Learn(values ...string) {
	if r == nil || !r.hasNew(values) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		for _, form := range escapedForms(v) {
			r.values[form] = true
		}
	}
	vals := make([]string, 0, len(r.values))
	for v := range r.values {
		vals = append(vals, v)
	}
	// strings.Replacer prefers earlier arguments at the same position.
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
	}
	r.replacer = strings.NewReplacer(pairs...)
	r.gen.Add(1)
}

// Public names values that are never learned from secret headers, such as tenant names: a
// credential "Bearer alice" is redacted whole, but "alice" in a body stays readable, so that
// evidence can show which tenant received whose answer. Values given to NewRedactor or Learn are
// redacted all the same.
func (r *Redactor) Public(values ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.public == nil {
		r.public = map[string]bool{}
	}
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			r.public[v] = true
		}
	}
}

// isPublic reports a value given to Public.
func (r *Redactor) isPublic(v string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.public[v]
}

// generation changes whenever the Redactor learns a value: a string redacted before may
// redact differently after.
func (r *Redactor) generation() int64 {
	if r == nil {
		return 0
	}
	return r.gen.Load()
}

// escapedForms returns v and the forms it takes once escaped: inside a JSON string (a
// target echoing it in a JSON body), a Go-quoted string (an error message quoting a body
// with %q), and a Go-quoted JSON string (quoting a JSON body), so that an echoed secret is
// found also then. Empty for an empty v.
func escapedForms(v string) []string {
	if v == "" {
		return nil
	}
	inner := func(quoted string) string { return quoted[1 : len(quoted)-1] }
	j := v
	if b, err := json.Marshal(v); err == nil {
		j = inner(string(b))
	}
	var forms []string
	for _, f := range []string{v, j, inner(strconv.Quote(v)), inner(strconv.Quote(j))} {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms
}

// learnSignatures learns signature values (those shorter than MinLearned are not).
func (r *Redactor) learnSignatures(sigs []string) {
	var forms, short []string
	for _, v := range sigs {
		if v = strings.TrimSpace(v); len(v) >= MinLearned {
			forms = append(forms, escapedForms(v)...)
		}
	}
	r.mu.RLock()
	forms = slices.DeleteFunc(forms, func(f string) bool { return r.learned.has(f) || r.values[f] })
	r.mu.RUnlock()
	if len(forms) == 0 {
		return
	}
	r.mu.Lock()
	added := false
	for _, f := range forms {
		if len(f) < sigHead {
			short = append(short, f)
		} else if r.learned.add(f) {
			added = true
		}
	}
	r.mu.Unlock()
	if added {
		r.gen.Add(1)
	}
	r.Learn(short...)
}

// hasNew reports whether values holds a non-empty value not yet known.
func (r *Redactor) hasNew(values []string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range values {
		if v != "" && !r.values[v] {
			return true
		}
	}
	return false
}

// LearnHeader learns the secrets carried by the values of h's secret headers
// and the signatures in its signature headers. A harness that signs a
// delivery learns its signature so before sending it, so that what the
// receiver prints or answers is redacted from the start.
func (r *Redactor) LearnHeader(h http.Header) {
	if r == nil {
		return
	}
	var learned, sigs []string
	keep := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= MinLearned && !r.isPublic(v) {
			learned = append(learned, v)
		}
	}
	for name, vals := range h {
		if !r.IsSecretHeader(name) {
			if forms := r.sigs.forms(name); forms != nil {
				for _, v := range vals {
					_, s := RedactSignature(v, forms...)
					sigs = append(sigs, s...)
				}
			}
			continue
		}
		lower := strings.ToLower(name)
		for _, v := range vals {
			keep(v)
			switch lower {
			case "authorization", "proxy-authorization":
				if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
					keep(cred)
				}
			case "cookie", "set-cookie":
				for _, pair := range strings.Split(v, ";") {
					if _, val, ok := strings.Cut(pair, "="); ok {
						keep(strings.Trim(strings.TrimSpace(val), `"`))
					}
					if lower == "set-cookie" {
						break // the rest are attributes
					}
				}
			}
		}
	}
	r.Learn(learned...)
	r.learnSignatures(sigs)
}

// IsSecretHeader reports whether the header name's values are always
// redacted whole.
func (r *Redactor) IsSecretHeader(name string) bool {
	if r == nil {
		for _, s := range alwaysSecret {
			if strings.EqualFold(s, name) {
				return true
			}
		}
		return false
	}
	if isCanonicalKey(name) { // the usual case, answered without allocating
		return r.canon[name]
	}
	return r.headers[strings.ToLower(name)]
}

// isCanonicalKey reports whether name is a header name in canonical form made of letters,
// digits and hyphens only (as http.CanonicalHeaderKey writes them).
func isCanonicalKey(name string) bool {
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			if !upper {
				return false
			}
		case 'a' <= c && c <= 'z':
			if upper {
				return false
			}
		case '0' <= c && c <= '9':
		case c == '-':
		default:
			return false
		}
		upper = c == '-'
	}
	return true
}

// String returns s with every secret value replaced by Redacted.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.mu.RLock()
	s = r.learned.replace(s)
	rep := r.replacer
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// Bytes returns a copy of b with every secret value replaced by Redacted.
// A nil b stays nil.
func (r *Redactor) Bytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return []byte(r.String(string(b)))
}

// Header returns a copy of h in which secret headers have every value
// replaced by Redacted, signature headers have their signatures replaced (see
// RedactSignature) and all other values have secret values replaced. A nil h
// stays nil.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vals := range h {
		red := make([]string, len(vals))
		secret := r.IsSecretHeader(name)
		var forms []SignatureHeader
		if !secret {
			forms = r.SignatureForms(name)
		}
		for i, v := range vals {
			switch {
			case secret:
				red[i] = Redacted
			case forms != nil:
				red[i], _ = RedactSignature(v, forms...)
			default:
				red[i] = r.String(v)
			}
		}
		out[name] = red
	}
	return out
}

// SignatureForms returns the forms of the signature header name, the
// declared ones first; nil when name is no signature header.
func (r *Redactor) SignatureForms(name string) []SignatureHeader {
	if r == nil {
		return defaultSignatures.forms(name)
	}
	return r.sigs.forms(name)
}

// URL returns raw with any userinfo password replaced and every secret value
// replaced by Redacted. A raw that does not parse is redacted as a string.
func (r *Redactor) URL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			raw = u.Redacted()
		}
	}
	return r.String(raw)
}

// Attempt learns the secrets in a's headers (see LearnHeader), then returns
// a copy of a with headers, bodies, URL, error, note and labels redacted. The
// copy shares no slice or map with a.
func (r *Redactor) Attempt(a Attempt) Attempt {
	r.LearnHeader(a.ReqHeader)
	r.LearnHeader(a.RespHeader)
	a.Op, a.Key = r.String(a.Op), r.String(a.Key)
	a.Tenant, a.Instance = r.String(a.Tenant), r.String(a.Instance)
	a.URL = r.URL(a.URL)
	a.ReqHeader, a.RespHeader = r.Header(a.ReqHeader), r.Header(a.RespHeader)
	a.ReqBody, a.RespBody = r.Bytes(a.ReqBody), r.Bytes(a.RespBody)
	a.Err, a.Note = r.String(a.Err), r.String(a.Note)
	a.Reference = r.String(a.Reference)
	if c := a.Current; c != nil {
		a.Current = &Read{URL: r.URL(c.URL), At: c.At, Status: c.Status, Body: r.Bytes(c.Body), Err: r.String(c.Err)}
	}
	return a
}
