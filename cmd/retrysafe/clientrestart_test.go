package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

// {{.Restart}} is 0 on a client's first start in a scenario and 1 when the harness starts it
// again after killing it, in its command and in its env alike: a CLI whose contract is "after a
// crash, run again to resume only" is described without a shell wrapper of its own. Here a shell
// records both before it becomes the reference client, which passes restart-reuses-key.
func TestClientRestartPlaceholder(t *testing.T) {
	t.Parallel()
	bin := buildRetrysafe(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	target := writeTargetFile(t, dir, fmt.Sprintf(`name: client-restart
clients:
  - name: resumer
    command: [sh, -c, 'echo "arg={{.Restart}} env=$RESTART" >> %s; exec "$0" "$@"', %s, client, --url, "{{.URL}}",
              --state, "{{.State}}", --ref, "{{.Ref}}", --ops, "{{.Ops}}", --attempt-timeout, 1s, --backoff-initial, 100ms, --backoff-max, 300ms]
    env: {RESTART: "{{.Restart}}"}
    timeout: 30s
    failure: {exit_code: 1}
    operations:
      - {name: create-order, path: /v1/orders, identity: [$.ref, $.amount]}
    retry: {attempt_timeout: 1s, backoff: {initial: 100ms, max: 300ms}}
`, starts, bin))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--target", target, "--label-filter", "property:restart-reuses-key",
		"--report-dir", filepath.Join(dir, "report"))
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("retrysafe run: %v\n%s", err, out)
	}
	run := readReport(t, filepath.Join(dir, "report"))
	if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Pass {
		t.Errorf("restart-reuses-key: %+v, want pass", run.Properties)
	}
	got, _ := os.ReadFile(starts)
	if want := "arg=0 env=0\narg=1 env=1\n"; string(got) != want {
		t.Errorf("the starts recorded %q, want %q", got, want)
	}
}
