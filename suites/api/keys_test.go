package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestPadKey(t *testing.T) {
	if got := padKey("abc", 8, 'x'); got != "abc-xxxx" || len(got) != 8 {
		t.Errorf("padKey = %q", got)
	}
	if got := padKey("abcdefgh", 4, 'x'); got != "abcd" {
		t.Errorf("padKey cut = %q", got)
	}
}

// rawHeaderKeys wraps an API so that it keys on the raw header value, as most libraries do: a
// quoted key "abc" is the key `"abc"`, another key than abc (the quotes are kept, escaped so
// that the reference does not unquote them).
func rawHeaderKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Idempotency-Key"); strings.HasPrefix(v, `"`) {
			r.Header.Set("Idempotency-Key", strings.ReplaceAll(v, `"`, "%22"))
		}
		next.ServeHTTP(w, r)
	})
}

// TestKeyFormsAsked: an API keyed by the raw header passes keys with no key form declared (every
// key sent bare, the deviation reported), and fails with key_forms: [quoted, bare] declared.
func TestKeyFormsAsked(t *testing.T) {
	api := rawHeaderKeys(referenceAPI(t, reference.MutantNone))
	run, log := runAgainst(t, api, twoOps, "", "property:keys")
	if v := run.Properties[0].Verdict; v != reports.Pass {
		t.Errorf("keys with no key form declared: %s, want pass:\n%+v", v, run.Properties[0].Specs)
	}
	const dev = "quoted and bare forms are distinct keys (the draft expects one key): every key sent bare"
	if len(run.Target.Deviations) != 1 || !strings.HasPrefix(run.Target.Deviations[0], dev) {
		t.Errorf("deviations = %q, want one starting %q", run.Target.Deviations, dev)
	}
	if !strings.Contains(log, "key forms: "+dev) || run.Target.Profile["key_forms"] != "bare" {
		t.Errorf("log %q, profile key_forms %q: want the deviation said and bare in force", log, run.Target.Profile["key_forms"])
	}
	run, _ = runAgainst(t, api, twoOps, "  key_forms: [quoted, bare]\n", "property:keys")
	same := specsOf(run, "keys")["orders: the quoted and bare forms of one key are the same key"]
	if same.Verdict != reports.Fail || !slices.Contains(kindsOf(same), reports.KindDuplicateRecord) || len(run.Target.Deviations) != 0 {
		t.Errorf("declared [quoted, bare]: %s %v, deviations %q; want a duplicate-record failure and none", same.Verdict, kindsOf(same), run.Target.Deviations)
	}
	// An API that refuses the quoted form refuses the baseline too: it is sent again bare.
	refusesQuoted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Idempotency-Key"), `"`) {
			http.Error(w, `{"error":"bad key"}`, http.StatusBadRequest)
			return
		}
		api.ServeHTTP(w, r)
	})
	run, _ = runAgainst(t, refusesQuoted, twoOps, "", "property:keys")
	if run.Properties[0].Verdict != reports.Pass || len(run.Target.Deviations) != 1 ||
		!strings.HasPrefix(run.Target.Deviations[0], "the quoted (RFC 8941) form of a key is refused (400): every key sent bare") {
		t.Errorf("quoted keys refused: %s, deviations %q", run.Properties[0].Verdict, run.Target.Deviations)
	}
	// The reference, whose quoted and bare forms are one key, keeps both with no deviation.
	run, _ = runAgainst(t, referenceAPI(t, reference.MutantNone), twoOps, "", "property:keys")
	if run.Properties[0].Verdict != reports.Pass || len(run.Target.Deviations) != 0 || run.Target.Profile["key_forms"] != "quoted,bare" {
		t.Errorf("the reference: %s, deviations %q, key_forms %q", run.Properties[0].Verdict, run.Target.Deviations, run.Target.Profile["key_forms"])
	}
}
