package history

import (
	"net/http"
	"slices"
	"strings"
)

// SignatureForm is how a webhook signature header lays out its value: the Redactor keeps what
// a reader needs to judge a delivery (the timestamp, the scheme and version names, the prefix)
// and replaces every signature with Redacted, so that no artefact holds a delivery that could
// be replayed.
type SignatureForm string

// The forms of signature headers.
const (
	// FormStripe is Stripe's "t=<unix>,v1=<sig>[,v1=<sig>][,v0=<sig>]": t= and the scheme names
	// are kept, every scheme's value is redacted ("t=1796283885,v1=[REDACTED]").
	FormStripe SignatureForm = "stripe"
	// FormStandard is Standard Webhooks' space-separated "v1,<base64>" signatures: each version
	// is kept ("v1,[REDACTED]"); the timestamp travels in webhook-timestamp, which stays.
	FormStandard SignatureForm = "standard-webhooks"
	// FormPrefixed is SignatureHeader.Prefix followed by the signature (GitHub's "sha256=", a
	// custom scheme's declared prefix): the prefix is kept ("sha256=[REDACTED]"). With no
	// prefix the whole value is the signature.
	FormPrefixed SignatureForm = "prefixed"
)

// SignatureHeader names a header that carries webhook signatures, and its form.
type SignatureHeader struct {
	// Name is the header's name (compared case-insensitively).
	Name string
	// Form is how its value is laid out.
	Form SignatureForm
	// Prefix starts the value in FormPrefixed.
	Prefix string
}

// DefaultSignatureHeaders are the signature headers every Redactor knows, whatever the target
// declares: Stripe's, Standard Webhooks', GitHub's two and the usual custom one. A value not in
// its header's form is redacted whole.
var DefaultSignatureHeaders = []SignatureHeader{
	{Name: "Stripe-Signature", Form: FormStripe},
	{Name: "Webhook-Signature", Form: FormStandard},
	{Name: "X-Hub-Signature", Form: FormPrefixed, Prefix: "sha1="},
	{Name: "X-Hub-Signature-256", Form: FormPrefixed, Prefix: "sha256="},
	{Name: "X-Signature", Form: FormPrefixed},
}

// signatureIndex finds the forms of a signature header by its name.
type signatureIndex struct {
	lower map[string][]SignatureHeader // by lower-case name
	canon map[string][]SignatureHeader // the same, by canonical name
}

// defaultSignatures is the index of a nil Redactor.
var defaultSignatures = newSignatureIndex(nil)

// newSignatureIndex indexes the declared signature headers, then the default ones: a header
// declared in several forms is tried in each, the declared first.
func newSignatureIndex(declared []SignatureHeader) signatureIndex {
	idx := signatureIndex{lower: map[string][]SignatureHeader{}, canon: map[string][]SignatureHeader{}}
	for _, sh := range append(slices.Clone(declared), DefaultSignatureHeaders...) {
		if sh.Name = strings.TrimSpace(sh.Name); sh.Name == "" {
			continue
		}
		lower := strings.ToLower(sh.Name)
		if !slices.Contains(idx.lower[lower], sh) {
			idx.lower[lower] = append(idx.lower[lower], sh)
			idx.canon[http.CanonicalHeaderKey(sh.Name)] = idx.lower[lower]
		}
	}
	return idx
}

// forms returns the forms of the signature header name (nil: it is none).
func (idx signatureIndex) forms(name string) []SignatureHeader {
	if isCanonicalKey(name) { // the usual case, answered without allocating
		return idx.canon[name]
	}
	return idx.lower[strings.ToLower(name)]
}

// RedactSignature returns the value of a signature header with every signature replaced by
// Redacted, as laid out by the first of forms it fits, and the signatures it replaced. A value
// that fits none of them (or a header given no form) is redacted whole: the whole value is then
// the signature.
func RedactSignature(value string, forms ...SignatureHeader) (string, []string) {
	v := strings.TrimSpace(value)
	if v == "" {
		return value, nil
	}
	for _, f := range forms {
		var (
			kept string
			sigs []string
			ok   bool
		)
		switch f.Form {
		case FormStripe:
			kept, sigs, ok = stripeSignature(v)
		case FormStandard:
			kept, sigs, ok = standardSignature(v)
		case FormPrefixed:
			kept, sigs, ok = prefixedSignature(v, f.Prefix)
		}
		if ok {
			return kept, sigs
		}
	}
	return Redacted, []string{v}
}

// stripeSignature redacts "t=<unix>,<scheme>=<sig>,...": t= holds digits and comes once, every
// other part is a scheme name and a non-empty value, and there is at least one.
func stripeSignature(v string) (string, []string, bool) {
	var (
		kept, sigs []string
		haveT      bool
	)
	for _, part := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case k == "t" && !haveT && isDigits(val):
			haveT = true
			kept = append(kept, "t="+val)
		case k != "t" && isSchemeName(k) && val != "":
			kept = append(kept, k+"="+Redacted)
			sigs = append(sigs, val)
		default:
			return "", nil, false
		}
	}
	return strings.Join(kept, ","), sigs, haveT && len(sigs) > 0
}

// standardSignature redacts space-separated "v<n>,<sig>" signatures.
func standardSignature(v string) (string, []string, bool) {
	var kept, sigs []string
	for _, f := range strings.Fields(v) {
		ver, sig, _ := strings.Cut(f, ",")
		if len(ver) < 2 || ver[0] != 'v' || !isSchemeName(ver) || sig == "" {
			return "", nil, false
		}
		kept = append(kept, ver+","+Redacted)
		sigs = append(sigs, sig)
	}
	return strings.Join(kept, " "), sigs, len(sigs) > 0
}

// prefixedSignature redacts prefix followed by a signature.
func prefixedSignature(v, prefix string) (string, []string, bool) {
	sig, ok := strings.CutPrefix(v, prefix)
	if !ok || strings.TrimSpace(sig) == "" {
		return "", nil, false
	}
	return prefix + Redacted, []string{sig}, true
}

// isDigits reports a non-empty string of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isSchemeName reports a non-empty name of lower-case letters and digits (v1, v0, v1a).
func isSchemeName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// sigHead is how many leading bytes find a learned signature in text; a shorter signature is
// learned as an ordinary secret value. Signatures are at least 32 bytes (a hex or base64
// HMAC), and 24 bytes tell apart also values redacted whole that start alike
// ("t=1796283885,v1=..." in a form it does not fit).
const sigHead = 24

// learnedSignatures are the signature values a Redactor learned, found in text by their first
// sigHead bytes. Learning one costs the same however many are known (a delivery load signs
// thousands of deliveries), where a strings.Replacer would be rebuilt over all of them each time.
// The Redactor's lock guards it.
type learnedSignatures struct {
	heads map[string][]string // the first sigHead bytes -> the values that start so, longest first
}

// has reports a value already learned.
func (ls *learnedSignatures) has(v string) bool {
	return len(v) >= sigHead && slices.Contains(ls.heads[v[:sigHead]], v)
}

// add learns v (at least sigHead bytes long) and reports whether it was new.
func (ls *learnedSignatures) add(v string) bool {
	if ls.has(v) {
		return false
	}
	if ls.heads == nil {
		ls.heads = map[string][]string{}
	}
	head := v[:sigHead]
	vals := append(ls.heads[head], v)
	slices.SortStableFunc(vals, func(a, b string) int { return len(b) - len(a) })
	ls.heads[head] = vals
	return true
}

// replace returns s with every learned value replaced by Redacted, the longest one where
// several start at the same byte.
func (ls *learnedSignatures) replace(s string) string {
	if len(ls.heads) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+sigHead <= len(s); {
		n := 0
		for _, v := range ls.heads[s[i:i+sigHead]] {
			if strings.HasPrefix(s[i:], v) {
				n = len(v)
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
