package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference"
)

const ordersSpec = "../../targets/openapi/testdata/orders.yaml"

// TestInitFromOpenAPIRuns: the target file written from an OpenAPI document with two idempotent
// operations validates, and `retrysafe run` uses it successfully against an API implementing the
// document (the reference API: /v1/orders and /v1/refunds, bearer tokens).
func TestInitFromOpenAPIRuns(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "orders-target.yaml")
	text, code := auditRun(t, "init", "--openapi", ordersSpec, "--out", file)
	if code != exitOK || !strings.Contains(text, "wrote "+file) {
		t.Fatalf("init: exit %d:\n%s", code, text)
	}
	if problems, _ := targets.Validate(file); len(problems) > 0 {
		t.Fatalf("the written file does not validate: %v", problems)
	}
	t.Setenv("TARGET_URL", probetest.StartWithoutDownstream(t, reference.MutantNone).URL)
	t.Setenv("TENANT_A_BEARER_AUTH", "alice")
	t.Setenv("TENANT_B_BEARER_AUTH", "bob")
	reportDir := filepath.Join(dir, "report")
	text, code = auditRun(t, "run", "--target", file, "--label-filter", "!wait:retention",
		"--report-dir", reportDir, "--rounds", "3", "--replays", "3", "--timeout", "2m")
	if code != exitOK {
		t.Fatalf("run: exit %d, want 0:\n%s", code, text)
	}
	run, err := reports.ReadJSON(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	for _, p := range run.Properties {
		passed[p.Name] = p.Verdict == reports.Pass
	}
	for _, name := range []string{"replay", "race", "mismatch", "tenancy", "keys"} {
		if !passed[name] {
			t.Errorf("property %s did not pass:\n%s", name, text)
		}
	}

	// The same file probes, and the matrix puts the run report beside the profile.
	profile := filepath.Join(dir, "profile.json")
	if text, code := auditRun(t, "probe", "--target", file, "--out", profile); code != exitOK {
		t.Fatalf("probe: exit %d:\n%s", code, text)
	}
	text, code = auditRun(t, "matrix", "--label", "orders-api="+filepath.Join(reportDir, "report.json"), "--label", "probed="+profile)
	t.Log(text)
	if code != exitOK {
		t.Fatalf("matrix: exit %d:\n%s", code, text)
	}
	for _, want := range []string{"| behaviour | orders-api | probed |", "| `mismatch_status` | 422 | 422 |",
		"| `property replay` | pass | – |", "orders-api: run report"} {
		if !strings.Contains(text, want) {
			t.Errorf("matrix lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "**✗") || strings.Contains(text, "Unsafe (") {
		t.Errorf("the correct API has unsafe cells:\n%s", text)
	}
}

func TestInitStarter(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starter.yaml")
	if text, code := auditRun(t, "init", "--out", file); code != exitOK {
		t.Fatalf("init: exit %d:\n%s", code, text)
	}
	if problems, _ := targets.Validate(file); len(problems) > 0 {
		t.Errorf("the starter does not validate: %v", problems)
	}
	if text, code := auditRun(t, "init", "--out", file); code != exitUsage || !strings.Contains(text, "--force") {
		t.Errorf("overwriting: exit %d, want 2 suggesting --force:\n%s", code, text)
	}
	if text, code := auditRun(t, "init", "--out", "-"); code != exitOK || !strings.HasPrefix(text, "# retrysafe target file") {
		t.Errorf("--out -: exit %d:\n%s", code, text)
	}
}

func TestInitBadSpec(t *testing.T) {
	dir := t.TempDir()
	noKeys := filepath.Join(dir, "nokeys.yaml")
	os.WriteFile(noKeys, []byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n"), 0o644)
	for _, args := range [][]string{
		{"init", "--openapi", noKeys, "--out", filepath.Join(dir, "a.yaml")},
		{"init", "--openapi", filepath.Join(dir, "missing.yaml"), "--out", filepath.Join(dir, "b.yaml")},
		{"init", "--all-post", "--out", filepath.Join(dir, "c.yaml")},
	} {
		if text, code := auditRun(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2:\n%s", args, code, text)
		}
	}
}
