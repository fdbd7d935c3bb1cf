package embedtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
)

// The team's own Ginkgo suite, in the same test binary as TestRunT: RunT must not touch
// Ginkgo's runner or globals, so both run.
func TestTeamSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "the team's own suite")
}

var _ = Describe("a team's own spec", func() {
	It("runs beside retrysafe", func() {
		Expect(1 + 1).To(Equal(2))
	})

	It("calls RunT with GinkgoT()", func() {
		file := managedTarget(GinkgoT(), GinkgoT().TempDir())
		run := suites.RunT(GinkgoT(), file, suites.Select("property:replay || property:dropped-response", ""))
		Expect(verdicts(run)).To(Equal(map[string]reports.Verdict{"replay": reports.Pass, "dropped-response": reports.Pass}))
	})
})

// binary is the retrysafe binary the lifecycle starts, built once per test binary.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retrysafe-embedtest-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "retrysafe")
	build := exec.Command("go", "build", "-o", binary, "github.com/retrysafe/retrysafe/cmd/retrysafe")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build ./cmd/retrysafe: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tb is what managedTarget needs of *testing.T and GinkgoT().
type tb interface {
	Helper()
	Fatalf(string, ...any)
}

// managedTarget writes a target file that starts the reference API on SQLite in dir through a
// lifecycle (the embedded reference-managed.yaml's shape, with a short retention and lock
// timeout), and returns its path.
func managedTarget(t tb, dir string) string {
	t.Helper()
	src, err := os.ReadFile("../../targets/examples/reference-managed.yaml")
	if err != nil {
		t.Fatalf("%v", err)
	}
	file := filepath.Join(dir, "managed.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	for name, v := range map[string]string{
		"RETRYSAFE_BIN": binary, "RETRYSAFE_URL": "http://" + freeAddr(t), "RETRYSAFE_STORE": "sqlite",
		"RETRYSAFE_DSN": filepath.Join(dir, "reference.db"), "RETRYSAFE_RETENTION": "30s", "RETRYSAFE_LOCK_TIMEOUT": "2s",
	} {
		os.Setenv(name, v) // read when RunT loads the file; each test sets its own
	}
	return file
}

// verdicts maps each property of a run to its verdict.
func verdicts(run *reports.Run) map[string]reports.Verdict {
	out := map[string]reports.Verdict{}
	for _, p := range run.Properties {
		out[p.Name] = p.Verdict
	}
	return out
}

// failures lists the failing and unknown properties with their reasons.
func failures(run *reports.Run) string {
	var b strings.Builder
	for _, p := range run.Properties {
		if p.Verdict == reports.Fail || p.Verdict == reports.Unknown {
			b.WriteString(p.Name + ": " + p.Reason + "\n")
			for _, s := range p.Specs {
				b.WriteString("  " + s.Text + ": " + s.Failure + "\n")
			}
		}
	}
	return b.String()
}
