package probe_test

import (
	"context"
	"fmt"
	_ "github.com/retrysafe/retrysafe/suites" // every side's properties
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// roundTripFilter is the label filter of the runs of the round trip: no wait for a retention,
// no process faults (the APIs run in-process).
const roundTripFilter = "!wait:retention && !fault:process"

// shape is a way to start the reference API, with the example target file that describes it.
type shape struct {
	name      string
	doc       []byte
	configure func(*reference.Config)
	sink      bool // the API calls the harness's downstream sink at a fixed downstream.listen
}

var (
	shapeDefault = shape{"reference", examples.Reference, func(*reference.Config) {}, true}
	shapeHooks   = shape{"hooks", examples.ReferenceHooks, func(c *reference.Config) { c.Hooks = true }, false}
	roundShapes  = []shape{
		shapeDefault,
		{"uuid-keys", examples.ReferenceUUID, func(c *reference.Config) { c.KeyFormat = reference.KeyFormatUUID }, true},
		{"no-auth", examples.ReferenceNoAuth, func(c *reference.Config) { c.Auth = reference.AuthNone }, true},
		shapeHooks,
		{"mismatch-400", examples.ReferenceMismatch400, func(c *reference.Config) { c.MismatchStatus = 400 }, true},
	}
)

// roundTrip is one API of the round trip: started on SQLite, probed, its suggested target file
// written and loaded.
type roundTrip struct {
	doc       []byte // the target file probed
	suggested []byte // the target file --suggest writes
	prof      *profile.Profile
	target    *targets.Target // loaded from suggested
}

// startRoundTrip starts the reference API in shape sh with mutant m on a fresh SQLite store,
// probes it through its example target file, and loads the suggested target file.
func startRoundTrip(t *testing.T, sh shape, m reference.Mutant, lock time.Duration) *roundTrip {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	store, err := reference.OpenSQLite(ctx, filepath.Join(dir, "reference.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := reference.Config{Store: store, Tenants: []string{"alice", "bob"}, Mutant: m, Retention: reference.DefaultRetention,
		LockTimeout: lock, WorkDelay: reference.DefaultWorkDelay}
	sh.configure(&cfg)
	doc := sh.doc
	if sh.sink {
		addr := probetest.FreeAddr(t)
		cfg.Downstream = "http://" + addr + "/charge"
		doc = append(append([]byte{}, doc...), fmt.Sprintf("\ndownstream:\n  listen: %s\n", addr)...)
	}
	api, err := reference.NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(func() { srv.Close(); store.Close() })
	env := map[string]string{"RETRYSAFE_URL": srv.URL, "RETRYSAFE_RETENTION": cfg.Retention.String(), "RETRYSAFE_LOCK_TIMEOUT": lock.String()}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	probed := parseTarget(t, filepath.Join(dir, sh.name+".yaml"), doc, lookup)
	prof, err := probe.Run(ctx, probed, probe.Options{})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	suggested, err := probe.Suggest(doc, probed, prof)
	if err != nil {
		t.Fatalf("suggest: %v", err)
	}
	return &roundTrip{doc: doc, suggested: suggested, prof: prof, target: parseTarget(t, filepath.Join(dir, "suggested.yaml"), suggested, lookup)}
}

// parseTarget writes a target file and loads it with the given environment.
func parseTarget(t *testing.T, path string, doc []byte, env func(string) (string, bool)) *targets.Target {
	t.Helper()
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := targets.Parse(path, doc, env)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// run runs the properties the filter selects against the suggested target file.
func (rt *roundTrip) run(t *testing.T, filter string) *reports.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := framework.Open(ctx, rt.target, framework.WithSettings(framework.Settings{RaceRounds: 5, ReplayN: 5, LoadDuration: time.Second}))
	if err != nil {
		t.Fatalf("open the suggested target file: %v\n%s", err, rt.suggested)
	}
	defer h.Close()
	res, err := h.Run(ctx, framework.Selection{LabelFilter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}

// verdicts sums a run up: "replay=pass race=fail ...", and the failures' first lines.
func verdicts(r *reports.Run) (string, string) {
	var vs, fails []string
	for _, p := range r.Properties {
		vs = append(vs, p.Name+"="+string(p.Verdict))
		for _, s := range p.Specs {
			if s.Verdict == reports.Fail || s.Verdict == reports.Unknown {
				msg, _, _ := strings.Cut(s.Failure, "\n")
				fails = append(fails, fmt.Sprintf("  %s %s: %s: %s", p.Name, s.Verdict, s.Text, msg))
			}
		}
	}
	return strings.Join(vs, " "), strings.Join(fails, "\n")
}

// TestProbeRoundTripCorrect: the correct reference API, in each of its shapes, probed and run
// against the target file the probe suggests, passes every property (none fails or is left
// unknown), and the probe marks no field unsafe.
func TestProbeRoundTripCorrect(t *testing.T) {
	for _, sh := range roundShapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			rt := startRoundTrip(t, sh, reference.MutantNone, 3*time.Second)
			for _, f := range rt.prof.Unsafe() {
				t.Errorf("%s = %s is unsafe on the correct API: %s", f.Name, f.Value, f.Unsafe)
			}
			run := rt.run(t, roundTripFilter)
			summary, fails := verdicts(run)
			if fails != "" {
				t.Errorf("the correct API fails its suggested target file: %s\n%s\nsuggested profile:\n%s", summary, fails, profileBlock(rt.suggested))
			}
			if len(run.Properties) < 6 {
				t.Errorf("only %d properties ran: %s", len(run.Properties), summary)
			}
		})
	}
}

// mutantCase is a mutant the probe sees, the shape it is probed in, and the property of the
// run against its suggested target file that must fail, with the kind of anomaly it must find.
type mutantCase struct {
	mutant   reference.Mutant
	sh       shape
	field    string // the profile field that shows the bug: unsafe, a deviation, or value
	value    string // the field's value when the bug shows as a value alone ("" = marked)
	property string
	kind     reports.Kind
	lock     time.Duration // the API's (and its target file's) lock timeout
}

// seenMutants are the mutants whose profile differs from the correct API's.
var seenMutants = []mutantCase{
	{reference.MutantNoFingerprint, shapeDefault, profile.FieldMismatchStatus, "", "mismatch", reports.KindMismatchAccepted, 3 * time.Second},
	{reference.MutantFingerprintIgnoresField, shapeDefault, profile.FieldMismatchStatus, "", "mismatch", reports.KindMismatchAccepted, 3 * time.Second},
	{reference.MutantRawFingerprint, shapeDefault, profile.FieldReorderedBody, "422", "mismatch", reports.KindWrongStatus, 3 * time.Second},
	{reference.MutantPathBlind, shapeDefault, profile.FieldOperationScope, "", "mismatch", reports.KindForeignResponse, 3 * time.Second},
	{reference.MutantBodyDedupe, shapeDefault, profile.FieldSignificantKeyLength, "", "control", reports.KindMissingRecord, 3 * time.Second},
	{reference.MutantUnscoped, shapeDefault, profile.FieldTenantScope, "", "tenancy", reports.KindCrossTenantResponse, 3 * time.Second},
	{reference.MutantReplayWithoutAuth, shapeDefault, profile.FieldUnauthenticatedStatus, "", "tenancy", reports.KindUnauthenticatedResponse, 3 * time.Second},
	{reference.MutantReplayReexecutes, shapeDefault, profile.FieldReplay, "", "replay", reports.KindDuplicateRecord, 3 * time.Second},
	{reference.MutantLostWrite, shapeDefault, profile.FieldReplay, "", "replay", reports.KindMissingRecord, 3 * time.Second},
	{reference.MutantLoser500, shapeDefault, profile.FieldInFlight, "", "race", reports.KindServerError, 3 * time.Second},
	{reference.MutantRace, shapeDefault, profile.FieldInFlight, "", "race", reports.KindDuplicateRecord, 3 * time.Second},
	{reference.MutantLoser500, shapeHooks, profile.FieldInFlight, "", "race", reports.KindServerError, 3 * time.Second},
	{reference.MutantRace, shapeHooks, profile.FieldInFlight, "", "race", reports.KindDuplicateRecord, 3 * time.Second},
	{reference.MutantTruncatedKey, shapeDefault, profile.FieldSignificantKeyLength, "", "keys", reports.KindMissingRecord, 3 * time.Second},
	{reference.MutantStuckAfterError, shapeDefault, profile.FieldErrorPolicy, "", "error-replay", reports.KindStuckKey, time.Second},
	{reference.MutantStuckAfterError, shapeHooks, profile.FieldErrorPolicy, "", "error-replay", reports.KindStuckKey, time.Second},
	{reference.MutantErrorReplayDiffers, shapeHooks, profile.FieldErrorPolicy, "", "error-replay", reports.KindReplayDiffs, 3 * time.Second},
}

// TestProbeRoundTripMutants: each mutant the probe sees differs from the correct API in the
// field its bug touches (marked unsafe or a deviation, or by its value alone), and fails the
// property that catches it, with the anomaly of its bug, when run against the target file the
// probe suggests for it.
func TestProbeRoundTripMutants(t *testing.T) {
	for _, mc := range seenMutants {
		t.Run(string(mc.mutant)+"/"+mc.sh.name, func(t *testing.T) {
			t.Parallel()
			rt := startRoundTrip(t, mc.sh, mc.mutant, mc.lock)
			switch f := rt.prof.Field(mc.field); {
			case f == nil:
				t.Fatalf("no field %s", mc.field)
			case mc.value != "" && (f.Value != mc.value || f.Unsafe != ""):
				t.Errorf("%s = %s (unsafe %q), want %s, safe", mc.field, f.Value, f.Unsafe, mc.value)
			case mc.value == "" && f.Unsafe == "" && f.Deviation == "":
				t.Errorf("%s = %s: neither unsafe nor a deviation (note: %s)", mc.field, f.Value, f.Note)
			}
			run := rt.run(t, "("+roundTripFilter+") && property:"+mc.property)
			summary, _ := verdicts(run)
			if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Fail {
				t.Fatalf("run of its suggested target file: %s, want %s=fail\nsuggested profile:\n%s", summary, mc.property, profileBlock(rt.suggested))
			}
			if kinds := anomalyKinds(run); !slices.Contains(kinds, mc.kind) {
				t.Errorf("%s failed with anomalies %v, want %s among them", mc.property, kinds, mc.kind)
			}
		})
	}
}

// anomalyKinds lists the kinds of a run's anomalies.
func anomalyKinds(r *reports.Run) []reports.Kind {
	var out []reports.Kind
	for _, p := range r.Properties {
		for _, s := range p.Specs {
			for _, a := range s.Anomalies {
				out = append(out, a.Kind)
			}
		}
	}
	return out
}

// TestProbeRoundTripPolicyMutant: no-error-cache releases a key after a 5xx, which is the retry
// error policy, a choice the draft advises against but not a bug. The probe reports it as a
// deviation, not as unsafe, suggests `error_policy: retry`, and the mutant then passes
// error-replay: the suggestion describes it faithfully.
func TestProbeRoundTripPolicyMutant(t *testing.T) {
	rt := startRoundTrip(t, shapeDefault, reference.MutantNoErrorCache, 3*time.Second)
	f := rt.prof.Field(profile.FieldErrorPolicy)
	if f.Value != "retry" || f.Unsafe != "" || !strings.Contains(f.Deviation, "error included") {
		t.Errorf("error_policy = %+v, want retry, safe, a deviation", f)
	}
	if !strings.Contains(string(rt.suggested), "error_policy: retry") {
		t.Errorf("suggested profile lacks error_policy: retry:\n%s", profileBlock(rt.suggested))
	}
	run := rt.run(t, "("+roundTripFilter+") && property:error-replay")
	if summary, fails := verdicts(run); fails != "" || len(run.Properties) != 1 {
		t.Errorf("error-replay under the suggested retry policy: %s\n%s", summary, fails)
	}
}

// profileBlock returns the profile block of a target file, for failure messages.
func profileBlock(doc []byte) string {
	_, after, ok := strings.Cut(string(doc), "\nprofile:\n")
	if !ok {
		return string(doc)
	}
	return "profile:\n" + after
}
