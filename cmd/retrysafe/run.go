package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newRunCmd) }

// runFlags are the flags of `retrysafe run`.
type runFlags struct {
	target    string
	reportDir string
	opts      suites.RunOptions
	settings  suites.Settings
	strict    bool
	store     string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the conformance properties against a target",
		Long: `Run the conformance properties against the API a target file describes, or, without
--target, against retrysafe's own reference API (started as a subprocess on SQLite in a temporary
directory, with a short retention and lock timeout so that no property is skipped).

Prints progress per spec, then a table property x verdict with the evidence of each failure,
and writes junit.xml, report.json and summary.md into --report-dir.

Exit codes: 0 every checked property holds; 1 at least one violation; 2 the run could not
start (bad file or flags, malformed label filter, unreachable target); 3 incomplete
(interrupted, overall deadline, or a verdict left unknown) with no violation.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "target file (default: start and test the reference API)")
	fl.StringVar(&f.opts.LabelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'property:race || property:replay' or '!wait:retention'")
	fl.StringVar(&f.opts.Focus, "focus", "", "run only specs whose text matches this regular expression")
	fl.StringVar(&f.reportDir, "report-dir", "retrysafe-report", "folder for junit.xml, report.json and summary.md")
	fl.Int64Var(&f.settings.Seed, "seed", 0, "seed of the run's random choices (default: time-based; printed)")
	fl.StringVar(&f.settings.KeyPrefix, "key", "", "prefix of every idempotency key (default: rs-<run id>); reuses a failed run's keys")
	fl.IntVar(&f.opts.Repeat, "repeat", 1, "run every selected spec N times, stopping at the first failure (for rare races)")
	fl.BoolVar(&f.strict, "strict", false, "treat skipped properties as failures")
	fl.DurationVar(&f.opts.Timeout, "timeout", 30*time.Minute, "overall deadline of the run")
	fl.DurationVar(&f.settings.MaxWait, "max-wait", 30*time.Second, "longest a property may wait for a key to expire")
	fl.IntVar(&f.settings.ReplayN, "replays", 10, "sequential sends of one request in the replay property")
	fl.IntVar(&f.settings.RaceK, "burst", 16, "same-key requests per burst in the race property")
	fl.IntVar(&f.settings.RaceRounds, "rounds", 20, "bursts per operation in the race property")
	fl.DurationVar(&f.settings.AttemptTimeout, "attempt-timeout", 10*time.Second, "timeout of one request")
	fl.StringVar(&f.store, "store", "sqlite", "store of the reference API started without --target: memory, sqlite, postgres, redis")
	return cmd
}

func runRun(cmd *cobra.Command, f *runFlags) error {
	out := cmd.OutOrStdout()
	if err := suites.CheckLabelFilter(f.opts.LabelFilter); err != nil {
		return usageErr("%v", err)
	}
	var procs faults.Processes
	defer procs.StopAll(5 * time.Second)
	t, err := loadRunTarget(cmd.Context(), f, &procs)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := checkReachable(cmd.Context(), t); err != nil {
		return usageErr("%v", err)
	}
	f.settings.Repro = reproBase(f)
	env := suites.NewEnv(t, f.settings)
	defer env.Close()
	fmt.Fprintf(out, "retrysafe: testing %s (%s), run %s, seed %d\n", t.Name, t.Instances[0].URL.Redacted(), env.Settings.RunID, env.Settings.Seed)
	if err := os.MkdirAll(f.reportDir, 0o755); err != nil {
		return usageErr("--report-dir: %v", err)
	}
	opts := f.opts
	opts.JUnitFile = filepath.Join(f.reportDir, "junit.xml")
	opts.Progress = out
	ginkgoLog, err := os.Create(filepath.Join(f.reportDir, "ginkgo.log"))
	if err == nil {
		defer ginkgoLog.Close()
		opts.GinkgoLog = ginkgoLog
	}
	run, err := suites.Run(env, opts)
	if err != nil {
		return usageErr("%v", err)
	}
	run.Tool = "retrysafe"
	run.ExitCode = exitCodeOf(run, f.strict)
	if err := writeReports(f.reportDir, run); err != nil {
		return &exitError{exitIncomplete, err}
	}
	fmt.Fprintln(out)
	reports.WriteTable(out, run)
	fmt.Fprintf(out, "\nreports: %s\n", f.reportDir)
	if run.ExitCode != exitOK {
		return &exitError{run.ExitCode, fmt.Errorf("verdict: %s", verdictWord(run, f.strict))}
	}
	return nil
}

// loadRunTarget loads --target, or starts the reference API and describes it.
func loadRunTarget(ctx context.Context, f *runFlags, procs *faults.Processes) (*targets.Target, error) {
	if f.target != "" {
		t, err := targets.Load(f.target)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		return t, nil
	}
	t, err := startReference(ctx, procs, f.store)
	if err != nil {
		return nil, usageErr("start the reference API: %v", err)
	}
	return t, nil
}

// exitCodeOf maps a run's verdicts to the exit code.
func exitCodeOf(run *reports.Run, strict bool) int {
	c := run.Counts()
	switch {
	case c[reports.Fail] > 0 || (strict && c[reports.Skipped] > 0):
		return exitViolation
	case c[reports.Unknown] > 0 || !run.Complete:
		return exitIncomplete
	}
	return exitOK
}

func verdictWord(run *reports.Run, strict bool) string {
	switch exitCodeOf(run, strict) {
	case exitViolation:
		return "violations found"
	case exitIncomplete:
		return "incomplete"
	}
	return "pass"
}

// writeReports writes report.json and summary.md (junit.xml is written by Ginkgo).
func writeReports(dir string, run *reports.Run) error {
	if err := reports.WriteJSON(filepath.Join(dir, "report.json"), run); err != nil {
		return err
	}
	return reports.WriteMarkdown(filepath.Join(dir, "summary.md"), run)
}

// reproBase is the command line that reruns this run, to which a failure adds --focus,
// --seed and --key.
func reproBase(f *runFlags) string {
	s := "retrysafe run"
	if f.target != "" {
		s += " --target " + f.target
	} else if f.store != "sqlite" {
		s += " --store " + f.store
	}
	return s
}
