package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// TestMatrixOverMutants probes the correct API and three mutants and prints them side by side:
// the mutants' cells are marked unsafe where their bug shows, and nowhere else.
func TestMatrixOverMutants(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, m := range []reference.Mutant{reference.MutantNone, reference.MutantNoFingerprint, reference.MutantUnscoped, reference.MutantLoser500} {
		s := probetest.Start(t, m)
		file := filepath.Join(dir, s.Name+".json")
		if text, code := auditRun(t, "probe", "--target", s.TargetFile, "--out", file); code != exitOK {
			t.Fatalf("probe %s: exit %d:\n%s", s.Name, code, text)
		}
		files = append(files, file)
	}
	page := filepath.Join(dir, "matrix.html")
	text, code := auditRun(t, append([]string{"matrix", "--html", page}, files...)...)
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
	bad := filepath.Join(t.TempDir(), "notes.json")
	os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644)
	for _, args := range [][]string{{"matrix", bad}, {"matrix", filepath.Join(t.TempDir(), "missing.json")}, {"matrix"}} {
		if text, code := auditRun(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2:\n%s", args, code, text)
		}
	}
}
