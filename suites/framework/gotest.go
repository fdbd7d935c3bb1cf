package framework

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

// T is what RunT reports to: *testing.T, *testing.B and Ginkgo's GinkgoT() all satisfy it.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// subtests is implemented by *testing.T: each spec then runs as a subtest.
type subtests interface {
	Run(name string, f func(t *testing.T)) bool
}

// RunT runs the properties against the target file from a team's own `go test` (or a Ginkgo
// spec, with GinkgoT()): the same specs as `retrysafe run`, faults included (dropped-response
// through the embedded Toxiproxy; the crash properties when the file declares a lifecycle),
// with the same guard rails for a remote target (options: AllowRemote). Every failing spec is a
// test error carrying its anomalies and evidence; a verdict left unknown is an error too (the
// run could not establish that retries are safe); a spec that does not apply is logged. With a
// *testing.T each spec is a subtest. Select picks specs with the CLI's label-filter syntax.
// RunT never touches Ginkgo's runner, so it coexists with a team's own Ginkgo suite.
func RunT(t T, targetFile string, opts ...Option) *reports.Run {
	t.Helper()
	target, err := targets.Load(targetFile)
	if err != nil {
		t.Fatalf("retrysafe: %v", err)
		return nil
	}
	t.Cleanup(func() { target.Close() })
	return RunTarget(t, target, opts...)
}

// RunTarget is RunT for a target already loaded.
func RunTarget(t T, target *targets.Target, opts ...Option) *reports.Run {
	t.Helper()
	ctx, cancel := context.WithCancel(contextOf(t))
	defer cancel()
	h, err := Open(ctx, target, opts...)
	if err != nil {
		t.Fatalf("retrysafe: %v", err)
		return nil
	}
	defer h.Close()
	specs, err := h.Specs(h.o.selection)
	if err != nil {
		t.Fatalf("retrysafe: %v", err)
		return nil
	}
	var outcomes []*Outcome
	for _, sp := range specs {
		if ctx.Err() != nil {
			break
		}
		if r, ok := t.(subtests); ok {
			r.Run(sp.FullText(), func(st *testing.T) { outcomes = append(outcomes, runOne(st, ctx, h, sp)) })
			continue
		}
		outcomes = append(outcomes, runOne(t, ctx, h, sp))
	}
	incomplete := ""
	if ctx.Err() != nil {
		incomplete = stopReason(ctx)
	}
	return h.Result(outcomes, incomplete).Report
}

// runOne runs one spec and reports its verdict to t.
func runOne(t T, ctx context.Context, h *Harness, sp *Spec) *Outcome {
	t.Helper()
	o := h.env.RunSpec(ctx, sp)
	WriteProgress(h.o.progress, o)
	switch o.Verdict() {
	case reports.Fail:
		t.Errorf("retrysafe: %s:\n%s%s", sp.FullText(), o.Message(), evidenceText(o.Evidence))
	case reports.Unknown:
		t.Errorf("retrysafe: %s: verdict unknown: %s%s", sp.FullText(), o.Message(), evidenceText(o.Evidence))
	case reports.Skipped:
		t.Logf("retrysafe: %s: skipped: %s", sp.FullText(), o.Message())
	}
	return o
}

// contextOf returns the test's context when it has one (testing.T since Go 1.24), else one
// that ends with the test's clean-up.
func contextOf(t T) context.Context {
	if c, ok := t.(interface{ Context() context.Context }); ok {
		return c.Context()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

func evidenceText(ev *reports.Evidence) string {
	if ev == nil {
		return ""
	}
	var b strings.Builder
	if ev.Message != "" {
		b.WriteString("\n" + ev.Message)
	}
	for name, n := range ev.Counts {
		b.WriteString("\n" + name + " = " + strconv.Itoa(n))
	}
	for _, a := range ev.Attempts {
		b.WriteString("\n" + a)
	}
	if ev.Repro != "" {
		b.WriteString("\nrepro: " + ev.Repro)
	}
	return b.String()
}
