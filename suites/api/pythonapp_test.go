package api

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// TestPythonAppCrashAfterClaim: the lifecycle example for an app that is not the reference
// (targets/examples/python-app-managed.yaml: testdata/pyapp/app.py, Python's standard library
// only) is started, SIGKILLed between claim and write and restarted by the harness, and passes
// crash-after-claim; the run finds its raw-header keys and sends them bare, saying so.
func TestPythonAppCrashAfterClaim(t *testing.T) {
	run := runPythonApp(t, "2")
	if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Pass {
		t.Fatalf("crash-after-claim: %+v", run.Properties)
	}
	kills := 0
	for _, f := range run.Faults {
		if f.Kind == "kill" && f.Action == "inject" {
			kills++
		}
	}
	if kills != 1 {
		t.Errorf("%d kills, want the one between claim and write: %+v", kills, run.Faults)
	}
	if len(run.Target.Deviations) != 1 || !strings.HasPrefix(run.Target.Deviations[0], "quoted and bare forms are distinct keys") {
		t.Errorf("deviations = %q, want the key forms'", run.Target.Deviations)
	}
}

// TestPythonAppStuckClaimFails: the same app with a lock timeout far longer than the 2s the file
// declares leaves the killed claim in flight: crash-after-claim fails with stuck-key, so the pass
// above rests on the takeover.
func TestPythonAppStuckClaimFails(t *testing.T) {
	run := runPythonApp(t, "600")
	p := run.Properties[0]
	if p.Verdict != reports.Fail || len(p.Specs) != 1 || !slices.Contains(kindsOf(p.Specs[0]), reports.KindStuckKey) {
		t.Fatalf("crash-after-claim with a 600s lock: %s %+v, want stuck-key", p.Verdict, p.Specs)
	}
}

// runPythonApp runs crash-after-claim against the Python app started with lock (its
// --lock-timeout, in seconds) on a free port and its own SQLite file.
func runPythonApp(t *testing.T, lock string) *reports.Run {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("PYAPP_URL", "http://"+addr)
	t.Setenv("PYAPP_DB", filepath.Join(t.TempDir(), "orders.db"))
	t.Setenv("PYAPP_LOCK_TIMEOUT", lock)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log lockedLog
	h, err := framework.OpenFile(ctx, "../../targets/examples/python-app-managed.yaml", framework.WithLog(&log),
		framework.WithSettings(framework.Settings{Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Run(ctx, framework.Selection{LabelFilter: "property:crash-after-claim"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}
