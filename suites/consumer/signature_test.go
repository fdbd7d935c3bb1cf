package consumer

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

func TestSignatureProperty(t *testing.T) {
	t.Parallel()
	correct := consumerHarness(t, consumer.MutantNone, webhookTarget)
	expectCaught(t, "signature", correct, consumerHarness(t, consumer.MutantNoSignatureCheck, webhookTarget), reports.KindForgedEventAccepted)
	// Ignoring the timestamp accepts a stale one and a future one; bounding it in the past only
	// accepts the future one alone.
	for m, fails := range map[consumer.Mutant][]string{
		consumer.MutantStaleTimestampAccepted:  {"timestamp outside the tolerance", "in the future"},
		consumer.MutantFutureTimestampAccepted: {"in the future"},
	} {
		h := consumerHarness(t, m, webhookTarget)
		expectCaught(t, "signature", correct, h, reports.KindForgedEventAccepted)
		for text, v := range specVerdicts(t, h, "signature") {
			want := reports.Pass
			if slices.ContainsFunc(fails, func(f string) bool { return strings.Contains(text, f) }) {
				want = reports.Fail
			}
			if v != want {
				t.Errorf("%s: %q: %s, want %s", m, text, v, want)
			}
		}
	}
}

// GitHub's scheme signs no timestamp: the stale- and future-timestamp specs are skipped with the
// reason, the others run.
func TestSignatureGitHub(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(webhookTarget, "scheme: standard-webhooks", "scheme: github", 1)
	h := consumerRig{doc: doc, signing: webhook.Config{Scheme: webhook.SchemeGitHub, Secret: testSecret}}.open(t)
	got := specVerdicts(t, h, "signature")
	if len(got) != 6 {
		t.Errorf("%d specs, want 6: %v", len(got), got)
	}
	for text, v := range got {
		want := reports.Pass
		if strings.Contains(text, "timestamp outside the tolerance") || strings.Contains(text, "in the future") {
			want = reports.Skipped
		}
		if v != want {
			t.Errorf("%q: %s, want %s", text, v, want)
		}
	}
}

// A consumer with signing none has no signature to check: the property is skipped.
func TestSignatureNone(t *testing.T) {
	t.Parallel()
	doc := dropLine(t, webhookTarget, "    signing: ")
	h := consumerRig{doc: doc, signing: webhook.Config{Scheme: webhook.SchemeNone}}.open(t)
	if v, why := runProperty(t, h, "signature"); v != reports.Skipped || !strings.Contains(why, "signing none") {
		t.Errorf("signing none: %s: %s; want skipped", v, why)
	}
}
