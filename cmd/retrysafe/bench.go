package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"

	"github.com/retrysafe/retrysafe/suites/bench"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

func newBenchCmd() *cobra.Command {
	var (
		quick         bool
		only          []string
		profile       string
		writeSet      string
		mergeStore    string
		mergeAttempts int64
		o             bench.Options
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the race engine, the load property and the history against the alternatives",
		Long: `Run retrysafe's benchmarks against the reference API, in-process on 127.0.0.1. Each
measures retrysafe and an alternative side by side in one run and prints the ratio:

  1. arrival spread of a 16-request same-key burst: last-byte vs goroutine barrier vs Vegeta
  2. race detection: rounds in which the race mutant (no delay) leaves a duplicate, per mode,
     on SQLite and PostgreSQL ($RETRYSAFE_PG_DSN or the default of 'retrysafe serve')
  3. load overhead: the rate the load property sustains vs a bare Vegeta attack
  4. history cost: bytes per recorded attempt and the time to check a million attempts
  5. a sharded load: a shard's CPU per request vs a bare Vegeta attack, and 'retrysafe merge'
     of a synthetic 10-million-attempt set of 4 shards (wall, CPU, peak RSS) vs reading it once,
     its records counted in PostgreSQL (--merge-store sqlite: in SQLite)

The full run takes about five minutes (writing the 10-million-attempt set takes one); --quick
about half a minute.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				o = bench.Quick()
			}
			for _, s := range only {
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 || n > 5 {
					return usageErr("--only: %q is not a benchmark number (1 to 5)", s)
				}
				o.Only = append(o.Only, n)
			}
			o.Out = cmd.OutOrStdout()
			if cmd.Flags().Changed("merge-attempts") {
				o.MergeAttempts = mergeAttempts
			}
			if self, err := os.Executable(); err == nil {
				o.Self = self
			}
			switch o.MergeStore = mergeStore; mergeStore {
			case "postgres", "sqlite":
			default:
				return usageErr("--merge-store: %q is neither postgres nor sqlite", mergeStore)
			}
			if writeSet != "" {
				so := bench.ShardSetOptions{}
				if o.MergeStore == "postgres" {
					so.PostgresDSN, _ = reference.DefaultDSN("postgres")
				}
				set, err := bench.WriteShardSet(cmd.Context(), writeSet, 4, max(mergeAttempts, 1), so)
				if err != nil {
					return &exitError{exitIncomplete, err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %d attempts of %d operations in 4 shards into %s; merge them with:\n  RETRYSAFE_URL=http://127.0.0.1:PORT retrysafe merge --target %s --no-cleanup %s\n(any HTTP server on PORT answers the reachability check; the records are in %s, left for you to drop)\n",
					set.Attempts, set.Operations, writeSet, set.Target, writeSet, set.Store)
				return nil
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return usageErr("--cpuprofile: %v", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return usageErr("--cpuprofile: %v", err)
				}
				defer func() {
					pprof.StopCPUProfile()
					fmt.Fprintf(cmd.ErrOrStderr(), "CPU profile of the whole run (harness and reference API) in %s; view it with 'go tool pprof %s'\n", profile, profile)
				}()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := bench.Run(ctx, o); err != nil {
				return &exitError{exitIncomplete, err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&quick, "quick", false, "fewer rounds, shorter attacks and a 200,000-attempt history")
	f.StringSliceVar(&only, "only", nil, "run only these benchmarks, e.g. --only 1,3")
	f.Int64Var(&mergeAttempts, "merge-attempts", 10_000_000, "attempts in benchmark 5's synthetic shard set (--quick: 200,000)")
	f.StringVar(&mergeStore, "merge-store", "postgres", "where benchmark 5 counts its synthetic set's records: postgres (a table of its own, dropped after) or sqlite (records.db)")
	f.StringVar(&writeSet, "write-shard-set", "", "only write a synthetic shard set of --merge-attempts attempts into this folder (with its target file and records), to merge by hand")
	f.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the run to this file (for 'go tool pprof')")
	return cmd
}
