package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

// The command-line client example passes on the reference client, run as a user runs it: every
// client property, the second operation with the first one's reference asked for through the
// environment, the restart scenario killing and restarting the process, and uncertain-stays-pending
// running it again after it reported an operation pending.
func TestClientCLIExamplePasses(t *testing.T) {
	t.Parallel()
	bin := buildRetrysafe(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--target", filepath.Join("..", "..", "targets", "examples", "client-cli.yaml"),
		"--report-dir", filepath.Join(dir, "report"))
	cmd.Env = append(cmd.Environ(), "RETRYSAFE_BIN="+bin)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("retrysafe run --target client-cli.yaml: %v\n%s", err, out)
	}
	run := readReport(t, filepath.Join(dir, "report"))
	if v, n := run.Verdict(), len(run.Properties); v != reports.Pass || n != 10 {
		t.Errorf("verdict %s over %d properties, want pass over the 10 client properties", v, n)
	}
	for _, p := range run.Properties {
		if p.Verdict != reports.Pass {
			t.Errorf("%s: %s (%s)", p.Name, p.Verdict, p.Reason)
		}
	}
	if len(pidsRunning(bin)) > 0 {
		t.Errorf("client processes outlived the run: %v", pidsRunning(bin))
	}
}
