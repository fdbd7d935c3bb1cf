// Package ginkgorun is the CLI's driver of the suites: it runs a Harness's specs as Ginkgo specs
// from a plain binary, so that `retrysafe run` keeps Ginkgo's label filter, focus, repetition
// (--repeat) and JUnit report. Each spec's body only calls Harness.Env().RunSpec and hands the
// checker's verdict to Ginkgo: a failure fails the spec with its sentences, an unknown verdict
// is a skip whose message starts with "unknown:", a spec that does not apply is a plain skip.
//
// Ginkgo keeps its suite in package globals, so Run resets them (ginkgo/v2/extensions/globals)
// and must not be used from a test binary that runs its own Ginkgo suite; RunT (package
// suites) is the driver for that.
package ginkgorun

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/extensions/globals"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// Options select and shape one run.
type Options struct {
	// Selection is the label filter and focus.
	Selection framework.Selection
	// Repeat runs every selected spec this many times, stopping at the first failure.
	Repeat int
	// Timeout is the overall deadline of the run (0 = none).
	Timeout time.Duration
	// JUnitFile receives Ginkgo's JUnit report when set.
	JUnitFile string
	// Progress receives one line per finished spec (nil = none).
	Progress io.Writer
	// GinkgoLog receives Ginkgo's own console report (nil = discarded).
	GinkgoLog io.Writer
}

// runMu serialises runs: Ginkgo keeps its suite in package globals.
var runMu sync.Mutex

// failRecorder is the testing.T-like value Ginkgo reports an overall failure to.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// specFile is the code location every spec is registered at: Ginkgo orders specs by file and
// line, so each spec's line is its index in the run order (all are registered from this file,
// whose real lines would tie).
const specFile = "retrysafe"

// Run runs the harness's specs with Ginkgo and returns the run's result.
func Run(ctx context.Context, h *framework.Harness, o Options) (*framework.Result, error) {
	if err := framework.CheckLabelFilter(o.Selection.LabelFilter); err != nil {
		return nil, err
	}
	runMu.Lock()
	defer runMu.Unlock()
	globals.Reset()

	env := h.Env()
	specs := env.Specs()
	// The selection is the harness's (the same label-filter and focus semantics as the other
	// drivers, focus over the spec's full text without Ginkgo's suite description); only the
	// selected specs are registered.
	selected, err := o.Selection.Matches(specs)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	outcomes := map[*framework.Spec]*framework.Outcome{}
	register(selected, len(specs), func(sp *framework.Spec, sctx SpecContext) {
		c, cancel := context.WithCancelCause(sctx)
		defer cancel(nil)
		stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
		defer stop()
		out := env.RunSpec(c, sp)
		mu.Lock()
		outcomes[sp] = out
		mu.Unlock()
		if sctx.Err() != nil {
			return // Ginkgo gave up on the spec: it must not act on a suite that moved on
		}
		switch out.Verdict() {
		case reports.Fail:
			Fail(out.Message())
		case reports.Unknown:
			Skip("unknown: " + out.Message())
		case reports.Skipped:
			Skip(out.Message())
		}
	})
	var report types.Report
	var junitErr error
	ReportAfterSuite("retrysafe", func(r Report) {
		report = r
		if o.JUnitFile != "" {
			junitErr = writeJUnit(r, o.JUnitFile)
		}
	})
	if o.Progress != nil {
		ReportAfterEach(func(r SpecReport) {
			mu.Lock()
			out := outcomes[specOf(specs, r)]
			mu.Unlock()
			if out != nil && !notSelected(r) {
				framework.WriteProgress(o.Progress, out)
			}
		})
	}
	sc, rc, err := configure(o, env.Settings.Seed)
	if err != nil {
		return nil, err
	}
	restore := swapGinkgoOutput(o.GinkgoLog)
	RunSpecs(&failRecorder{}, "retrysafe", sc, rc)
	restore()
	if junitErr != nil {
		return nil, junitErr
	}
	return result(h, specs, outcomes, report), nil
}

// register registers every spec, in order, each under a Describe of its property.
func register(specs []*framework.Spec, n int, body func(*framework.Spec, SpecContext)) {
	var current string
	var group []*framework.Spec
	flush := func() {
		if len(group) == 0 {
			return
		}
		g := group
		p := g[0].Property
		// Ginkgo shuffles top-level containers by the seed; a priority per container (higher runs
		// first) keeps the registry's order.
		Describe(p.Name, Label(p.AllLabels()...), location(g[0]), SpecPriority(n-g[0].Index), func() {
			for _, sp := range g {
				It(sp.Text, location(sp), Label(sp.Extra...), func(ctx SpecContext) { body(sp, ctx) })
			}
		})
		group = nil
	}
	for _, sp := range specs {
		if sp.Property.Name != current {
			flush()
			current = sp.Property.Name
		}
		group = append(group, sp)
	}
	flush()
}

// location is the code location a spec is registered at (see specFile).
func location(sp *framework.Spec) types.CodeLocation {
	return types.CodeLocation{FileName: specFile, LineNumber: sp.Index + 1}
}

// configure sets Ginkgo's suite and reporter configuration.
func configure(o Options, seed int64) (types.SuiteConfig, types.ReporterConfig, error) {
	sc, rc := GinkgoConfiguration()
	sc.RandomSeed = seed
	sc.Timeout = o.Timeout
	if sc.Timeout <= 0 {
		sc.Timeout = 24 * time.Hour
	}
	if o.Repeat > 1 {
		sc.MustPassRepeatedly = o.Repeat
	}
	rc.NoColor = true
	rc.Succinct = true
	if o.JUnitFile != "" {
		if err := os.MkdirAll(filepath.Dir(o.JUnitFile), 0o755); err != nil {
			return sc, rc, err
		}
	}
	return sc, rc, nil
}

// specOf finds the spec of a Ginkgo report by its location.
func specOf(specs []*framework.Spec, r types.SpecReport) *framework.Spec {
	if r.LeafNodeLocation.FileName != specFile {
		return nil
	}
	if i := r.LeafNodeLocation.LineNumber - 1; i >= 0 && i < len(specs) {
		return specs[i]
	}
	return nil
}

// notSelected reports a spec that the label filter or focus left out (skipped without a
// message, as opposed to a spec that skipped itself with a reason).
func notSelected(r types.SpecReport) bool {
	return r.State.Is(types.SpecStateSkipped) && r.Failure.Message == ""
}

// result builds the run's result from the outcomes, in Ginkgo's run order, and says whether
// an interrupt or the deadline cut the run short. specs are all the specs (their index is their
// registered line).
func result(h *framework.Harness, specs []*framework.Spec, outcomes map[*framework.Spec]*framework.Outcome, gr types.Report) *framework.Result {
	var ran []*framework.Outcome
	incomplete := ""
	for _, r := range gr.SpecReports {
		sp := specOf(specs, r)
		if sp == nil || r.LeafNodeType != types.NodeTypeIt || notSelected(r) {
			continue
		}
		out := outcomes[sp]
		if r.State.Is(types.SpecStateInterrupted | types.SpecStateAborted | types.SpecStateTimedout) {
			incomplete = "interrupted: " + firstLine(r.Failure.Message)
			if r.State.Is(types.SpecStateTimedout) {
				incomplete = "deadline: " + firstLine(r.Failure.Message)
			}
			if out == nil {
				out = &framework.Outcome{Spec: sp, Interrupted: true}
				out.Result.Unknown = []string{incomplete}
			}
		}
		if out != nil {
			ran = append(ran, out)
		}
	}
	// An interrupt or the deadline between two specs leaves no interrupted spec behind, only
	// skipped ones that look unselected; Ginkgo names the reason on the suite.
	for _, why := range gr.SpecialSuiteFailureReasons {
		if incomplete == "" && (strings.Contains(why, "Interrupted") || strings.Contains(why, "Timeout")) {
			incomplete = why
		}
	}
	return h.Result(ran, incomplete)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
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
