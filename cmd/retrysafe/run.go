package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/ginkgorun"
	"github.com/retrysafe/retrysafe/suites/selftest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newRunCmd) }

// runFlags are the flags of `retrysafe run`.
type runFlags struct {
	target    string
	reportDir string
	opts      ginkgorun.Options
	settings  framework.Settings
	strict    bool
	store     string
	consumer  string
	client    bool
	chain     string

	shardFlags shardFlags

	allowRemote bool
}

func newRunCmd() *cobra.Command { return runCommand(new(runFlags)) }

// runCommand is `retrysafe run` with its flags bound to f.
func runCommand(f *runFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Run the conformance properties against a target",
		Long: `Run the conformance properties against the API, consumers and clients a target file
describes (FILE, or --target FILE: the same), or, without one, against retrysafe's own
reference API (started as a subprocess on SQLite in a temporary directory, with a short
retention and lock timeout so that no property is skipped); --consumer tests the reference
event consumer instead, --client the reference client (the harness plays the API: a scripted
server that fails on purpose, and judges the keys, bodies and delays of the client's
retries); --chain the reference chain end to end (the reference client against the reference
API with its outbox, its events through RabbitMQ, or --chain nats through NATS JetStream, or
--chain webhook as signed webhooks the harness's receiver passes on, to the reference
consumer, under a fault on every hop). --chain takes its transport as its value (--chain
nats, --chain=nats; a bare --chain is amqp).

While a property waits longer than 3 s (a lock timeout, a retention, a redelivery, a settle),
it says what it waits for and the time left, at most every 5 s: on a terminal as one updating
line, elsewhere (CI, a pipe) as plain lines.

Prints progress per spec, then a table property x verdict with the evidence of each failure,
and writes junit.xml, report.json and summary.md into --report-dir.

With --shard I/N (and --run, --start-at, --out) it is one shard of a sharded load that engines
start on several machines (a Kubernetes Indexed Job, a CI matrix): it sends the baseline, waits
for --start-at, sends its share of the run's load plan (the same plan in every shard: n ≡ I mod N,
and a --load-twins share of each shard's new operations sent again by the next shard at the same
instant) and writes a shard file into --out; 'retrysafe merge' judges all shards as one run. A
shard exits 0 when it sent its share, 2 when it cannot start (a target with a lifecycle,
downstream, storage proxy or hooks, --key, a key format without {{.Run}}, a start later than
--start-at + --start-skew), 3 when it could not send its share.

Key forms: a file that writes neither profile.key_forms nor any operations[].key.form has the
draft's default, the quoted (RFC 8941) and the bare form of a key as one key. Before any property
the run asks the API whether they are (one new key sent quoted, then bare); when they are not (most
libraries key on the raw header value) every key is sent bare and the report's deviations say
"quoted and bare forms are distinct keys (the draft expects one key)": a deviation, never a
failure. A declared key_forms: [quoted, bare] is checked as declared.

Exit codes: 0 every checked property holds; 1 at least one violation; 2 the run could not
start (bad file or flags, malformed label filter, unreachable target); 3 incomplete
(interrupted, overall deadline, or a verdict left unknown) with no violation.`,
		Args:    cobra.ArbitraryArgs, // runArgs says what each is
		PreRunE: func(cmd *cobra.Command, args []string) error { return runArgs(cmd, f, args) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runRun(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "target file, or give it as the argument (default: start and test the reference API)")
	fl.StringVar(&f.opts.Selection.LabelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'property:race || property:replay' or '!wait:retention'")
	fl.StringVar(&f.opts.Selection.Focus, "focus", "", "run only specs whose text matches this regular expression")
	fl.StringVar(&f.reportDir, "report-dir", "retrysafe-report", "folder for junit.xml, report.json and summary.md")
	fl.Int64Var(&f.settings.Seed, "seed", 0, "seed of the run's random choices (default: time-based; printed)")
	fl.StringVar(&f.settings.KeyPrefix, "key", "", "prefix of every idempotency key (default: rs-<run id>); reuses a failed run's keys")
	fl.IntVar(&f.opts.Repeat, "repeat", 1, "run every selected spec N times, stopping at the first failure (for rare races)")
	fl.BoolVar(&f.strict, "strict", false, "treat skipped properties as failures")
	fl.DurationVar(&f.opts.Timeout, "timeout", 30*time.Minute, "overall deadline of the run")
	fl.DurationVar(&f.settings.MaxWait, "max-wait", 30*time.Second, "longest a property may wait for a key to expire (retention waits)")
	fl.DurationVar(&f.settings.MaxRedeliveryWait, "max-redelivery-wait", framework.DefaultMaxRedeliveryWait,
		"longest a consumer property may wait for a redelivery, a drain or a settle (derived from the broker's AckWait/BackOff, redelivery_after, lock_timeout); a spec needing more is skipped")
	fl.IntVar(&f.settings.ReplayN, "replays", 10, "sequential sends of one request in the replay property")
	fl.IntVar(&f.settings.RaceK, "burst", 16, "same-key requests per burst in the race property")
	fl.IntVar(&f.settings.RaceRounds, "rounds", 20, "bursts per operation in the race property")
	fl.IntVar(&f.settings.LoadRate, "load-rate", framework.DefaultLoadRate, "hits per second of the load property")
	fl.DurationVar(&f.settings.LoadDuration, "load-duration", framework.DefaultLoadDuration, "how long the load property sends")
	fl.Float64Var(&f.settings.LoadRetryFraction, "load-retries", framework.DefaultLoadRetryFraction, "fraction of load hits that retry an earlier operation (sequential and concurrent duplicates)")
	fl.IntVar(&f.settings.LoadWorkers, "load-workers", framework.DefaultLoadWorkers, "concurrent senders of the load property")
	fl.StringVar(&f.settings.RaceMode, "race-mode", "", "how a same-key burst is released: lastbyte (raw HTTP/1.1, final bytes together; default for http) or barrier (goroutines on warm connections; used for https)")
	fl.DurationVar(&f.settings.AttemptTimeout, "attempt-timeout", 10*time.Second, "timeout of one request")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "test a target that is not on this machine (a host other than localhost, 127.0.0.0/8 or ::1); burst, rounds, replays and load rate then default to 4, 5, 5 and 20/s")
	fl.StringVar(&f.store, "store", "sqlite", "store of the reference API (or consumer) started without --target: memory, sqlite, postgres, redis")
	fl.StringVar(&f.consumer, "consumer", "", "without --target, start and test the reference event consumer instead of the API: webhook, amqp or nats")
	fl.BoolVar(&f.client, "client", false, "without --target, test the reference client (retrysafe client) against the harness's scripted API instead of the API")
	fl.StringVar(&f.chain, "chain", "", "without --target, test the reference chain end to end: the reference client, API and consumer with the API's events on amqp (the default), nats or webhook")
	fl.Lookup("chain").NoOptDefVal = chainDefault
	bindShardFlags(cmd, &f.shardFlags)
	return cmd
}

func runRun(cmd *cobra.Command, f *runFlags) error {
	if f.shardFlags.shard != "" {
		return runShard(cmd, f)
	}
	for _, name := range []string{"run", "start-at", "start-skew", "out", "load-twins"} {
		if cmd.Flags().Changed(name) {
			return usageErr("--%s belongs to a sharded run: give --shard too", name)
		}
	}
	out := cmd.OutOrStdout()
	if err := framework.CheckLabelFilter(f.opts.Selection.LabelFilter); err != nil {
		return usageErr("%v", err)
	}
	if f.opts.Timeout <= 0 {
		return usageErr("--timeout must be greater than zero")
	}
	switch f.settings.RaceMode {
	case "", framework.RaceModeLastByte, framework.RaceModeBarrier:
	default:
		return usageErr("--race-mode: unknown mode %q (known: %s, %s)", f.settings.RaceMode, framework.RaceModeLastByte, framework.RaceModeBarrier)
	}
	ctx, sigs := catchSignals(cmd.Context(), cmd.ErrOrStderr())
	defer sigs.stop() // deferred first, so it runs last: a second signal cannot cut clean-up short
	deadline := time.Now().Add(f.opts.Timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	tmp, err := os.MkdirTemp("", "retrysafe-run-")
	if err != nil {
		return usageErr("%v", err)
	}
	defer os.RemoveAll(tmp)
	if f.settings.RunID == "" {
		f.settings.RunID = framework.NewRunID() // also in the names of the reference consumer's topology
	}
	t, err := loadRunTarget(f, tmp)
	if err != nil {
		return notStarted(ctx, f, err)
	}
	defer t.Close()
	f.settings.Repro = reproBase(f)
	leaveDefaults(cmd, &f.settings)
	h, err := framework.Open(ctx, t, framework.WithSettings(f.settings), framework.AllowRemote(f.allowRemote), framework.WithLog(out))
	if err != nil {
		return notStarted(ctx, f, usageErr("%v", err))
	}
	defer h.Close()
	env := h.Env()
	fmt.Fprintf(out, "retrysafe: testing %s (%s), run %s, seed %d\n", t.Name, where(t), env.Settings.RunID, env.Settings.Seed)
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
	if err := ctx.Err(); err != nil {
		return notStarted(ctx, f, err)
	}
	opts.Timeout = time.Until(deadline)
	res, err := ginkgorun.Run(ctx, h, opts)
	if err != nil {
		return usageErr("%v", err)
	}
	run := res.Report
	markIncomplete(run, sigs, deadline, f.opts.Timeout)
	h.Close() // clean-up, faults healed, processes stopped before the reports are written
	run.Tool = "retrysafe"
	run.ExitCode = exitCodeOf(run, f.strict)
	if err := writeReports(f.reportDir, res); err != nil {
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

// leaveDefaults leaves the settings whose flags were not given at zero, so that the harness
// picks their defaults (modest ones for a remote target).
func leaveDefaults(cmd *cobra.Command, s *framework.Settings) {
	for flag, v := range map[string]*int{"burst": &s.RaceK, "rounds": &s.RaceRounds, "replays": &s.ReplayN, "load-rate": &s.LoadRate} {
		if !cmd.Flags().Changed(flag) {
			*v = 0
		}
	}
}

// notStarted is the error of a run that ended before the properties ran: exit 3 when a
// signal or the overall deadline stopped it, else err (exit 2).
func notStarted(ctx context.Context, f *runFlags, err error) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, context.DeadlineExceeded):
		return &exitError{exitIncomplete, fmt.Errorf("the overall deadline (--timeout %v) passed before the properties ran: %w", f.opts.Timeout, err)}
	case cause != nil:
		return &exitError{exitIncomplete, fmt.Errorf("%v before the properties ran", cause)}
	}
	return err
}

// markIncomplete marks a run that a signal or the deadline cut short, also when Ginkgo did
// not (a signal just before or after the specs ran).
func markIncomplete(run *reports.Run, sigs *signalCatcher, deadline time.Time, timeout time.Duration) {
	if sig := sigs.caught(); sig != nil {
		run.Complete = false
		run.Incomplete = "interrupted by " + signalName(sig)
		return
	}
	if !run.Complete && !time.Now().Before(deadline) {
		run.Incomplete = fmt.Sprintf("deadline: the run took longer than --timeout %v", timeout)
	}
}

// loadRunTarget loads --target, or describes the reference API that the harness starts
// itself (its processes start with the faults).
func loadRunTarget(f *runFlags, tmp string) (*targets.Target, error) {
	switch {
	case f.chain != "" && (f.client || f.consumer != ""):
		return nil, usageErr("--chain runs the reference client, API and consumer together: it takes no --client or --consumer")
	case f.chain != "" && f.target != "":
		return nil, usageErr("--chain tests the reference chain: it takes no --target (a chain target file names its parts: chain: {client, api, consumer})")
	case f.chain != "":
		t, err := managedChain(f.chain, tmp, f.settings.RunID)
		if err != nil {
			return nil, usageErr("describe the reference chain: %v", err)
		}
		return t, nil
	case f.client && f.target != "":
		return nil, usageErr("--client tests the reference client: it takes no --target (declare clients in the target file)")
	case f.client && f.consumer != "":
		return nil, usageErr("--client and --consumer each test one reference side: pick one")
	case f.client:
		self, err := os.Executable()
		if err != nil {
			return nil, usageErr("%v", err)
		}
		t, err := selftest.ManagedClient(self, "")
		if err != nil {
			return nil, usageErr("describe the reference client: %v", err)
		}
		return t, nil
	}
	if f.target != "" {
		if f.consumer != "" {
			return nil, usageErr("--consumer starts the reference consumer: it takes no --target (declare consumers in the target file)")
		}
		t, err := targets.Load(f.target)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		return t, nil
	}
	if f.consumer != "" {
		t, err := managedConsumer(f.consumer, f.store, tmp, f.settings.RunID)
		if err != nil {
			return nil, usageErr("describe the reference consumer: %v", err)
		}
		return t, nil
	}
	t, err := managedReference(f.store, tmp)
	if err != nil {
		return nil, usageErr("describe the reference API: %v", err)
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

// writeReports writes report.json, summary.md, report.html and the run's artefacts (the load
// plot); junit.xml is written by Ginkgo.
func writeReports(dir string, res *framework.Result) error {
	for name, data := range res.Artefacts {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := reports.WriteJSON(filepath.Join(dir, "report.json"), res.Report); err != nil {
		return err
	}
	if err := reports.WriteMarkdown(filepath.Join(dir, "summary.md"), res.Report); err != nil {
		return err
	}
	return reports.WriteHTML(filepath.Join(dir, "report.html"), res.Report, res.HTML)
}

// reproBase is the command line that reruns this run, to which a failure adds --focus,
// --seed and --key.
func reproBase(f *runFlags) string {
	s := "retrysafe run"
	if f.target != "" {
		s += " --target " + f.target
	} else if f.consumer != "" {
		s += " --consumer " + f.consumer
	} else if f.client {
		s += " --client"
	} else if f.chain != "" {
		s += " --chain " + f.chain
	}
	if f.target == "" && f.store != "sqlite" {
		s += " --store " + f.store
	}
	return s
}

// where says where a target is, for the first line of a run: its first instance, or, for a
// queue worker without one, where its first consumer's events are published.
func where(t *targets.Target) string {
	if len(t.Instances) > 0 {
		return t.Instances[0].URL.Redacted()
	}
	for _, c := range t.Consumers {
		if d := c.Destination(); d != "" {
			return d
		}
	}
	if len(t.Clients) > 0 {
		return "clients against the harness's scripted API"
	}
	if c := t.Chain; c != nil {
		return fmt.Sprintf("chain: %s → %s → %s", c.Client.Name, c.API.Name, c.Consumer.Name)
	}
	return "no instance"
}
