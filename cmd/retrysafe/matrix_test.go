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

// TestMatrixOverMutants probes the correct API and three mutants and prints them side by side:
// the mutants' cells are marked unsafe where their bug shows, and nowhere else.
func TestMatrixOverMutants(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for _, m := range []reference.Mutant{reference.MutantNone, reference.MutantNoFingerprint, reference.MutantUnscoped, reference.MutantLoser500} {
		s := probetest.Start(t, m)
		file := filepath.Join(dir, s.Name+".json")
		if text, code := auditRun(t, "probe", "--target", s.TargetFile, "--out", file); code != exitOK {
			t.Fatalf("probe %s: exit %d:\n%s", s.Name, code, text)
		}
		args = append(args, "--label", s.Name+"="+file)
	}
	page := filepath.Join(dir, "matrix.html")
	text, code := auditRun(t, append([]string{"matrix", "--html", page}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	for _, want := range []string{
		"| behaviour | reference | no-fingerprint | unscoped | loser-500 |",
		"| `mismatch_status` | 422 | **✗ 201** | 422 | 422 |",
		"| `tenant_scope` | per-tenant | per-tenant | **✗ shared** | per-tenant |",
		"| `in_flight` | 409 | 409 | 409 | **✗ 500** |",
		"| `max_key_length` | 255 | 255 | 255 | 255 |",
		"**Unsafe (3):**",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "**✗ "); n != 3 {
		t.Errorf("%d unsafe cells, want 3:\n%s", n, text)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<td class="unsafe"`); n != 3 {
		t.Errorf("HTML has %d unsafe cells, want 3", n)
	}
}

func TestMatrixBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "notes.json")
	os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644)
	good := filepath.Join(dir, "good.json")
	(&profile.Profile{Target: profile.TargetInfo{Name: "api"}}).WriteFile(good)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"matrix", bad}, "neither a profile"},
		{[]string{"matrix", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"matrix"}, "no file"},
		{[]string{"matrix", "--label", "nameonly"}, "want NAME=FILE"},
		{[]string{"matrix", "--label", "=" + good}, "want NAME=FILE"},
		{[]string{"matrix", "--label", "a=" + good, "--label", "a=" + bad}, `the name "a" is given twice`},
		{[]string{"matrix", "--label", "a=" + good, "--label", "b=" + good}, `already labelled "a"`},
	}
	for _, tt := range tests {
		if text, code := auditRun(t, tt.args...); code != exitUsage || !strings.Contains(text, tt.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tt.args, code, tt.want, text)
		}
	}
}

// TestMatrixColumnNames: a column is named by its target's first instance URL unless --label
// names it; a labelled file need not be repeated among the arguments.
func TestMatrixColumnNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, urls ...string) string {
		file := filepath.Join(dir, name+".json")
		p := &profile.Profile{Target: profile.TargetInfo{Name: "orders", Instances: urls},
			Fields: []profile.Field{{Name: profile.FieldMismatchStatus, Value: "422"}}}
		if err := p.WriteFile(file); err != nil {
			t.Fatal(err)
		}
		return file
	}
	a, b, c := write("a", "http://127.0.0.1:8080"), write("b", "http://127.0.0.1:8081", "http://127.0.0.1:8082"), write("c", "http://127.0.0.1:8083")
	text, code := auditRun(t, "matrix", a, b, "--label", "staging="+b, "--label", "prod="+c)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	for _, want := range []string{"| behaviour | http://127.0.0.1:8080 | staging | prod |", "- staging: profile " + b + " (target orders)"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
}
