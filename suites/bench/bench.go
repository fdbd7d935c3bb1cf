// Package bench holds retrysafe's benchmarks: each measures the harness against an obvious
// alternative side by side in one run and prints the ratio, never an absolute time alone.
//
//  1. arrival spread of a same-key burst: last-byte synchronisation vs the goroutine barrier
//     vs a Vegeta burst;
//  2. race detection: the share of rounds in which the race mutant without artificial delay
//     leaves a duplicate, per mode, on SQLite and PostgreSQL;
//  3. load overhead: the rate the load property sustains with its history and checks vs a
//     bare Vegeta attack at unlimited rate on the same target;
//  4. history cost: memory per recorded attempt (compact vs whole) and the time to check a
//     history of a million attempts;
//  5. a sharded load: a shard's CPU per request vs the bare Vegeta attack, and the merge of a
//     ten-million-attempt shard set (time, CPU, peak RSS) vs reading the set once.
//
// Every target is the reference API, in-process on 127.0.0.1.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference"
)

// Options size the benchmarks. Zero values take the defaults of the full run.
type Options struct {
	// Only lists the benchmarks to run (1 to 4); empty = all.
	Only []int
	// BurstSize is the size of a same-key burst (default 16).
	BurstSize int
	// SpreadRounds is the number of bursts per mode of benchmark 1 (default 200).
	SpreadRounds int
	// RaceRounds is the number of rounds per mode and store of benchmark 2 (default 100).
	RaceRounds int
	// LoadDuration is the length of each attack of benchmark 3 (default 4s).
	LoadDuration time.Duration
	// LoadWorkers bounds the concurrent hits of benchmark 3 (default 16).
	LoadWorkers int
	// LoadRepeats is the number of bare/load pairs per row of benchmark 3 (default 3).
	LoadRepeats int
	// HistoryN is the number of attempts of benchmark 4 (default 1,000,000).
	HistoryN int
	// MergeAttempts is the size of benchmark 5's synthetic shard set (default 10,000,000).
	MergeAttempts int64
	// MergeStore is where that set's records are counted: "postgres" (the default, a table in
	// PostgresDSN's database) or "sqlite" (records.db in the set's folder).
	MergeStore string
	// Self is the retrysafe binary that benchmark 5 runs `merge` with ("" = the merge is not
	// measured, and the output says so).
	Self string
	// PostgresDSN locates PostgreSQL (default: $RETRYSAFE_PG_DSN or the built-in default).
	PostgresDSN string
	// Out receives the results.
	Out io.Writer
}

// Quick returns options that finish in well under a minute.
func Quick() Options {
	return Options{SpreadRounds: 40, RaceRounds: 20, LoadDuration: 2 * time.Second, LoadRepeats: 2, HistoryN: 200_000, MergeAttempts: 200_000}
}

func (o *Options) defaults() {
	if o.BurstSize <= 0 {
		o.BurstSize = 16
	}
	if o.SpreadRounds <= 0 {
		o.SpreadRounds = 200
	}
	if o.RaceRounds <= 0 {
		o.RaceRounds = 100
	}
	if o.LoadDuration <= 0 {
		o.LoadDuration = 4 * time.Second
	}
	if o.LoadWorkers <= 0 {
		o.LoadWorkers = 16
	}
	if o.LoadRepeats <= 0 {
		o.LoadRepeats = 3
	}
	if o.HistoryN <= 0 {
		o.HistoryN = 1_000_000
	}
	if o.MergeAttempts <= 0 {
		o.MergeAttempts = 10_000_000
	}
	if o.PostgresDSN == "" {
		o.PostgresDSN, _ = reference.DefaultDSN("postgres")
	}
	if o.MergeStore == "" {
		o.MergeStore = "postgres"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// Run runs the selected benchmarks and prints their results to o.Out.
func Run(ctx context.Context, o Options) error {
	o.defaults()
	fmt.Fprintf(o.Out, "retrysafe bench: %d CPUs, %s, GOMAXPROCS %d, load average %s; every figure is measured in this run\n\n",
		runtime.NumCPU(), runtime.Version(), runtime.GOMAXPROCS(0), loadAverage())
	benches := []func(context.Context, *Options) error{spreadBench, raceBench, overheadBench, historyBench, shardBench}
	for i, b := range benches {
		if len(o.Only) > 0 && !slices.Contains(o.Only, i+1) {
			continue
		}
		if err := b(ctx, &o); err != nil {
			return fmt.Errorf("benchmark %d: %w", i+1, err)
		}
	}
	return nil
}

// loadAverage returns the system's one-minute load average, "?" where unknown: figures
// measured on a busy machine move.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// ms renders a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }

// ratio renders a/b, e.g. "2.31x".
func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "   n/a"
	}
	return fmt.Sprintf("%5.2fx", float64(a)/float64(b))
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}
