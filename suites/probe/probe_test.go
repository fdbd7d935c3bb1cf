package probe_test

import (
	"context"
	"errors"
	"github.com/retrysafe/retrysafe/reports/profile"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
