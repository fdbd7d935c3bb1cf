package history_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets/history"
)

// Signatures of the tests: what a signing scheme writes (hex, base64).
var (
	hexSig  = strings.Repeat("111f54ee", 8) // 64 hex digits, as Stripe's and GitHub's
	hexSig2 = strings.Repeat("2a2b3c4d", 8)
	b64Sig  = "K8lm3QhZ+Jv0c/Tz1vB0nOQ5dDk2xLs9mYp2u2pEw0M=" // 44 characters, as Standard Webhooks'
	b64Sig2 = "Qv1nX0m7s9/4Zg+Kk2q8V3pR6tYw1bHc5dNe7fJi0aA="
)

// The forms of the tests' signature headers.
var (
	stripe   = history.SignatureHeader{Name: "Stripe-Signature", Form: history.FormStripe}
	standard = history.SignatureHeader{Name: "webhook-signature", Form: history.FormStandard}
	github   = history.SignatureHeader{Name: "X-Hub-Signature-256", Form: history.FormPrefixed, Prefix: "sha256="}
	custom   = history.SignatureHeader{Name: "X-Acme-Sig", Form: history.FormPrefixed, Prefix: "hmac-sha256:"}
	bare     = history.SignatureHeader{Name: "X-Signature", Form: history.FormPrefixed}
)

func TestRedactSignature(t *testing.T) {
	const R = history.Redacted
	tests := []struct {
		name  string
		form  history.SignatureHeader
		value string
		want  string
		sigs  []string
	}{
		{"stripe", stripe, "t=1796283885,v1=" + hexSig, "t=1796283885,v1=" + R, []string{hexSig}},
		{"stripe, a secret rotation and v0", stripe, "t=1796283885,v1=" + hexSig + ",v1=" + hexSig2 + ",v0=" + hexSig,
			"t=1796283885,v1=" + R + ",v1=" + R + ",v0=" + R, []string{hexSig, hexSig2, hexSig}},
		{"stripe, spaces around the parts", stripe, " t=17, v1=" + hexSig + " ", "t=17,v1=" + R, []string{hexSig}},
		{"stripe, t= after the signature", stripe, "v1=" + hexSig + ",t=17", "v1=" + R + ",t=17", []string{hexSig}},
		{"stripe without t=", stripe, "v1=" + hexSig, R, []string{"v1=" + hexSig}},
		{"stripe, t= not a timestamp", stripe, "t=soon,v1=" + hexSig, R, []string{"t=soon,v1=" + hexSig}},
		{"stripe, t= twice", stripe, "t=1,t=2,v1=" + hexSig, R, []string{"t=1,t=2,v1=" + hexSig}},
		{"stripe, t= alone", stripe, "t=1796283885", R, []string{"t=1796283885"}},
		{"stripe, an empty signature", stripe, "t=1,v1=", R, []string{"t=1,v1="}},
		{"stripe, not in its form", stripe, hexSig, R, []string{hexSig}},
		{"standard", standard, "v1," + b64Sig, "v1," + R, []string{b64Sig}},
		{"standard, a secret rotation", standard, "v1," + b64Sig + " v1," + b64Sig2 + " v1a," + b64Sig,
			"v1," + R + " v1," + R + " v1a," + R, []string{b64Sig, b64Sig2, b64Sig}},
		{"standard, not in its form", standard, b64Sig, R, []string{b64Sig}},
		{"standard, stripe's form", standard, "v1=" + b64Sig, R, []string{"v1=" + b64Sig}},
		{"standard, one part not in its form", standard, "v1," + b64Sig + " " + b64Sig2, R, []string{"v1," + b64Sig + " " + b64Sig2}},
		{"github", github, "sha256=" + hexSig, "sha256=" + R, []string{hexSig}},
		{"github, another prefix", github, "sha1=" + hexSig[:40], R, []string{"sha1=" + hexSig[:40]}},
		{"github, a prefix alone", github, "sha256=", R, []string{"sha256="}},
		{"custom prefix", custom, "hmac-sha256:" + b64Sig, "hmac-sha256:" + R, []string{b64Sig}},
		{"custom, not its prefix", custom, "sha256=" + b64Sig, R, []string{"sha256=" + b64Sig}},
		{"no prefix: the whole value", bare, "sha256=" + hexSig, R, []string{"sha256=" + hexSig}},
		{"empty", stripe, "", "", nil},
	}
	for _, tt := range tests {
		got, sigs := history.RedactSignature(tt.value, tt.form)
		if got != tt.want || !slices.Equal(sigs, tt.sigs) {
			t.Errorf("%s: RedactSignature(%q) = %q, %q; want %q, %q", tt.name, tt.value, got, sigs, tt.want, tt.sigs)
		}
	}
}

// A header declared in several forms is redacted by the first its value fits; with none it is
// redacted whole.
func TestRedactSignatureForms(t *testing.T) {
	const R = history.Redacted
	hub := history.SignatureHeader{Name: "X-Hub-Signature", Form: history.FormPrefixed, Prefix: "sha1="}
	hub256 := history.SignatureHeader{Name: "X-Hub-Signature", Form: history.FormPrefixed, Prefix: "sha256="}
	for _, tt := range []struct{ value, want string }{
		{"sha1=" + hexSig[:40], "sha1=" + R},
		{"sha256=" + hexSig, "sha256=" + R},
		{"md5=" + hexSig[:32], R},
	} {
		if got, _ := history.RedactSignature(tt.value, hub, hub256); got != tt.want {
			t.Errorf("RedactSignature(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
	if got, sigs := history.RedactSignature("t=1,v1=" + hexSig); got != R || len(sigs) != 1 {
		t.Errorf("no form: %q, %q; want it redacted whole", got, sigs)
	}
}

func TestRedactorSignatureHeaders(t *testing.T) {
	const R = history.Redacted
	r := history.NewRedactor(nil, []string{"X-Tenant-Token"}, custom, standard)
	h := http.Header{
		"Stripe-Signature":    {"t=1796283885,v1=" + hexSig + ",v1=" + hexSig2},
		"webhook-signature":   {"v1," + b64Sig}, // not canonical: compared case-insensitively
		"Webhook-Timestamp":   {"1796283885"},
		"Webhook-Id":          {"msg_1"},
		"X-Hub-Signature":     {"sha1=" + hexSig[:40]},
		"X-Hub-Signature-256": {"sha256=" + hexSig},
		"X-Signature":         {hexSig2},
		"X-Acme-Sig":          {"hmac-sha256:" + b64Sig2, "garbled"},
		"X-Tenant-Token":      {"t=1,v1=" + hexSig}, // a secret header stays redacted whole
		"Content-Type":        {"application/json"},
	}
	want := http.Header{
		"Stripe-Signature":    {"t=1796283885,v1=" + R + ",v1=" + R},
		"webhook-signature":   {"v1," + R},
		"Webhook-Timestamp":   {"1796283885"},
		"Webhook-Id":          {"msg_1"},
		"X-Hub-Signature":     {"sha1=" + R},
		"X-Hub-Signature-256": {"sha256=" + R},
		"X-Signature":         {R},
		"X-Acme-Sig":          {"hmac-sha256:" + R, R},
		"X-Tenant-Token":      {R},
		"Content-Type":        {"application/json"},
	}
	got := r.Header(h)
	for name, vals := range want {
		if !slices.Equal(got[name], vals) {
			t.Errorf("%s = %q, want %q", name, got[name], vals)
		}
	}
	var nilR *history.Redactor
	if got := nilR.Header(h).Get("Stripe-Signature"); got != "t=1796283885,v1="+R+",v1="+R {
		t.Errorf("nil Redactor: Stripe-Signature = %q, want its signatures redacted", got)
	}
	if got := history.NewRedactor(nil, nil).Header(h).Get("X-Acme-Sig"); got != "hmac-sha256:"+b64Sig2 {
		t.Errorf("an undeclared custom header = %q, want it as it was", got)
	}
}

// The signatures of a recorded delivery are redacted wherever they appear later: in its
// response, error and note, and in later attempts; the timestamp stays.
func TestRedactorLearnsSignatures(t *testing.T) {
	h := history.New(history.NewRedactor(nil, nil, standard))
	echo := fmt.Sprintf(`{"got": "t=1796283885,v1=%s", "also": "%s"}`, hexSig, b64Sig)
	a := h.Add(history.Attempt{
		ReqHeader:  http.Header{"Stripe-Signature": {"t=1796283885,v1=" + hexSig}, "Webhook-Signature": {"v1," + b64Sig}},
		RespHeader: http.Header{"X-Echo": {"v1," + b64Sig}},
		RespBody:   []byte(echo),
		Err:        "signature " + hexSig + " rejected",
		Note:       fmt.Sprintf("%q", b64Sig),
	})
	for field, got := range map[string]string{"RespBody": string(a.RespBody), "Err": a.Err, "Note": a.Note,
		"X-Echo": a.RespHeader.Get("X-Echo")} {
		if strings.Contains(got, hexSig) || strings.Contains(got, b64Sig) || !strings.Contains(got, history.Redacted) {
			t.Errorf("%s = %q, want its signatures redacted", field, got)
		}
	}
	if !strings.Contains(string(a.RespBody), "t=1796283885,v1=[REDACTED]") {
		t.Errorf("RespBody = %q, want the timestamp kept", a.RespBody)
	}
	later := h.Add(history.Attempt{Note: "again: " + hexSig + hexSig2})
	if got, want := later.Note, "again: [REDACTED]"+hexSig2; got != want {
		t.Errorf("a later attempt's Note = %q, want %q", got, want)
	}
}

// A harness learns a signature before it sends it: what the receiver prints is redacted then.
func TestRedactorLearnHeader(t *testing.T) {
	r := history.NewRedactor(nil, nil, custom)
	r.LearnHeader(http.Header{"X-Acme-Sig": {"hmac-sha256:" + b64Sig}, "X-Signature": {"abc", "sig-0123"},
		"Content-Type": {hexSig2}})
	for in, want := range map[string]string{
		"consumer | got " + b64Sig:           "consumer | got [REDACTED]",
		"a short signature: sig-0123":        "a short signature: [REDACTED]",
		"shorter than MinLearned: abc":       "shorter than MinLearned: abc",
		"not a signature header: " + hexSig2: "not a signature header: " + hexSig2,
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var nilR *history.Redactor
	nilR.LearnHeader(http.Header{"Stripe-Signature": {"t=1,v1=" + hexSig}}) // no panic
}

// Learned signatures are replaced whole, the longest where two start at one byte, next to each
// other and at either end.
func TestRedactorLearnedSignatureMatches(t *testing.T) {
	r := history.NewRedactor(nil, nil)
	r.LearnHeader(http.Header{"X-Signature": {hexSig}, "X-Hub-Signature-256": {"sha256=" + hexSig + "ff"}})
	const R = history.Redacted
	for _, tt := range []struct{ in, want string }{
		{hexSig, R},
		{hexSig + "ff", R},
		{hexSig + "f", R + "f"},
		{hexSig + hexSig, R + R},
		{"x" + hexSig[:len(hexSig)-1], "x" + hexSig[:len(hexSig)-1]},
		{"", ""},
	} {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A compact record learns the signatures of its delivery too.
func TestCompactLearnsSignatures(t *testing.T) {
	h := history.New(history.NewRedactor(nil, nil))
	defer h.Compact(history.CompactOptions{})()
	a := okAttempt("evt_1", 200, `{"ok": true}`)
	a.ReqHeader.Set("Stripe-Signature", "t=1796283885,v1="+hexSig)
	if got := h.Add(a); !got.Compacted {
		t.Fatalf("the delivery was kept whole: %+v", got)
	}
	if got := h.Add(history.Attempt{Err: "seen " + hexSig}).Err; got != "seen [REDACTED]" {
		t.Errorf("Err = %q, want the compact record's signature redacted", got)
	}
}

// Learning a signature costs the same however many are known: a delivery load signs thousands.
func BenchmarkRedactorLearnSignature(b *testing.B) {
	r := history.NewRedactor(nil, nil)
	body := strings.Repeat(`{"id": "evt_0001", "object": "obj_0001", "version": 1} `, 8)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sig := sha256.Sum256(fmt.Appendf(nil, "delivery %d", i))
		r.LearnHeader(http.Header{"Stripe-Signature": {fmt.Sprintf("t=1796283885,v1=%x", sig)}})
		r.String(body)
	}
}
