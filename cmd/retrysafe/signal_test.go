package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
)

// buildRetrysafe returns this command's binary at a path of the test's own
// (frameworktest.Binary: $RETRYSAFE_BIN, or built).
func buildRetrysafe(t *testing.T) string { return frameworktest.Binary(t) }

// pidsRunning returns the processes whose command line mentions bin (a zombie has none).
func pidsRunning(bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(bin)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// testedURL finds the address of the target in the run's first line.
var testedURL = regexp.MustCompile(`retrysafe: testing \S+ \(http://([^)/]+)`)

// alive reports whether kill -0 reaches pid.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestRunInterruptedBySignal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildRetrysafe(t)
	slow := startSlowReference(t, 2*time.Second)
	for _, tc := range []struct {
		name    string
		signals []syscall.Signal
		args    []string
		child   bool // run starts the reference API as its own subprocess
	}{
		{"SIGINT, reference API subprocess", []syscall.Signal{syscall.SIGINT}, []string{"--label-filter", "property:expiry"}, true},
		{"SIGTERM twice, reference API subprocess", []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM},
			[]string{"--label-filter", "property:expiry || property:replay"}, true},
		{"SIGINT, slow target", []syscall.Signal{syscall.SIGINT}, []string{"--label-filter", "property:replay"}, false},
		{"SIGINT during crash-under-load kills and restarts", []syscall.Signal{syscall.SIGINT},
			[]string{"--label-filter", "property:crash-under-load"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "--report-dir", filepath.Join(dir, "report")}, tc.args...)
			if !tc.child {
				args = append(args, "--target", writeTargetFile(t, dir, referenceTarget(slow.URL)))
			}
			code, out, children := runAndSignal(t, bin, args, tc.signals)
			if code != exitIncomplete {
				t.Fatalf("exit %d, want %d:\n%s", code, exitIncomplete, out)
			}
			if tc.child && len(children) == 0 {
				t.Fatalf("found no reference API subprocess while the run was going:\n%s", out)
			}
			for _, pid := range children {
				if alive(pid) {
					t.Errorf("process %d outlived the run", pid)
				}
			}
			if left := pidsRunning(bin); len(left) > 0 {
				t.Errorf("processes of %s still running: %v", bin, left)
			}
			if m := testedURL.FindStringSubmatch(out); tc.child && m != nil {
				if conn, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
					conn.Close()
					t.Errorf("the reference API's port %s is still listening after the run", m[1])
				}
			} else if tc.child {
				t.Errorf("no tested address in the output:\n%s", out)
			}
			run := readReport(t, filepath.Join(dir, "report"))
			if run.Complete || !strings.Contains(run.Incomplete, "interrupted") || run.ExitCode != exitIncomplete {
				t.Errorf("report: complete %v, incomplete %q, exit_code %d", run.Complete, run.Incomplete, run.ExitCode)
			}
			for _, f := range []string{"junit.xml", "summary.md"} {
				if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
					t.Error(err)
				}
			}
			mustContain(t, "output", out, "stopping", "reports:")
		})
	}
}

// runAndSignal starts the binary, waits until it is testing, sends the signals, and returns
// its exit code, its output and the pids of the processes it had started.
func runAndSignal(t *testing.T, bin string, args []string, signals []syscall.Signal) (int, string, []int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !strings.Contains(out.String(), "retrysafe: testing"); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the run did not start testing:\n%s", out.String())
		}
	}
	// A spec is running now. Its subprocess may be between a SIGKILL and its restart at any one
	// moment (crash-under-load): every child seen during a second counts.
	var children []int
	for start := time.Now(); time.Since(start) < time.Second; time.Sleep(20 * time.Millisecond) {
		for _, pid := range pidsRunning(bin) {
			if pid != cmd.Process.Pid && !slices.Contains(children, pid) {
				children = append(children, pid)
			}
		}
	}
	for i, sig := range signals {
		if i > 0 {
			time.Sleep(150 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the run did not end within 30s of the signal:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), children
}
