package main

// run --shard: one shard of a sharded load (the baseline, a wait for the agreed start, this
// shard's share of the run's load plan, a shard file). Kubernetes Indexed Jobs, CI matrices and
// GitLab's parallel jobs start the shards; merge.go judges them as one run.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

// shardFlags are the flags of a sharded run.
type shardFlags struct {
	shard   string
	run     string
	startAt string
	skew    time.Duration
	out     string
	twins   float64
}

// bindShardFlags adds the flags of a sharded run to run's flag set.
func bindShardFlags(cmd *cobra.Command, f *shardFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.shard, "shard", "", "run one shard of a sharded load: I/N (0-based), or N with I from $JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or $CI_NODE_INDEX-1 (GitLab parallel); sends the baseline and its share of the load only, writes a shard file into --out, and forms no verdict (retrysafe merge does)")
	fl.StringVar(&f.run, "run", "", "the sharded run's id, the same for every shard (keys and refs carry it); required with --shard")
	fl.StringVar(&f.startAt, "start-at", "", "when every shard starts its load (RFC 3339, e.g. 2026-12-01T10:00:00Z); set-up happens before; required with --shard")
	fl.DurationVar(&f.skew, "start-skew", 30*time.Second, "how late after --start-at a shard may still start its load (later: refused, exit 2)")
	fl.StringVar(&f.out, "out", "retrysafe-shards", "folder the shard file is written to (shared by every shard, or collected for merge)")
	fl.Float64Var(&f.twins, "load-twins", 0.1, "with --shard: share of new operations the next shard sends too, at the same instant with the same key and body (a client that failed over)")
}

// parseShard reads --shard: I/N, or N with I from the engine's environment. A shard index that
// the flag and the environment give differently is a conflict.
func parseShard(spec string, getenv func(string) string) (i, n int, err error) {
	envIndex, envName := -1, ""
	if v := getenv("JOB_COMPLETION_INDEX"); v != "" {
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			return 0, 0, fmt.Errorf("$JOB_COMPLETION_INDEX=%q is not a shard index", v)
		}
		envIndex, envName = x, "$JOB_COMPLETION_INDEX"
	}
	if v := getenv("CI_NODE_INDEX"); v != "" {
		x, err := strconv.Atoi(v)
		if err != nil || x < 1 {
			return 0, 0, fmt.Errorf("$CI_NODE_INDEX=%q is not a GitLab node index (1-based)", v)
		}
		if envIndex >= 0 && envIndex != x-1 {
			return 0, 0, fmt.Errorf("conflict: $JOB_COMPLETION_INDEX says shard %d, $CI_NODE_INDEX says %d", envIndex, x-1)
		}
		envIndex, envName = x-1, "$CI_NODE_INDEX-1"
	}
	is, ns, slash := strings.Cut(spec, "/")
	if !slash {
		ns = is
	}
	n, err = strconv.Atoi(ns)
	if err != nil || n < 1 {
		return 0, 0, fmt.Errorf("--shard %q: want I/N or N, with N a shard count of at least 1", spec)
	}
	switch {
	case slash:
		if i, err = strconv.Atoi(is); err != nil || i < 0 || i >= n {
			return 0, 0, fmt.Errorf("--shard %q: the index must be from 0 to %d", spec, n-1)
		}
		if envIndex >= 0 && envIndex != i {
			return 0, 0, fmt.Errorf("conflict: --shard %s says shard %d, %s says %d", spec, i, envName, envIndex)
		}
	case envIndex < 0:
		return 0, 0, fmt.Errorf("--shard %d: no shard index: give --shard I/%d, or run it where $JOB_COMPLETION_INDEX or $CI_NODE_INDEX is set", n, n)
	default:
		i = envIndex
	}
	if i >= n {
		return 0, 0, fmt.Errorf("%s gives shard %d, but --shard says there are %d", envName, i, n)
	}
	return i, n, nil
}

// seedOf derives a run's seed from its id, for shards given no --seed.
func seedOf(run string) int64 {
	h := fnv.New64a()
	h.Write([]byte(run))
	return int64(h.Sum64() >> 1)
}

// shardRefusal is why a target cannot run as a shard ("": it can): a shard sends load only, so
// nothing that needs one process to see the whole run (processes it manages, faults, hooks).
func shardRefusal(t *targets.Target) string {
	const how = "run it with a normal `retrysafe run`"
	switch {
	case t.Lifecycle != nil:
		return "it declares a lifecycle (processes retrysafe starts and kills): " + how
	case t.Downstream != nil:
		return "it declares a downstream (a sink the harness holds): " + how
	case t.Storage != nil:
		return "it declares a storage proxy (a fault on the target's store): " + how
	case t.Hooks != nil:
		return "it declares hooks (faults the harness triggers): " + how
	case len(t.Operations) == 0:
		return "it declares no operations: a shard sends load to an API's operations"
	}
	for _, op := range t.Operations {
		if !op.Key.Format.DependsOnRun() {
			return fmt.Sprintf("operation %s: key.format %q does not use {{.Run}}, so two runs (or a run and its retried shard) would make the same keys", op.Name, op.Key.Format)
		}
	}
	return ""
}

// runShard is `retrysafe run --shard`.
func runShard(cmd *cobra.Command, f *runFlags) error {
	out := cmd.OutOrStdout()
	sf := &f.shardFlags
	i, n, err := parseShard(sf.shard, os.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	switch {
	case f.target == "":
		return usageErr("--shard needs a target file (FILE or --target FILE): a shard tests an API that runs without retrysafe (every shard reaches it over the network)")
	case sf.run == "":
		return usageErr("--shard needs --run ID, the same for every shard")
	case sf.startAt == "":
		return usageErr("--shard needs --start-at TIME (RFC 3339), the same for every shard")
	case f.settings.KeyPrefix != "":
		return usageErr("--shard takes no --key: a shard's keys carry the run id (--run)")
	case f.consumer != "" || f.client:
		return usageErr("--shard sends an API's load: it takes no --consumer or --client")
	case f.opts.Selection.LabelFilter != "" || f.opts.Selection.Focus != "":
		return usageErr("--shard runs the baseline and the load only: it takes no --label-filter or --focus")
	}
	startAt, err := time.Parse(time.RFC3339, sf.startAt)
	if err != nil {
		return usageErr("--start-at %q: want RFC 3339, e.g. 2026-12-01T10:00:00Z", sf.startAt)
	}
	t, sum, err := loadHashed(f.target)
	if err != nil {
		return err
	}
	defer t.Close()
	if why := shardRefusal(t); why != "" {
		return usageErr("%s cannot run as a shard: %s", f.target, why)
	}
	if err := os.MkdirAll(sf.out, 0o755); err != nil {
		return usageErr("--out: %v", err)
	}
	ctx, sigs := catchSignals(cmd.Context(), cmd.ErrOrStderr())
	defer sigs.stop()
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	st := f.settings
	st.RunID = sf.run
	if !cmd.Flags().Changed("seed") {
		st.Seed = seedOf(sf.run)
	}
	st.Shard = &framework.Shard{I: i, N: n, Twins: min(max(sf.twins, 0), 1)}
	leaveDefaults(cmd, &st)
	h, err := framework.Open(ctx, t, framework.WithSettings(st), framework.AllowRemote(f.allowRemote),
		framework.WithLog(out), framework.WithoutCleanup())
	if err != nil {
		return notStarted(ctx, f, usageErr("%v", err))
	}
	defer h.Close()
	env := h.Env()
	fmt.Fprintf(out, "retrysafe: shard %d of %d of run %s (seed %d) against %s: %d hits/s for %v from %s (limits: %s)\n",
		i, n, sf.run, env.Settings.Seed, where(t), env.Settings.LoadRate, env.Settings.LoadDuration, startAt.Format(time.RFC3339), env.Limits)
	path, m, err := h.RunShard(ctx, framework.ShardOptions{StartAt: startAt, Skew: sf.skew, Out: sf.out, TargetSHA256: sum})
	if err != nil {
		return usageErr("shard %d of %d: %v", i, n, err)
	}
	fmt.Fprintf(out, "retrysafe: shard %d of %d sent %d of %d hits (%d attempts, %d operations): %s\n", i, n, m.Hits, m.Planned, m.Attempts, m.Operations, path)
	if !m.Complete {
		return &exitError{exitIncomplete, fmt.Errorf("shard %d of %d did not send its share: %s", i, n, m.Incomplete)}
	}
	return nil
}

// loadHashed loads a target file and returns it with the hex SHA-256 of its bytes, which every
// shard's manifest carries and merge compares.
func loadHashed(path string) (*targets.Target, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", usageErr("--target: %v", err)
	}
	sum := sha256.Sum256(data)
	t, err := targets.Load(path)
	if err != nil {
		return nil, "", usageErr("%v", err)
	}
	return t, hex.EncodeToString(sum[:]), nil
}
