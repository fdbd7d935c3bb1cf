package suites

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/extensions/globals"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"github.com/retrysafe/retrysafe/reports"
)

// RunOptions select and shape one run of the properties.
type RunOptions struct {
	// LabelFilter is a Ginkgo label filter, e.g. "property:race || property:replay".
	LabelFilter string
	// Focus is a regular expression over spec texts.
	Focus string
	// Repeat runs every selected spec this many times, stopping at the first failure.
	Repeat int
	// Timeout is the overall deadline of the run (0 = none).
	Timeout time.Duration
	// JUnitFile receives Ginkgo's JUnit report when set.
	JUnitFile string
	// ReportDir is the folder where properties write files of their own (the load
	// property's load-latency.html). Empty: the folder of JUnitFile, or nowhere.
	ReportDir string
	// Progress receives one line per finished spec (nil = none).
	Progress io.Writer
	// GinkgoLog receives Ginkgo's own console report (nil = discarded).
	GinkgoLog io.Writer
}

// ErrBadOptions marks options that keep a run from starting (e.g. a malformed label filter).
var ErrBadOptions = errors.New("bad run options")

// runMu serialises runs: Ginkgo keeps its suite in package globals.
var runMu sync.Mutex

// failRecorder is the testing.T-like value Ginkgo reports an overall failure to.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// Run runs the selected properties against the environment's target and returns the
// report tree. It does not write files except the JUnit report when asked.
func Run(e *Env, opts RunOptions) (*reports.Run, error) {
	if err := CheckLabelFilter(opts.LabelFilter); err != nil {
		return nil, err
	}
	runMu.Lock()
	defer runMu.Unlock()
	globals.Reset()
	RegisterFailHandler(Fail)

	var report types.Report
	e.reportDir = opts.ReportDir
	if e.reportDir == "" && opts.JUnitFile != "" {
		e.reportDir = filepath.Dir(opts.JUnitFile)
	}
	registerSpecs(e)
	ReportAfterSuite("retrysafe", func(r Report) { report = r })
	if opts.Progress != nil {
		ReportAfterEach(func(r SpecReport) { writeProgress(opts.Progress, r) })
	}

	sc, rc := GinkgoConfiguration()
	sc.LabelFilter = opts.LabelFilter
	if opts.Focus != "" {
		sc.FocusStrings = []string{opts.Focus}
	}
	sc.RandomSeed = e.Settings.Seed
	sc.Timeout = opts.Timeout
	if sc.Timeout <= 0 {
		sc.Timeout = 24 * time.Hour
	}
	if opts.Repeat > 1 {
		sc.MustPassRepeatedly = opts.Repeat
	}
	rc.NoColor = true
	rc.Succinct = true
	rc.JUnitReport = opts.JUnitFile
	if opts.JUnitFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.JUnitFile), 0o755); err != nil {
			return nil, err
		}
	}
	restore := swapGinkgoOutput(opts.GinkgoLog)
	started := time.Now()
	RunSpecs(&failRecorder{}, "retrysafe", sc, rc)
	restore()
	run := buildRun(e, report, started)
	return run, nil
}

// ansi matches terminal colour codes in Ginkgo's messages.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// CheckLabelFilter reports a malformed Ginkgo label filter as ErrBadOptions.
func CheckLabelFilter(expr string) error {
	if expr == "" {
		return nil
	}
	if _, err := types.ParseLabelFilter(expr); err != nil {
		msg := strings.Join(strings.Fields(ansi.ReplaceAllString(err.Error(), "")), " ")
		return fmt.Errorf("%w: --label-filter %q: %s", ErrBadOptions, expr, msg)
	}
	return nil
}

// swapGinkgoOutput sends Ginkgo's console reporter to w (or nowhere) during a run.
func swapGinkgoOutput(w io.Writer) func() {
	old := formatter.ColorableStdOut
	if w == nil {
		w = io.Discard
	}
	formatter.ColorableStdOut = w
	return func() { formatter.ColorableStdOut = old }
}

// writeProgress prints one line per finished spec.
func writeProgress(w io.Writer, r SpecReport) {
	if notSelected(r) {
		return // left out by --label-filter or --focus (or by an interrupt): not news
	}
	verdict := specVerdict(r)
	line := fmt.Sprintf("  %-7s %s (%.1fs)", verdict, strings.TrimPrefix(r.FullText(), suiteText+" "), r.RunTime.Seconds())
	if verdict == reports.Skipped || verdict == reports.Unknown {
		line += ": " + firstLine(r.Failure.Message)
	}
	fmt.Fprintln(w, line)
}

// specVerdict maps a Ginkgo spec state to a verdict.
func specVerdict(r SpecReport) reports.Verdict {
	switch {
	case r.State.Is(types.SpecStatePassed):
		return reports.Pass
	case r.State.Is(types.SpecStateSkipped | types.SpecStatePending):
		for _, en := range r.ReportEntries {
			if en.Name == unknownEntry {
				return reports.Unknown
			}
		}
		return reports.Skipped
	case r.State.Is(types.SpecStateInterrupted | types.SpecStateAborted | types.SpecStateTimedout):
		return reports.Unknown // cut short by an interrupt or the run's deadline: no verdict
	}
	return reports.Fail
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
