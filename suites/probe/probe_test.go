package probe_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/probe"
	"github.com/retrysafe/retrysafe/targets/probe/probetest"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// probeFile loads a target file and probes it within a bounded time.
func probeFile(t *testing.T, file string, opts probe.Options) (*probe.Profile, error) {
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

func mustProbe(t *testing.T, s probetest.Server) *probe.Profile {
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
		probe.FieldReplay: "same", probe.FieldReplayHeader: "Idempotent-Replayed: true",
		probe.FieldMismatchStatus: "422", probe.FieldReorderedBody: "replay", probe.FieldInFlight: "409",
		probe.FieldMissingKeyStatus: "400", probe.FieldEmptyKeyStatus: "400", probe.FieldLongKeyStatus: "400",
		probe.FieldMaxKeyLength: "255", probe.FieldSignificantKeyLength: "255", probe.FieldKeyForms: "[quoted, bare]",
		probe.FieldTenantScope: "per-tenant", probe.FieldUnauthenticatedStatus: "401",
		probe.FieldOperationScope: "per-operation", probe.FieldErrorPolicy: "replay", probe.FieldExpired: probe.NotProbed,
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
	if !slices.Equal(names, probe.FieldOrder) {
		t.Errorf("fields %v, want %v", names, probe.FieldOrder)
	}
	if p.Attempts == 0 || p.Attempts > probe.DefaultMaxAttempts {
		t.Errorf("attempts = %d, want 1..%d", p.Attempts, probe.DefaultMaxAttempts)
	}
	if f := p.Field(probe.FieldMismatchStatus); len(f.Records) != 1 || f.Records[0].Records != 1 {
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
		{reference.MutantNoFingerprint, []string{probe.FieldMismatchStatus}, true},
		{reference.MutantUnscoped, []string{probe.FieldTenantScope}, true},
		{reference.MutantLoser500, []string{probe.FieldInFlight}, true},
		{reference.MutantPathBlind, []string{probe.FieldOperationScope}, true},
		{reference.MutantTruncatedKey, []string{probe.FieldSignificantKeyLength}, true},
		{reference.MutantRace, []string{probe.FieldInFlight}, true},
		{reference.MutantReplayWithoutAuth, []string{probe.FieldUnauthenticatedStatus}, true},
		{reference.MutantReplayReexecutes, []string{probe.FieldReplay, probe.FieldReorderedBody}, true},
		{reference.MutantRawFingerprint, []string{probe.FieldReorderedBody}, false},
		{reference.MutantNoErrorCache, []string{probe.FieldErrorPolicy}, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			got := mustProbe(t, probetest.Start(t, tt.mutant))
			var changed []string
			for _, c := range probe.Compare(correct, got) {
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
		{reference.MutantNoFingerprint, probe.FieldMismatchStatus, "201"},
		{reference.MutantUnscoped, probe.FieldTenantScope, "shared"},
		{reference.MutantLoser500, probe.FieldInFlight, "500"},
		{reference.MutantRace, probe.FieldInFlight, "duplicate"},
		{reference.MutantTruncatedKey, probe.FieldSignificantKeyLength, "64"},
		{reference.MutantNoErrorCache, probe.FieldErrorPolicy, "retry"},
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
	for _, name := range []string{probe.FieldInFlight, probe.FieldErrorPolicy} {
		f := p.Field(name)
		if f.Value != probe.NotProbed || !strings.Contains(f.Note, "no downstream") {
			t.Errorf("%s = %q (%s), want not-probed for want of a downstream", name, f.Value, f.Note)
		}
	}
	if f := p.Field(probe.FieldMismatchStatus); f.Value != "422" {
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
	if f := p.Field(probe.FieldOperationScope); f.Value != probe.NotProbed || !strings.Contains(f.Note, "budget") {
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
