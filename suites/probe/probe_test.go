package probe_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports/profile"

	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// probeFile loads a target file and probes it within a bounded time.
func probeFile(t *testing.T, file string, opts probe.Options) (*profile.Profile, error) {
	t.Helper()
	tg, err := targets.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return probe.Run(ctx, tg, opts)
}

func mustProbe(t *testing.T, s probetest.Server) *profile.Profile {
	t.Helper()
	p, err := probeFile(t, s.TargetFile, probe.Options{})
	if err != nil {
		t.Fatalf("probe %s: %v", s.Name, err)
	}
	return p
}

func TestProbeReferenceProfile(t *testing.T) {
	p := mustProbe(t, probetest.Start(t, reference.MutantNone))
	want := map[string]string{
		profile.FieldReplay: "same", profile.FieldReplayHeader: "Idempotent-Replayed: true",
		profile.FieldMismatchStatus: "422", profile.FieldReorderedBody: "replay", profile.FieldInFlight: "409",
		profile.FieldMissingKeyStatus: "400", profile.FieldEmptyKeyStatus: "400", profile.FieldLongKeyStatus: "400",
		profile.FieldMaxKeyLength: "255", profile.FieldSignificantKeyLength: "255", profile.FieldKeyForms: "[quoted, bare]",
		profile.FieldTenantScope: "per-tenant", profile.FieldUnauthenticatedStatus: "401",
		profile.FieldOperationScope: "per-operation", profile.FieldErrorPolicy: "replay", profile.FieldExpired: profile.NotProbed,
		profile.FieldReplayReturns: "original",
	}
	var names []string
	for _, f := range p.Fields {
		names = append(names, f.Name)
		if got := f.Value; got != want[f.Name] {
			t.Errorf("%s = %q, want %q (note: %s)", f.Name, got, want[f.Name], f.Note)
		}
		if f.Unsafe != "" {
			t.Errorf("%s is marked unsafe on the correct API: %s", f.Name, f.Unsafe)
		}
		if f.Probed() && len(f.Evidence) == 0 {
			t.Errorf("%s = %s carries no evidence", f.Name, f.Value)
		}
	}
	if !slices.Equal(names, profile.FieldOrder) {
		t.Errorf("fields %v, want %v", names, profile.FieldOrder)
	}
	if p.Attempts == 0 || p.Attempts > probe.DefaultMaxAttempts {
		t.Errorf("attempts = %d, want 1..%d", p.Attempts, probe.DefaultMaxAttempts)
	}
	if f := p.Field(profile.FieldMismatchStatus); len(f.Records) != 1 || f.Records[0].Records != 1 {
		t.Errorf("mismatch_status records = %+v, want one count of 1", f.Records)
	}
}

// TestProbeMutantsDifferExactly: each mutant's profile differs from the correct API's in exactly
// the fields its bug touches, and the fields that differ are marked unsafe where the bug is one.
func TestProbeMutantsDifferExactly(t *testing.T) {
	correct := mustProbe(t, probetest.Start(t, reference.MutantNone))
	tests := []struct {
		mutant reference.Mutant
		fields []string
		unsafe bool
	}{
		{reference.MutantNoFingerprint, []string{profile.FieldMismatchStatus}, true},
		{reference.MutantUnscoped, []string{profile.FieldTenantScope}, true},
		{reference.MutantLoser500, []string{profile.FieldInFlight}, true},
		{reference.MutantPathBlind, []string{profile.FieldOperationScope}, true},
		{reference.MutantTruncatedKey, []string{profile.FieldSignificantKeyLength}, true},
		{reference.MutantRace, []string{profile.FieldInFlight}, true},
		{reference.MutantReplayWithoutAuth, []string{profile.FieldUnauthenticatedStatus}, true},
		{reference.MutantReplayReexecutes, []string{profile.FieldReplay, profile.FieldReorderedBody}, true},
		{reference.MutantRawFingerprint, []string{profile.FieldReorderedBody}, false},
		{reference.MutantNoErrorCache, []string{profile.FieldErrorPolicy}, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			got := mustProbe(t, probetest.Start(t, tt.mutant))
			var changed []string
			for _, c := range profile.Compare(correct, got) {
				changed = append(changed, c.Field)
				if (c.New.Unsafe != "") != tt.unsafe {
					t.Errorf("%s = %s: unsafe %q, want unsafe=%v", c.Field, c.New.Value, c.New.Unsafe, tt.unsafe)
				}
			}
			if !slices.Equal(changed, tt.fields) {
				t.Errorf("changed fields %v, want %v", changed, tt.fields)
			}
		})
	}
}

func TestProbeMutantValues(t *testing.T) {
	tests := []struct {
		mutant      reference.Mutant
		field, want string
	}{
		{reference.MutantNoFingerprint, profile.FieldMismatchStatus, "201"},
		{reference.MutantUnscoped, profile.FieldTenantScope, "shared"},
		{reference.MutantLoser500, profile.FieldInFlight, "500"},
		{reference.MutantRace, profile.FieldInFlight, "duplicate"},
		{reference.MutantTruncatedKey, profile.FieldSignificantKeyLength, "64"},
		{reference.MutantNoErrorCache, profile.FieldErrorPolicy, "retry"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			f := mustProbe(t, probetest.Start(t, tt.mutant)).Field(tt.field)
			if f == nil || f.Value != tt.want {
				t.Fatalf("%s = %+v, want %q", tt.field, f, tt.want)
			}
		})
	}
}

func TestProbeWithoutDownstreamLeavesInFlightNotProbed(t *testing.T) {
	p := mustProbe(t, probetest.StartWithoutDownstream(t, reference.MutantNone))
	for _, name := range []string{profile.FieldInFlight, profile.FieldErrorPolicy} {
		f := p.Field(name)
		if f.Value != profile.NotProbed || !strings.Contains(f.Note, "no downstream") {
			t.Errorf("%s = %q (%s), want not-probed for want of a downstream", name, f.Value, f.Note)
		}
	}
	if f := p.Field(profile.FieldMismatchStatus); f.Value != "422" {
		t.Errorf("mismatch_status = %q, want 422", f.Value)
	}
}

func TestProbeBudgetLeavesFieldsNotProbed(t *testing.T) {
	p, err := probeFile(t, probetest.Start(t, reference.MutantNone).TargetFile, probe.Options{MaxAttempts: 6})
	if err != nil {
		t.Fatal(err)
	}
	if p.Attempts > 6 {
		t.Errorf("attempts = %d, want at most 6", p.Attempts)
	}
	if f := p.Field(profile.FieldOperationScope); f.Value != profile.NotProbed || !strings.Contains(f.Note, "budget") {
		t.Errorf("operation_scope = %q (%s), want not-probed: budget spent", f.Value, f.Note)
	}
}

func TestProbeCannotRun(t *testing.T) {
	dead := probetest.FreeAddr(t)
	s := probetest.StartWithoutDownstream(t, reference.MutantNone)
	data, err := os.ReadFile(s.TargetFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "unreachable.yaml")
	os.WriteFile(unreachable, []byte(strings.Replace(string(data), s.URL, "http://"+dead, 1)), 0o644)
	stranger := filepath.Join(dir, "stranger.yaml")
	os.WriteFile(stranger, []byte(strings.ReplaceAll(string(data), "Bearer alice", "Bearer mallory")), 0o644)
	tests := []struct {
		file string
		want error
	}{{unreachable, probe.ErrUnreachable}, {stranger, probe.ErrBaseline}}
	for _, tt := range tests {
		_, err := probeFile(t, tt.file, probe.Options{AttemptTimeout: 5 * time.Second})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", filepath.Base(tt.file), err, tt.want)
		}
	}
}

// probeWith starts the reference API shaped by o and probes it.
func probeWith(t *testing.T, o probetest.Options, opts probe.Options) *profile.Profile {
	t.Helper()
	s := probetest.StartWith(t, o)
	p, err := probeFile(t, s.TargetFile, opts)
	if err != nil {
		t.Fatalf("probe %s: %v", s.Name, err)
	}
	return p
}

// keysSent lists the idempotency keys of a profile's evidence, by attempt.
func keysSent(p *profile.Profile) map[int64]string {
	keys := map[int64]string{}
	for _, f := range p.Fields {
		for _, x := range f.Evidence {
			keys[x.Seq] = x.Key
		}
	}
	return keys
}

// uuidKeys declares key.format uuid on both operations of probetest's target file.
func uuidKeys(text string) string {
	for _, path := range []string{"/v1/orders", "/v1/refunds"} {
		text = strings.Replace(text, "    path: "+path+"\n", "    path: "+path+"\n    key: {format: uuid}\n", 1)
	}
	return text
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestProbeKeyPrefixReproducesKeys: two probes with one key prefix send the same keys, attempt
// by attempt, in the default format and as UUIDs; a UUID-only API is probed without a key it
// would refuse, and the key-length search is skipped for the fixed shape.
func TestProbeKeyPrefixReproducesKeys(t *testing.T) {
	uuid := probetest.Options{Configure: func(c *reference.Config) { c.KeyFormat = reference.KeyFormatUUID }, Edit: uuidKeys}
	for name, o := range map[string]probetest.Options{"default": {}, "uuid": uuid} {
		t.Run(name, func(t *testing.T) {
			opts := probe.Options{KeyPrefix: "rs-repro-" + name}
			first, second := probeWith(t, o, opts), probeWith(t, o, opts)
			if first.KeyPrefix != opts.KeyPrefix {
				t.Errorf("profile key prefix %q, want %q", first.KeyPrefix, opts.KeyPrefix)
			}
			a, b := keysSent(first), keysSent(second)
			if len(a) < 20 || !maps.Equal(a, b) {
				t.Errorf("keys differ between two probes with --key %s:\n%v\n%v", opts.KeyPrefix, a, b)
			}
			for seq, k := range a {
				if k == "" || k == "[REDACTED]" {
					continue
				}
				if name == "uuid" && !uuidPattern.MatchString(strings.Trim(k, `"`)) {
					t.Errorf("attempt #%d sent key %q, not a UUID", seq, k)
				}
				if name == "default" && !strings.HasPrefix(strings.Trim(k, `"`), opts.KeyPrefix) {
					t.Errorf("attempt #%d sent key %q, not under the prefix", seq, k)
				}
			}
			if name == "uuid" {
				for _, f := range []string{profile.FieldMaxKeyLength, profile.FieldLongKeyStatus, profile.FieldSignificantKeyLength} {
					if got := first.Field(f); got.Value != profile.NotProbed || !strings.Contains(got.Note, "fixed shape") {
						t.Errorf("%s = %s (%s), want not-probed for the fixed key shape", f, got.Value, got.Note)
					}
				}
				for _, f := range first.Fields {
					if f.Unsafe != "" {
						t.Errorf("%s unsafe on the UUID-only API: %s", f.Name, f.Unsafe)
					}
				}
			}
		})
	}
}

// TestProbeHooks: without a downstream, the slow hook holds the first attempt for in_flight
// and the fail_next hook makes it fail for error_policy, on the correct API and on the mutants
// these fields show.
func TestProbeHooks(t *testing.T) {
	tests := []struct {
		mutant              reference.Mutant
		inFlight, errPolicy string
		unsafe              string // the field that must be unsafe ("" = none)
		deviation           string // the field that must deviate from the draft ("" = none)
	}{
		{reference.MutantNone, "409", "replay", "", ""},
		{reference.MutantRace, "duplicate", "replay", profile.FieldInFlight, profile.FieldInFlight},
		{reference.MutantLoser500, "500", "replay", profile.FieldInFlight, profile.FieldInFlight},
		{reference.MutantNoErrorCache, "409", "retry", "", profile.FieldErrorPolicy},
		{reference.MutantErrorReplayDiffers, "409", "replay", "", profile.FieldErrorPolicy},
	}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			t.Parallel()
			p := probeWith(t, probetest.Options{Mutant: tt.mutant, Hooks: true}, probe.Options{})
			for name, want := range map[string]string{profile.FieldInFlight: tt.inFlight, profile.FieldErrorPolicy: tt.errPolicy} {
				if f := p.Field(name); f.Value != want {
					t.Errorf("%s = %s (%s), want %s", name, f.Value, f.Note, want)
				}
			}
			for _, f := range p.Fields {
				if (f.Unsafe != "") != (f.Name == tt.unsafe) {
					t.Errorf("%s = %s: unsafe %q", f.Name, f.Value, f.Unsafe)
				}
				if (f.Deviation != "") != (f.Name == tt.deviation) {
					t.Errorf("%s = %s: deviation %q", f.Name, f.Value, f.Deviation)
				}
			}
			if f := p.Field(profile.FieldInFlight); !strings.Contains(f.Note, "slow hook") {
				t.Errorf("in_flight note %q does not name the slow hook", f.Note)
			}
		})
	}
}

// TestProbeDeviations: under base ietf a value contradicting the draft is a deviation, not
// unsafe; under base stripe nothing is.
func TestProbeDeviations(t *testing.T) {
	mismatch400 := func(c *reference.Config) { c.MismatchStatus = 400 }
	tests := []struct {
		name string
		o    probetest.Options
		want string // the deviation of mismatch_status
	}{
		{"ietf", probetest.Options{Configure: mismatch400}, "the draft says 422 for a reused key with another payload"},
		{"stripe", probetest.Options{Configure: mismatch400, Edit: func(s string) string {
			return strings.Replace(s, "base: ietf", "base: stripe\n  key_forms: [quoted, bare]", 1)
		}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := probeWith(t, tt.o, probe.Options{})
			f := p.Field(profile.FieldMismatchStatus)
			if f.Value != "400" || f.Unsafe != "" || f.Deviation != tt.want {
				t.Errorf("mismatch_status = %s, unsafe %q, deviation %q; want 400, safe, deviation %q", f.Value, f.Unsafe, f.Deviation, tt.want)
			}
			if p.Base != tt.name {
				t.Errorf("profile base %q, want %q", p.Base, tt.name)
			}
			if n := len(p.Deviations()); (n == 1) != (tt.want != "") || n > 1 {
				t.Errorf("%d deviations: %+v", n, p.Deviations())
			}
		})
	}
}

// failKeys answers 500 to a POST without a key, with an empty key, or with a key longer than
// 100 characters: a server error for a client's mistake.
func failKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("Idempotency-Key"); r.Method == http.MethodPost && (k == "" || len(strings.Trim(k, `"`)) > 100) {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestProbeServerErrorForMalformedKey: a 5xx to a missing, empty or over-long key is unsafe,
// even where the target file declares that 5xx, and the suggestion leaves it out.
func TestProbeServerErrorForMalformedKey(t *testing.T) {
	declare500 := func(s string) string {
		return strings.Replace(s, "base: ietf", "base: ietf\n  missing_key_status: 500\n  long_key_status: 500", 1)
	}
	p := probeWith(t, probetest.Options{Wrap: failKeys, Edit: declare500}, probe.Options{})
	for _, name := range []string{profile.FieldMissingKeyStatus, profile.FieldEmptyKeyStatus, profile.FieldLongKeyStatus} {
		if f := p.Field(name); f.Value != "500" || !strings.HasPrefix(f.Unsafe, "server error") {
			t.Errorf("%s = %s, unsafe %q; want 500, unsafe: server error", name, f.Value, f.Unsafe)
		}
	}
	if f := p.Field(profile.FieldMaxKeyLength); f.Value != "100" {
		t.Errorf("max_key_length = %s, want 100", f.Value)
	}
	for _, l := range p.Expectations() {
		if strings.HasPrefix(l, profile.FieldMissingKeyStatus) || strings.HasPrefix(l, profile.FieldLongKeyStatus) {
			t.Errorf("expectation %q suggests a 5xx for a malformed key", l)
		}
	}
}

// quotedIsAnotherKey reads the key header verbatim: a quoted key is another key than the same
// key bare.
func quotedIsAnotherKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("Idempotency-Key"); strings.HasPrefix(k, `"`) {
			r.Header.Set("Idempotency-Key", "q-"+strings.Trim(k, `"`))
		}
		next.ServeHTTP(w, r)
	})
}

// refuseQuoted refuses a quoted key.
func refuseQuoted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Idempotency-Key"), `"`) {
			http.Error(w, "bad key", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestProbeKeyForms: both forms are suggested only when the evidence shows they are one key.
func TestProbeKeyForms(t *testing.T) {
	bareOnly := func(s string) string { return strings.Replace(s, "base: ietf", "base: ietf\n  key_forms: [bare]", 1) }
	tests := []struct {
		name string
		o    probetest.Options
		want string
		note string
	}{
		{"same key", probetest.Options{}, "[quoted, bare]", "same key"},
		{"two keys", probetest.Options{Wrap: quotedIsAnotherKey}, "[bare]", "two different keys"},
		{"quoted refused", probetest.Options{Wrap: refuseQuoted, Edit: bareOnly}, "[bare]", "quoted form was refused with 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := probeWith(t, tt.o, probe.Options{}).Field(profile.FieldKeyForms)
			if f.Value != tt.want || !strings.Contains(f.Note, tt.note) {
				t.Errorf("key_forms = %s (%s), want %s (%s)", f.Value, f.Note, tt.want, tt.note)
			}
		})
	}
}

// replayAs200 answers every replay 200 instead of its stored 201: the same body, another status.
func replayAs200(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&statusRewriter{ResponseWriter: w}, r)
	})
}

type statusRewriter struct{ http.ResponseWriter }

func (s *statusRewriter) WriteHeader(code int) {
	if code == http.StatusCreated && s.Header().Get("Idempotent-Replayed") == "true" {
		code = http.StatusOK
	}
	s.ResponseWriter.WriteHeader(code)
}

// TestProbeReorderedBodyStatusOnly: a reordered body replayed with another status (one record,
// the same body) is a replay, not an execution; replay itself deviates from the draft.
func TestProbeReorderedBodyStatusOnly(t *testing.T) {
	p := probeWith(t, probetest.Options{Wrap: replayAs200}, probe.Options{})
	if f := p.Field(profile.FieldReorderedBody); f.Value != "replay" || f.Unsafe != "" || !strings.Contains(f.Note, "status 200 instead of 201") {
		t.Errorf("reordered_body = %s (%s), unsafe %q; want replay", f.Value, f.Note, f.Unsafe)
	}
	if f := p.Field(profile.FieldReplay); !strings.HasPrefix(f.Value, "differs at status") || f.Deviation == "" || f.Unsafe != "" {
		t.Errorf("replay = %s, unsafe %q, deviation %q; want a safe deviation at the status", f.Value, f.Unsafe, f.Deviation)
	}
}
