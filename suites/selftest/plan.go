package selftest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// Run runs the self-test: the plan's jobs (every correct run and every cell), the serial
// phase's one at a time and then the others concurrently, each in places of its own in the
// shared services; then it sweeps what is left under its run id and says what it could not
// remove. The matrix keeps the plan's order, whatever order the jobs end in.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts.defaults()
	tmp, err := framework.ScratchDir("retrysafe-selftest-") // SQLite files and client state: in memory where it can be
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	sv := &services{runID: opts.RunID, postgresDSN: opts.PostgresDSN, redisURL: opts.RedisURL}
	st := &stores{opts: &opts, dir: tmp, sv: sv}
	plan := st.plan()
	used := usedServices(plan, opts)
	res := &Result{RunID: opts.RunID, Parallel: opts.Parallel, PhaseSeconds: map[string]float64{}}
	if used["postgres"] {
		res.PostgreSQLSlots = opts.PostgresSlots
		if res.PostgreSQLSlots == 0 {
			res.PostgreSQLSlots = postgresSlots(ctx, opts.PostgresDSN, opts.Progress)
		}
	}
	if opts.LogDir != "" {
		if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
			return nil, err
		}
	}
	progress := &lockedWriter{w: opts.Progress}
	st.opts.Progress = progress
	fmt.Fprintf(progress, "self-test %s: %d jobs (%d mutant cells)\n", opts.RunID, len(plan), countCells(plan))
	sched := &scheduler{parallel: opts.Parallel, pgSlots: max(res.PostgreSQLSlots, 1), logDir: opts.LogDir, progress: progress}
	started := time.Now()
	runErr := sched.run(ctx, plan)
	res.Seconds = time.Since(started).Seconds()
	for _, j := range plan {
		res.Correct = append(res.Correct, j.correct...)
		if j.cell != nil {
			res.Cells = append(res.Cells, *j.cell)
		}
	}
	res.PhaseSeconds = sched.phaseSeconds
	left, err := sv.sweep(used)
	if err != nil {
		fmt.Fprintf(progress, "  what the cells left could not all be checked: %v\n", err)
	}
	res.Left = &left
	if left.Empty() {
		fmt.Fprintf(progress, "  nothing left behind (PostgreSQL schemas, Redis keys, broker topologies of %s)\n", opts.RunID)
	} else {
		fmt.Fprintf(progress, "  left behind: %s\n", left)
	}
	return res, runErr
}

// plan lists the self-test's jobs in the matrix's order: the correct API on each store (in
// process, its process properties, its shapes) and its cells; the correct client and its cells;
// the correct consumer on each shape, transport and store, and its cells.
func (st *stores) plan() []*job {
	opts := st.opts
	var plan []*job
	if !opts.NoAPI {
		for _, store := range opts.Stores {
			plan = append(plan, st.correctAPIJobs(store)...)
			plan = append(plan, st.correctEventsJobs(store)...)
			plan = append(plan, st.correctAsyncJobs(store)...)
		}
		plan = append(plan, st.cellJobs("", rows(opts.Mutants), runCell, opts.Stores)...)
	}
	if !opts.NoClients {
		plan = append(plan, &job{name: "correct client", phase: phaseOf(SideClient), run: func(ctx context.Context) ([]Correct, *Cell, error) {
			cs, err := runClientCorrect(ctx, st)
			return cs, nil, err
		}})
		plan = append(plan, st.cellJobs(SideClient, clientRows(opts.Mutants), runClientCell, []string{ClientStore})...)
	}
	if !opts.NoConsumers {
		for _, row := range consumerShapes {
			shape := row.shape
			if opts.ConsumerShape != "" && shape != opts.ConsumerShape {
				continue
			}
			for _, tr := range row.transports {
				for _, store := range opts.Stores {
					if tr != consumer.TransportWebhook && !slices.Contains(brokerRequired, store) {
						continue // the correct broker consumer is proven on the required stores
					}
					plan = append(plan, &job{name: fmt.Sprintf("correct consumer %s %s %s", tr, shape, store), pg: store == "postgres",
						run: func(ctx context.Context) ([]Correct, *Cell, error) {
							cs, err := runConsumerCorrect(ctx, st, tr, store, shape)
							return cs, nil, err
						}})
				}
			}
		}
		plan = append(plan, st.cellJobs("consumer", consumerRows(opts.Mutants, opts.ConsumerShape), runConsumerCell, opts.Stores)...)
	}
	if opts.NoCorrect {
		plan = slices.DeleteFunc(plan, func(j *job) bool { return !j.isCell })
	}
	if opts.OnlyEvents {
		plan = slices.DeleteFunc(plan, func(j *job) bool { return !j.events })
	}
	if opts.OnlyAsync {
		plan = slices.DeleteFunc(plan, func(j *job) bool { return !j.async })
	}
	for _, j := range plan {
		if j.phase == "" {
			j.phase = PhaseParallel
		}
	}
	return plan
}

// correctAPIJobs are the runs of the correct API on one store: every property but the process
// properties in process, the process properties against a managed process (durable stores),
// and each shape.
func (st *stores) correctAPIJobs(store string) []*job {
	pg := store == "postgres"
	out := []*job{{name: "correct api " + store, pg: pg, run: func(ctx context.Context) ([]Correct, *Cell, error) {
		run, err := st.runAgainst(ctx, cell{kind: store, labelFilter: "!" + processLabel})
		if err != nil {
			return nil, nil, err
		}
		return correctResults(store, "", run), nil, nil
	}}}
	if store != "memory" {
		out = append(out, &job{name: "correct api " + store + " processes", pg: pg, run: func(ctx context.Context) ([]Correct, *Cell, error) {
			run, err := st.runManaged(ctx, store, reference.MutantNone, processLabel)
			if err != nil {
				return nil, nil, err
			}
			return correctResults(store, "", run), nil, nil
		}})
	}
	for i := range shapes {
		sh := &shapes[i]
		out = append(out, &job{name: "correct api " + store + " " + sh.name, pg: pg, run: func(ctx context.Context) ([]Correct, *Cell, error) {
			// Load and the retention waits check nothing a shape changes: left out, for time.
			run, err := st.runAgainst(ctx, cell{kind: store, shape: sh, labelFilter: "!" + processLabel + " && !wait:retention && !property:load"})
			if err != nil {
				return nil, nil, fmt.Errorf("shape %s: %w", sh.name, err)
			}
			return correctResults(store, sh.name, run), nil, nil
		}})
	}
	return out
}

// cellJobs are the jobs of each row's cell on each store (run: runCell, runConsumerCell or
// runClientCell, whose one column is ClientStore).
func (st *stores) cellJobs(side string, rows []row, run func(context.Context, *stores, row, string) (Cell, error), stores []string) []*job {
	var out []*job
	for _, r := range rows {
		for _, store := range stores {
			name := r.name
			if side != "" {
				name = side + " " + name
			}
			if r.transport != "" {
				name += " " + r.transport
			}
			if r.shape != "" && r.shape != consumer.ShapeSink {
				name += " " + string(r.shape)
			}
			out = append(out, &job{name: name + " " + store + " " + r.property, pg: store == "postgres", isCell: true,
				events: side == "" && isEventsProperty(r.property), async: side == "" && r.mutant.NeedsAsync(),
				phase: phaseOf(side), run: func(ctx context.Context) ([]Correct, *Cell, error) {
					c, err := run(ctx, st, r, store)
					return nil, &c, err
				}})
		}
	}
	return out
}

// phaseOf is the phase of a side's jobs.
func phaseOf(side string) string {
	if slices.Contains(serialSides, side) {
		return PhaseSerial
	}
	return PhaseParallel
}

// countCells counts the plan's mutant cells.
func countCells(plan []*job) int {
	n := 0
	for _, j := range plan {
		if j.isCell {
			n++
		}
	}
	return n
}

// usedServices says which shared services the plan's jobs use: postgres, redis, brokers.
func usedServices(plan []*job, opts Options) map[string]bool {
	used := map[string]bool{}
	for _, s := range opts.Stores {
		if (s == "postgres" || s == "redis") && !(opts.NoAPI && opts.NoConsumers) {
			used[s] = true
		}
	}
	used["brokers"] = (!opts.NoConsumers || !opts.NoAPI) && len(plan) > 0 // the consumer's rows, the API's events rows
	return used
}

// defaultParallel is how many jobs the parallel phase runs at once by default: the cells
// mostly wait (for AckWaits, retention windows, lock timeouts, kills and restarts), so several
// per core. On 2 cores the whole self-test took 3m09s with 8 at once, 2m26s with 12 and 2m41s
// with 16 (the CPU then the limit).
func defaultParallel() int { return 6 * runtime.GOMAXPROCS(0) }
