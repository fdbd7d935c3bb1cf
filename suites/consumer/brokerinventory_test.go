package consumer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// A whole `retrysafe run --consumer amqp` (and nats) passes every applicable property, and
// leaves nothing on the brokers (RabbitMQ's queues and exchanges, JetStream's streams) and
// nothing running. The run's own topology is named in its report (the broker's redeliveries
// name the queue or durable consumer); anything else new under the prefix of the names
// `run --consumer` makes from its run id would be a leftover too.
func TestRunLeavesNothingOnBrokers(t *testing.T) {
	t.Parallel()
	built := buildBrokerConsumer(t)
	for _, transport := range []string{"amqp", "nats"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			bin := copyBinary(t, built) // its own path: the processes it leaves are its own
			before := takeInventory(t)
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--consumer", transport, "--max-wait", "10s", "--report-dir", dir)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("retrysafe run --consumer %s: %v, want every applicable property to pass:\n%s", transport, err, lastLines(string(out), 40))
			}
			after := takeInventory(t)
			run, err := reports.ReadJSON(filepath.Join(dir, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			// Its names carry its run id: other runs beside it (CI runs some at once) are theirs.
			if left := after.Since(before).WithPrefix(broker.DefaultNamePrefix + "-run-" + run.RunID + "-"); !left.Empty() {
				t.Errorf("left on the brokers after the run: %s", left)
			}
			names := runTopology(t, filepath.Join(dir, "report.json"), transport)
			for _, n := range names {
				if slices.Contains(after.Queues, n) || slices.Contains(after.Exchanges, n) || slices.Contains(after.Streams, n) {
					t.Errorf("the run's %s is still on the broker", n)
				}
			}
			if pids := processesRunning(t, bin); len(pids) > 0 {
				t.Errorf("processes of %s still running after the run: %v", bin, pids)
			}
		})
	}
}

// takeInventory lists both brokers (RabbitMQ through rabbitmqctl, as root on this machine).
func takeInventory(t *testing.T) broker.Inventory {
	t.Helper()
	inv, err := brokerInventory(t.Context())
	if err != nil {
		t.Fatalf("inventory of the brokers (needs rabbitmqctl and NATS JetStream): %v", err)
	}
	return inv
}

// brokerInventory lists the brokers of kinds (default both), NATS at $RETRYSAFE_NATS_URL when set.
func brokerInventory(ctx context.Context, kinds ...broker.Kind) (broker.Inventory, error) {
	var opts []broker.Option
	if u := os.Getenv("RETRYSAFE_NATS_URL"); u != "" {
		opts = append(opts, broker.WithNATSURL(u))
	}
	if len(kinds) > 0 {
		opts = append(opts, broker.WithKinds(kinds...))
	}
	return broker.TakeInventory(ctx, opts...)
}

// runTopology returns the names of the topology a run used, from the broker redeliveries in its
// report: the queue and its exchange, or the stream.
func runTopology(t *testing.T, report, transport string) []string {
	t.Helper()
	f, err := os.Open(report)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := reports.DecodeJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range run.Faults {
		if ev.Action != actionObserve || ev.Kind != kindBrokerRedelivery {
			continue
		}
		switch transport {
		case "amqp":
			q := strings.TrimPrefix(ev.Target, "amqp queue ")
			names = append(names, q, strings.TrimSuffix(q, "-q")+"-x")
		case "nats":
			stream, _, _ := strings.Cut(strings.TrimPrefix(ev.Target, "nats durable "), "/")
			names = append(names, stream)
		}
	}
	if len(names) == 0 {
		t.Fatalf("the report names no broker redelivery: which topology the run used cannot be told")
	}
	return names
}

// processesRunning returns the ids of the processes whose program is bin.
func processesRunning(t *testing.T, bin string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			pids = append(pids, pid)
		}
	}
	return pids
}

// copyBinary copies the program bin into a folder of t.
func copyBinary(t *testing.T, bin string) string {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "retrysafe")
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
