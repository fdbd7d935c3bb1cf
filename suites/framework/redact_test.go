package framework

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// signedConsumer is a webhook consumer of signedTarget: %NAME% names it, %SIGNING% is its signing.
const signedConsumer = `  - name: %NAME%
    path: /%NAME%
    event: {body: '{"id": "{{.EventID}}"}'}
    signing: %SIGNING%
    effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
`

// signedTarget returns a target file whose consumers sign as signings say, by name.
func signedTarget(t *testing.T, signings map[string]string) *targets.Target {
	t.Helper()
	doc := "name: signed\ninstances: [\"http://127.0.0.1:1\"]\nconsumers:\n"
	for _, name := range slices.Sorted(maps.Keys(signings)) {
		doc += strings.NewReplacer("%NAME%", name, "%SIGNING%", signings[name]).Replace(signedConsumer)
	}
	tg, err := targets.Parse("signed.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// The redactor of a run knows the signature header of every consumer's scheme: a custom hmac
// header keeps its declared prefix.
func TestRedactorOfTargetSigning(t *testing.T) {
	tg := signedTarget(t, map[string]string{
		"stripe":   `{scheme: stripe, secret: whsec_stripe}`,
		"standard": `{scheme: standard-webhooks, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
		"github":   `{scheme: github, secret: gh-secret}`,
		"acme":     `{scheme: hmac, secret: acme-secret, hmac: {header: X-Acme-Sig, prefix: "v2:", encoding: base64}}`,
		"none":     `{scheme: none}`,
	})
	var names []string
	for _, sh := range signatureHeaders(tg) {
		names = append(names, sh.Name+" "+string(sh.Form)+" "+sh.Prefix)
	}
	slices.Sort(names)
	want := []string{"Stripe-Signature stripe ", "X-Acme-Sig prefixed v2:", "X-Hub-Signature-256 prefixed sha256=",
		"webhook-signature standard-webhooks "}
	if !slices.Equal(names, want) {
		t.Errorf("signatureHeaders = %q, want %q", names, want)
	}
	sig := strings.Repeat("Zm9vYmFy", 5) + "YQ=="
	got := newRedactor(tg).Header(http.Header{"X-Acme-Sig": {"v2:" + sig}})
	if v := got.Get("X-Acme-Sig"); v != "v2:"+history.Redacted {
		t.Errorf("X-Acme-Sig = %q, want v2:%s", v, history.Redacted)
	}
}

// What the target's processes print is redacted line by line, signatures learned included.
func TestRedactingWriter(t *testing.T) {
	r := history.NewRedactor([]string{"tok-secret"}, nil)
	sig := strings.Repeat("0af1", 16)
	r.LearnHeader(http.Header{"Stripe-Signature": {"t=1796283885,v1=" + sig}})
	var b strings.Builder
	w := &redactingWriter{w: &b, r: r}
	for _, line := range []string{"consumer | verified v1=" + sig + "\n", "consumer | token tok-secret\n", "consumer | ok\n"} {
		if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", line, n, err, len(line))
		}
	}
	if got, want := b.String(), "consumer | verified v1=[REDACTED]\nconsumer | token [REDACTED]\nconsumer | ok\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// A spec's result is redacted before anyone renders it, and the original is left alone.
func TestRedactResult(t *testing.T) {
	r := history.NewRedactor([]string{"tok-secret"}, nil)
	res := check.Result{
		Anomalies: []reports.Anomaly{{Kind: reports.KindDuplicateRecord, Key: "k", Message: "echoed tok-secret"}},
		Unknown:   []string{"observer: 401 for tok-secret"},
		Observed:  []string{"2 of 2 with tok-secret"},
		Skip:      "tok-secret",
	}
	got := redactResult(r, res)
	for _, s := range append(append([]string{got.Anomalies[0].Message, got.Skip}, got.Unknown...), got.Observed...) {
		if strings.Contains(s, "tok-secret") || !strings.Contains(s, history.Redacted) {
			t.Errorf("%q: want the secret redacted", s)
		}
	}
	if res.Anomalies[0].Message != "echoed tok-secret" {
		t.Error("redactResult changed its argument")
	}
	if got := redactResult(r, check.Result{}); got.Unknown != nil || got.Anomalies != nil {
		t.Errorf("an empty result became %+v", got)
	}
}
