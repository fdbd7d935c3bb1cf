package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// auditRun runs the root command in-process with args and returns what it printed (stdout and
// stderr) and the exit code main would use.
func auditRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, code, err := invoke(args...)
	if err != nil {
		out += "\nerror: " + err.Error()
	}
	return out, code
}

func TestProbeCommandWritesProfile(t *testing.T) {
	s := probetest.Start(t, reference.MutantNone)
	out := filepath.Join(t.TempDir(), "reference.json")
	text, code := auditRun(t, "probe", "--target", s.TargetFile, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	for _, want := range []string{"mismatch_status", "422", "in_flight", "409", "max_key_length", "255",
		"expired", "not-probed", "profile:\n  mismatch_status: 422"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	p, err := profile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Schema != profile.SchemaVersion || p.Field(profile.FieldMismatchStatus).Value != "422" {
		t.Errorf("profile file: schema %q, mismatch_status %+v", p.Schema, p.Field(profile.FieldMismatchStatus))
	}
}

// TestProbeCompare: --compare between the correct API and a mutant exits 1 naming exactly the
// fields the mutant changes; against itself it exits 0.
func TestProbeCompare(t *testing.T) {
	correct := probetest.Start(t, reference.MutantNone)
	old := filepath.Join(t.TempDir(), "correct.json")
	if text, code := auditRun(t, "probe", "--target", correct.TargetFile, "--out", old); code != exitOK {
		t.Fatalf("first probe: exit %d:\n%s", code, text)
	}
	text, code := auditRun(t, "probe", "--target", correct.TargetFile, "--compare", old)
	if code != exitOK || !strings.Contains(text, "drift: no behaviour field changed") {
		t.Errorf("the correct API against itself: exit %d, want 0:\n%s", code, text)
	}
	tests := []struct {
		mutant reference.Mutant
		field  string
		change string
	}{
		{reference.MutantNoFingerprint, "mismatch_status", "mismatch_status: 422 -> 201 (UNSAFE: another request's response replayed"},
		{reference.MutantUnscoped, "tenant_scope", "tenant_scope: per-tenant -> shared (UNSAFE: response served across tenants"},
		{reference.MutantLoser500, "in_flight", "in_flight: 409 -> 500 (UNSAFE: 5xx to a race loser"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			s := probetest.Start(t, tt.mutant)
			text, code := auditRun(t, "probe", "--target", s.TargetFile, "--compare", old)
			if code != exitViolation {
				t.Fatalf("exit %d, want 1:\n%s", code, text)
			}
			for _, want := range []string{"drift: 1 behaviour field(s) changed: " + tt.field, tt.change,
				"old evidence:", "new evidence:", "error: behaviour changed: " + tt.field} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

func TestProbeCommandCannotRun(t *testing.T) {
	s := probetest.StartWithoutDownstream(t, reference.MutantNone)
	data, err := os.ReadFile(s.TargetFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	remote := write("remote.yaml", strings.Replace(string(data), s.URL, "http://192.0.2.1:9", 1))
	dead := write("dead.yaml", strings.Replace(string(data), s.URL, "http://"+probetest.FreeAddr(t), 1))
	bad := write("bad.yaml", "instances: [http://127.0.0.1:1]\noperations: []\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"probe"}, "the target file to probe is required: retrysafe probe FILE (or --target FILE)"},
		{"bad file", []string{"probe", "--target", bad}, "operations"},
		{"remote", []string{"probe", "--target", remote}, "refusing to test http://192.0.2.1:9"},
		{"unreachable", []string{"probe", "--target", dead}, "target unreachable"},
		{"bad compare file", []string{"probe", "--target", s.TargetFile, "--compare", bad}, "--compare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, code := auditRun(t, tt.args...)
			if code != exitUsage || !strings.Contains(text, tt.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tt.want, text)
			}
		})
	}
}

// TestProbeSuggestRoundTrip: --suggest writes a target file that validates, and a run of it
// passes on the correct API and fails on a mutant; --key sends the keys under that prefix.
func TestProbeSuggestRoundTrip(t *testing.T) {
	tests := []struct {
		mutant reference.Mutant
		code   int
	}{{reference.MutantNone, exitOK}, {reference.MutantNoFingerprint, exitViolation}}
	for _, tt := range tests {
		t.Run(string(tt.mutant), func(t *testing.T) {
			s := probetest.Start(t, tt.mutant)
			dir := t.TempDir()
			suggested, prof := filepath.Join(dir, "suggested.yaml"), filepath.Join(dir, "profile.json")
			text, code := auditRun(t, "probe", "--target", s.TargetFile, "--suggest", suggested, "--out", prof, "--key", "rs-cli-probe")
			if code != exitOK || !strings.Contains(text, "suggested target file: "+suggested) {
				t.Fatalf("probe: exit %d:\n%s", code, text)
			}
			p, err := profile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if x := p.Field(profile.FieldReplay).Evidence[0]; p.KeyPrefix != "rs-cli-probe" || !strings.Contains(x.Key, "rs-cli-probe-") {
				t.Errorf("key prefix %q, first key %q: want rs-cli-probe", p.KeyPrefix, x.Key)
			}
			if text, code := auditRun(t, "validate", suggested); code != exitOK {
				t.Fatalf("validate: exit %d:\n%s", code, text)
			}
			text, code = auditRun(t, "run", "--target", suggested, "--label-filter", "property:mismatch || property:keys",
				"--report-dir", filepath.Join(dir, "report"), "--timeout", "1m")
			if code != tt.code {
				t.Errorf("run of the suggested file: exit %d, want %d:\n%s", code, tt.code, text)
			}
		})
	}
}
