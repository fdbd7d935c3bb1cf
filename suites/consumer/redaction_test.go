package consumer

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/ginkgorun"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// stripeTestSecret signs the Stripe deliveries of the in-process reference consumer.
const stripeTestSecret = "whsec_stripe_test_4eC39HqLyjWDarjtT1zdp7dc"

// validSignatureForms are a valid Stripe v1 and a valid Standard Webhooks v1 signature.
var validSignatureForms = regexp.MustCompile(`v1=[0-9a-f]{64}|v1,[A-Za-z0-9+/]{43}=`)

// TestNoReplayableSignatureInArtifacts runs the webhook consumer side in both shapes (sink,
// no sink) under both timestamped schemes (Stripe, Standard Webhooks) against mutants whose
// failures put deliveries in the evidence, writes every artefact a run writes, and finds no
// signature of any delivery in any of them, while the signed timestamps stay readable.
func TestNoReplayableSignatureInArtifacts(t *testing.T) {
	t.Parallel()
	signings := []webhook.Config{
		{Scheme: webhook.SchemeStripe, Secret: stripeTestSecret},
		{Scheme: webhook.SchemeStandard, Secret: testSecret},
	}
	runs := []struct {
		mutant consumer.Mutant
		filter string
		odd    bool // the evidence shows deliveries signed outside the tolerance
	}{
		{consumer.MutantNoDedupe, "property:redelivery || property:concurrent-redelivery || property:delivery-load", false},
		{consumer.MutantNoSignatureCheck, "property:signature", true},
	}
	for _, signing := range signings {
		for _, noSink := range []bool{false, true} {
			for _, run := range runs {
				shape := map[bool]string{false: "sink", true: "no-sink"}[noSink]
				t.Run(string(signing.Scheme)+"/"+shape+"/"+string(run.mutant), func(t *testing.T) {
					t.Parallel()
					tap := newDeliveryTap(t, signing)
					doc := strings.Replace(webhookTarget, "scheme: standard-webhooks, secret: \""+testSecret+"\"",
						"scheme: "+string(signing.Scheme)+", secret: \""+signing.Secret+"\"", 1)
					dir := t.TempDir()
					log := createFile(t, filepath.Join(dir, "harness.log"))
					rig := consumerRig{mutant: run.mutant, doc: doc, signing: signing, noSink: noSink, wrap: tap.wrap,
						settings: framework.Settings{Seed: 3, LoadRate: 50, LoadDuration: time.Second},
						options:  []framework.Option{framework.WithLog(log)}}
					writeArtifacts(t, rig.open(t), dir, run.filter)
					tap.check(t, dir, run.odd)
				})
			}
		}
	}
}

// createFile creates a file closed when the test ends.
func createFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// writeArtifacts runs the selected properties as `retrysafe run` does (Ginkgo, with its JUnit
// report, console log and progress lines), closes the harness and writes the reports and
// artefacts into dir.
func writeArtifacts(t *testing.T, h *framework.Harness, dir, filter string) {
	t.Helper()
	progress := createFile(t, filepath.Join(dir, "progress.log"))
	ginkgoLog := createFile(t, filepath.Join(dir, "ginkgo.log"))
	res, err := ginkgorun.Run(context.Background(), h, ginkgorun.Options{Selection: framework.Selection{LabelFilter: filter},
		JUnitFile: filepath.Join(dir, "junit.xml"), Progress: progress, GinkgoLog: ginkgoLog, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if v := res.Report.Verdict(); v != reports.Fail {
		t.Errorf("the mutant's run: %s, want fail (its evidence shows the deliveries)", v)
	}
	for name, data := range res.Artefacts {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{
		reports.WriteJSON(filepath.Join(dir, "report.json"), res.Report),
		reports.WriteMarkdown(filepath.Join(dir, "summary.md"), res.Report),
		reports.WriteHTML(filepath.Join(dir, "report.html"), res.Report, res.HTML),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// deliveryTap sees every delivery the harness sends a webhook consumer: the signatures, the
// signed timestamps, and which signatures verify.
type deliveryTap struct {
	scheme webhook.Scheme
	signer *webhook.Signer

	mu     sync.Mutex
	sigs   map[string]bool // every signature sent
	valid  map[string]bool // those that verify their body (at any timestamp)
	stamps map[string]bool // every signed timestamp, as sent
	odd    map[string]bool // those outside the tolerance when sent (stale or in the future)
}

func newDeliveryTap(t *testing.T, cfg webhook.Config) *deliveryTap {
	t.Helper()
	signer, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &deliveryTap{scheme: cfg.Scheme, signer: signer, sigs: map[string]bool{}, valid: map[string]bool{},
		stamps: map[string]bool{}, odd: map[string]bool{}}
}

// wrap records each delivery before the consumer handles it.
func (d *deliveryTap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			d.record(r.Header, body)
		}
		next.ServeHTTP(w, r)
	})
}

// record notes one delivery's signatures and timestamp.
func (d *deliveryTap) record(h http.Header, body []byte) {
	var stamp string
	var sigs []string
	if d.scheme == webhook.SchemeStripe {
		for _, part := range strings.Split(h.Get(webhook.HeaderStripeSignature), ",") {
			switch k, v, _ := strings.Cut(part, "="); k {
			case "t":
				stamp = v
			case "v1", "v0":
				sigs = append(sigs, v)
			}
		}
	} else {
		stamp = h.Get(webhook.HeaderWebhookTimestamp)
		for _, f := range strings.Fields(h.Get(webhook.HeaderWebhookSignature)) {
			_, sig, _ := strings.Cut(f, ",")
			sigs = append(sigs, sig)
		}
	}
	valid := d.signer.VerifyIgnoringTimestamp(h, body) == nil
	sec, err := strconv.ParseInt(stamp, 10, 64)
	odd := err == nil && (time.Since(time.Unix(sec, 0)).Abs() > d.signer.Tolerance())
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range sigs {
		d.sigs[s] = true
		d.valid[s] = d.valid[s] || valid
	}
	if stamp != "" {
		d.stamps[stamp] = true
		d.odd[stamp] = d.odd[stamp] || odd
	}
}

// check reads every file of the report folder: none holds a signature the harness sent (raw, or
// as report.html escapes it) or anything of a valid signature's form; the reports that show
// attempts show a signed timestamp in the redacted signature header, one outside the tolerance
// when odd.
func (d *deliveryTap) check(t *testing.T, dir string, odd bool) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	nValid := 0
	for _, v := range d.valid {
		if v {
			nValid++
		}
	}
	if nValid == 0 || len(d.stamps) == 0 {
		t.Fatalf("the consumer saw %d signatures (%d valid) and %d timestamps: the test proves nothing", len(d.sigs), nValid, len(d.stamps))
	}
	files := readDir(t, dir)
	for _, name := range []string{"junit.xml", "ginkgo.log", "progress.log", "harness.log", "report.json", "report.html", "summary.md"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the run wrote no %s", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		text := files[name]
		if m := validSignatureForms.FindStringIndex(text); m != nil {
			t.Errorf("%s holds a signature: ...%s...", name, text[max(0, m[0]-80):min(len(text), m[1]+20)])
		}
		for sig := range d.sigs {
			if strings.Contains(text, sig) || strings.Contains(text, strings.ReplaceAll(sig, "+", "&#43;")) {
				t.Errorf("%s holds the signature %s (valid: %v)", name, sig, d.valid[sig])
			}
		}
	}
	for _, name := range []string{"report.json", "report.html", "summary.md"} {
		if !d.showsStamp(files[name], false) {
			t.Errorf("%s shows no signed timestamp in a redacted %s header", name, d.scheme)
		}
	}
	if odd && !d.showsStamp(files["report.json"], true) {
		t.Errorf("report.json shows no stale or future timestamp (sent: %v)", d.odd)
	}
}

// showsStamp reports whether text shows a signed timestamp (one outside the tolerance, when odd)
// as the redacted headers of the scheme carry it.
func (d *deliveryTap) showsStamp(text string, odd bool) bool {
	if d.scheme == webhook.SchemeStandard && !strings.Contains(text, "Webhook-Signature: v1,"+history.Redacted) {
		return false
	}
	for stamp := range d.stamps {
		if odd && !d.odd[stamp] {
			continue
		}
		shown := "Webhook-Timestamp: " + stamp
		if d.scheme == webhook.SchemeStripe {
			shown = "Stripe-Signature: t=" + stamp + ",v1=" + history.Redacted
		}
		if strings.Contains(text, shown) {
			return true
		}
	}
	return false
}

// readDir reads every file of a folder, by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
