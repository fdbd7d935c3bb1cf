package embedtest

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets"
)

// freeAddr returns a free 127.0.0.1 port for the lifecycle to listen on.
func freeAddr(t tb) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// RunT from a plain TestX gets every fault property the target file allows: dropped-response
// through the embedded Toxiproxy, and the crash properties through the lifecycle.
func TestRunT(t *testing.T) {
	file := managedTarget(t, t.TempDir())
	run := suites.RunT(t, file, suites.Select("property:dropped-response || property:crash-after-claim || property:crash-under-load", ""))
	want := map[string]reports.Verdict{"dropped-response": reports.Pass, "crash-after-claim": reports.Pass, "crash-under-load": reports.Pass}
	if got := verdicts(run); !maps.Equal(got, want) {
		t.Fatalf("verdicts %v, want %v:\n%s", got, want, failures(run))
	}
	kills := 0
	for _, f := range run.Faults {
		if f.Kind == "kill" && f.Action == "inject" {
			kills++
		}
	}
	if kills < 1+5 {
		t.Errorf("%d kills in the report's faults, want at least 6 (crash-after-claim's and crash-under-load's)", kills)
	}
}

// RunT refuses a remote target without the opt-in, before sending anything.
func TestRunTRefusesRemote(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "remote.yaml")
	doc := "instances: [\"https://api.example.invalid\"]\noperations:\n  - {name: orders, path: /v1/orders, body: '{\"ref\": \"{{.Ref}}\"}'}\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	target, err := targets.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	_, err = suites.Open(t.Context(), target)
	if !errors.Is(err, suites.ErrRemote) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("Open = %v, want ErrRemote", err)
	}
	ft := &fakeT{}
	suites.RunT(ft, file)
	ft.cleanUp()
	if !ft.fatal || !strings.Contains(ft.msg, "refusing to test") {
		t.Errorf("RunT on a remote target: fatal %v, %q; want a refusal", ft.fatal, ft.msg)
	}
}

// fakeT records what RunT reports.
type fakeT struct {
	fatal    bool
	msg      string
	cleanups []func()
}

func (f *fakeT) Helper()                         {}
func (f *fakeT) Logf(format string, args ...any) {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.msg += fmt.Sprintf(format, args...)
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = true
	f.msg += fmt.Sprintf(format, args...)
}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// cleanUp runs the registered clean-ups, last first, as the test's end would.
func (f *fakeT) cleanUp() {
	for _, fn := range slices.Backward(f.cleanups) {
		fn()
	}
}
