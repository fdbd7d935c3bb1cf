package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// The black-box example target files (a queue worker with no HTTP port on RabbitMQ's default
// exchange, failed and slowed through message headers; a JetStream push consumer that creates its
// own stream, failed through a hook that arms any event's next handling and slowed through its
// environment) pass on the reference consumer, run as a user runs them, with no property skipped
// but crash-after-ack (which defers to crash-under-delivery without a downstream), the hook tried
// before and after the effect, and leave nothing on the brokers. Every heal in their reports
// follows an inject of the same fault.
func TestBlackBoxExamplesPass(t *testing.T) {
	t.Parallel()
	bin := buildRetrysafe(t)
	for _, tc := range []struct {
		file, nameVar string
		kind          broker.Kind
	}{
		{"consumer-amqp-blackbox.yaml", "RETRYSAFE_AMQP_QUEUE", broker.AMQP},
		{"consumer-nats-blackbox.yaml", "RETRYSAFE_NATS_STREAM", broker.NATS},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			name := broker.UniqueName("example")
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--target", filepath.Join("..", "..", "targets", "examples", tc.file),
				"--report-dir", filepath.Join(dir, "report"))
			cmd.Env = append(cmd.Environ(), "RETRYSAFE_BIN="+bin, "RETRYSAFE_DB="+filepath.Join(dir, "consumer.db"), tc.nameVar+"="+name)
			if tc.kind == broker.NATS {
				cmd.Env = append(cmd.Env, "RETRYSAFE_URL="+frameworktest.ReservedURLs(t, 2), "RETRYSAFE_REUSE_PORT=true")
			}
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.WaitDelay = 30 * time.Second
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("retrysafe run --target %s: %v\n%s", tc.file, err, out)
			}
			run, err := reports.ReadJSON(filepath.Join(dir, "report", "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if v := run.Verdict(); v != reports.Pass {
				t.Errorf("verdict %s, want pass", v)
			}
			for _, p := range skippedOrMissing(run) {
				t.Errorf("report.json: %s", p)
			}
			for _, p := range unmatchedHeals(run) {
				t.Errorf("report.json: %s", p)
			}
			inv, err := broker.TakeInventory(context.WithoutCancel(ctx), broker.WithKinds(tc.kind))
			if err != nil {
				t.Fatalf("inventory: %v", err)
			}
			if left := inv.WithPrefix(name); !left.Empty() {
				t.Errorf("the run left %s on the broker", left)
			}
		})
	}
}

// skippedOrMissing lists what a black-box run should not have: a skipped spec other than
// crash-after-ack's deferring to crash-under-delivery, and a failure point of the fail_next hook
// not tried.
func skippedOrMissing(run *reports.Run) []string {
	var out []string
	points := map[string]bool{}
	for _, p := range run.Properties {
		for _, sp := range p.Specs {
			if sp.Verdict == reports.Skipped && !(p.Name == "crash-after-ack" && strings.Contains(sp.Failure, "crash-under-delivery")) {
				out = append(out, fmt.Sprintf("%s skipped: %s: %s", p.Name, sp.Text, sp.Failure))
			}
			for _, point := range []string{"before-effect", "after-effect"} {
				if p.Name == "failed-then-redelivered" && sp.Verdict == reports.Pass && strings.Contains(sp.Text, "("+point+")") {
					points[point] = true
				}
			}
		}
	}
	if len(points) != 2 {
		out = append(out, fmt.Sprintf("failed-then-redelivered passed at %d of the 2 failure points (before-effect, after-effect)", len(points)))
	}
	return out
}
