package main

// retrysafe merge: the judgement of a sharded load. It checks that the shard files are one
// complete set of one run of one target, merges them into one history and writes the usual
// reports.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/ginkgorun"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newMergeCmd) }

// mergeFlags are the flags of `retrysafe merge`.
type mergeFlags struct {
	target      string
	run         string
	reportDir   string
	allowRemote bool
	noCleanup   bool
	timeout     time.Duration
}

func newMergeCmd() *cobra.Command {
	f := new(mergeFlags)
	cmd := &cobra.Command{
		Use:   "merge FILE|--target FILE DIR...",
		Short: "Judge the shards of a sharded load (run --shard) as one run",
		Long: `Merge the shard files that 'retrysafe run --shard I/N' wrote (found in the folders given, e.g.
a shared volume or the downloaded CI artifacts) and judge them as one load run: the attempts of
every shard merged by time into one history, the business records of every operation counted
once (with one bulk query per operation where the target file declares observer.bulk, else by
its observer, a few at a time), the load checker run over the whole.
Every anomaly names the shard and local sequence number of each of its attempts, so a duplicate
record whose two executions came from two shards (a retry that failed over to another machine)
says so. Then the target file's clean-up runs, as at the end of a normal run.

The set is refused, before anything is counted, when a shard is missing, did not finish (a
.partial file: it died), did not send its share, appears twice (a retried pod), or comes from
another run (--run; default: the run of the files), another shard count or another target file
(SHA-256 of --target), or when the shards' windows overlap less than 80%.

Writes junit.xml, report.json, summary.md, report.html and the load plot of all shards into --report-dir;
every property but load is reported as skipped, with the reason.

Exit codes: 0 the load property holds; 1 a violation; 2 bad flags or target file, or the target
unreachable; 3 the set is refused (the message names each shard at fault) or the verdict is
unknown.

The target file is --target FILE, or the first argument when that is a file, not a folder:
'retrysafe merge t.yaml shards/' is 'retrysafe merge --target t.yaml shards/'.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs := mergeTarget(f, args)
			if len(dirs) == 0 {
				return usageErr("merge needs the folders that hold the shard files, e.g. retrysafe merge t.yaml shards/")
			}
			return runMerge(cmd, f, dirs)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "the target file every shard ran (required: this, or the file as the first argument; its SHA-256 must match the shards')")
	fl.StringVar(&f.run, "run", "", "the run to merge (default: the run of the shard files; files of another run are refused)")
	fl.StringVar(&f.reportDir, "report-dir", "retrysafe-report", "folder for junit.xml, report.json, summary.md, report.html and the load plot")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "count the records of a target that is not on this machine")
	fl.BoolVar(&f.noCleanup, "no-cleanup", false, "leave the run's records: skip the target file's clean-up")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Minute, "overall deadline of the merge")
	return cmd
}

// mergeTarget takes merge's first argument as its target file when --target is not given and
// the argument is a file, not a folder, and returns the folders.
func mergeTarget(f *mergeFlags, args []string) []string {
	if f.target != "" || len(args) == 0 {
		return args
	}
	if st, err := os.Stat(args[0]); err == nil && !st.IsDir() {
		f.target = args[0]
		return args[1:]
	}
	return args
}

func runMerge(cmd *cobra.Command, f *mergeFlags, dirs []string) error {
	out := cmd.OutOrStdout()
	if f.target == "" {
		return usageErr("merge needs the target file the shards ran: retrysafe merge FILE DIR... (or --target FILE)")
	}
	t, sum, err := loadHashed(f.target)
	if err != nil {
		return err
	}
	defer t.Close()
	files, err := shardfile.Find(dirs)
	if err != nil {
		return &exitError{exitIncomplete, err}
	}
	set, problems := shardfile.CheckSet(files, f.run, sum)
	if len(problems) > 0 {
		return &exitError{exitIncomplete, fmt.Errorf("the shard set is refused:\n  %s", strings.Join(problems, "\n  "))}
	}
	m0 := set[0].Manifest
	fmt.Fprintf(out, "retrysafe: merging %d shards of run %s (seed %d), windows overlapping %.0f%%\n", len(set), m0.Run, m0.Seed, 100*shardfile.Overlap(set))
	ctx, sigs := catchSignals(cmd.Context(), cmd.ErrOrStderr())
	defer sigs.stop()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	opts := []framework.Option{framework.WithSettings(framework.Settings{RunID: m0.Run, Seed: m0.Seed, Repro: "retrysafe merge --target " + f.target + " " + strings.Join(dirs, " "), ReproWhole: true}),
		framework.WithoutBaseline(), framework.AllowRemote(f.allowRemote), framework.WithLog(out)}
	if f.noCleanup {
		opts = append(opts, framework.WithoutCleanup())
	}
	h, err := framework.Open(ctx, t, opts...)
	if err != nil {
		return usageErr("%v", err)
	}
	defer h.Close()
	res := h.Merge(ctx, set)
	h.Close()
	run := res.Report
	run.Tool = "retrysafe"
	if sig := sigs.caught(); sig != nil {
		run.Complete, run.Incomplete = false, "interrupted by "+signalName(sig)
	}
	run.ExitCode = exitCodeOf(run, false)
	if err := os.MkdirAll(f.reportDir, 0o755); err != nil {
		return usageErr("--report-dir: %v", err)
	}
	if err := writeReports(f.reportDir, res); err != nil {
		return &exitError{exitIncomplete, err}
	}
	if err := ginkgorun.WriteJUnitOf(run, filepath.Join(f.reportDir, "junit.xml")); err != nil {
		return &exitError{exitIncomplete, err}
	}
	fmt.Fprintln(out)
	reports.WriteTable(out, run)
	fmt.Fprintf(out, "\nreports: %s\n", filepath.Clean(f.reportDir))
	if run.ExitCode != exitOK {
		return &exitError{run.ExitCode, fmt.Errorf("verdict: %s", verdictWord(run, false))}
	}
	return nil
}
