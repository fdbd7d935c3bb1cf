package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/suites/selftest"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newSelftestCmd) }

func newSelftestCmd() *cobra.Command {
	var (
		opts      selftest.Options
		jsonFile  string
		reportDir string
		stores    string
		mutants   string
		shape     string
	)
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Prove every property against the reference API and its mutants",
		Long: `Run the properties against the correct reference API on every store (memory, sqlite,
postgres, redis), in its default shape and its other shapes (UUID keys, no auth, test hooks, a
400 mismatch), and each mutant on every store of its row, running for a mutant only the
property that must catch it; then the same for the reference consumer on each transport
(webhook on every store; amqp and nats on sqlite and postgres), in two shapes: calling the
harness's downstream sink, and calling nothing of the harness's (no-sink: test hooks, HTTP on
webhooks and NATS and message headers on RabbitMQ, the event id in a message header on NATS),
where every property takes its black-box path; and, for the crash properties, the no-sink NATS
consumer on a durable of AckWait 12s (long-ack-wait), judged on the broker's clock; and the reference
client ('retrysafe client', no store: its state is files) against the harness's scripted API,
correct and as each of its mutants. The API's events (serve --events: an order.created per new
order through its outbox) are proven on webhooks on every store and on RabbitMQ and JetStream on
sqlite and postgres (their fault properties, kills and broker link cuts, on sqlite), and their
mutants killed on webhooks on sqlite and postgres. The asynchronous API (serve --async: 202, a
status resource, the record made later by its worker) runs replay, race, mismatch,
dropped-response, crash-after-claim and load on sqlite and postgres, and its mutants are killed
there. Prints the matrix (rows mutants, columns stores; each cell
killed, survived, pending or n-a; a cell marked * is reported, not required). Exit 0 only when
the correct API, consumer and client pass everywhere, every required cell is killed and the cells
left nothing behind.

The cells are independent: each has its own PostgreSQL schema, Redis key prefix, broker
topology, Toxiproxy listeners and ports reserved for its processes, named from the self-test's
run id, and removed when it ends (what an interrupted cell leaves is swept at the end). The
client side's jobs, which judge a client's delays to the millisecond, run first in a serial
phase, one at a time; then every other job runs in the parallel phase, --parallel at once (at
most as many on PostgreSQL as its max_connections leaves room for). A line every 15 s says how
many jobs are done, running and left, and which has run longest.

--report-dir receives selftest.json, selftest.md and selftest.html (the matrix, each job's phase
and seconds) and cells/, one log per job: the harness's notices, each spec's verdict, the
failures' evidence and the output of the processes it started.

PostgreSQL and Redis are found at $RETRYSAFE_PG_DSN and $RETRYSAFE_REDIS_URL, or at the defaults
of 'retrysafe serve'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stores = splitList(stores)
			opts.Mutants = splitList(mutants)
			if shape != "" && !slices.Contains(consumer.Shapes, consumer.Shape(shape)) {
				return usageErr("--consumer-shape: unknown shape %q (known: %s, %s, %s)", shape, consumer.ShapeSink, consumer.ShapeNoSink, consumer.ShapeLongAckWait)
			}
			opts.ConsumerShape = consumer.Shape(shape)
			for _, s := range opts.Stores {
				if !slices.Contains(reference.AllStores, s) {
					return usageErr("--stores: unknown store %q (known: %s)", s, strings.Join(reference.AllStores, ", "))
				}
			}
			out := cmd.OutOrStdout()
			opts.Progress = out
			if reportDir != "" {
				opts.LogDir = filepath.Join(reportDir, "cells")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			started := time.Now()
			res, err := selftest.Run(ctx, opts)
			if res == nil {
				return &exitError{exitIncomplete, err}
			}
			fmt.Fprintln(out)
			printMatrix(out, res, opts.Stores)
			// The reports are written also when the self-test was interrupted: what ran is in them.
			if jsonFile != "" {
				if werr := writeSelftestJSON(jsonFile, res); werr != nil {
					return usageErr("--json: %v", werr)
				}
			}
			if reportDir != "" {
				if werr := writeSelftestReports(reportDir, res, opts.Stores); werr != nil {
					return usageErr("--report-dir: %v", werr)
				}
				fmt.Fprintf(out, "reports: %s\n", reportDir)
			}
			fmt.Fprintf(out, "self-test took %s (%s)\n", time.Since(started).Round(time.Second), phaseSummary(res))
			if err != nil {
				return &exitError{exitIncomplete, err}
			}
			if problems := res.Problems(); len(problems) > 0 {
				return &exitError{exitViolation, fmt.Errorf("self-test failed: %s", strings.Join(problems, "; "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&jsonFile, "json", "", "write the matrix as JSON to this file too")
	f.StringVar(&reportDir, "report-dir", "retrysafe-report/selftest", "write selftest.json, selftest.md, selftest.html and each job's log (cells/) here; empty: no reports, no logs")
	f.IntVar(&opts.Parallel, "parallel", 0, "jobs the parallel phase runs at once (default 6 × GOMAXPROCS; 1: one after another)")
	f.StringVar(&stores, "stores", "", "comma-separated stores (default: memory,sqlite,postgres,redis)")
	f.StringVar(&mutants, "mutants", "", "comma-separated rows to run (default: every mutant and "+selftest.TwoMemoryInstances+")")
	f.BoolVar(&opts.NoConsumers, "no-consumers", false, "leave out the reference consumer's rows (webhook, amqp, nats)")
	f.BoolVar(&opts.NoAPI, "no-api", false, "leave out the reference API's rows")
	f.BoolVar(&opts.NoClients, "no-clients", false, "leave out the reference client's rows")
	f.StringVar(&shape, "consumer-shape", "", "run only the consumer rows of one shape: sink (it calls the harness's downstream), no-sink (it calls nothing of the harness's: test hooks, black-box fault paths) or long-ack-wait (no-sink on a JetStream durable of AckWait 12s: the crash properties)")
	f.DurationVar(&opts.Retention, "retention", 3*time.Second, "retention of the reference API under test")
	f.DurationVar(&opts.LockTimeout, "lock-timeout", 3*time.Second, "lock timeout of the reference API under test")
	f.BoolVar(&opts.OnlyEvents, "only-events", false, "run only the rows of the API's events: the correct API with events on each store and transport, and the events mutants' cells")
	f.BoolVar(&opts.OnlyAsync, "only-async", false, "run only the rows of the asynchronous API (serve --async): the correct API on sqlite and postgres (replay, race, mismatch, dropped-response, crash-after-claim, load), and the async mutants' cells")
	f.BoolVar(&opts.NoCorrect, "only-cells", false, "run only the mutant cells, not the correct reference (to measure how often a cell is killed)")
	cmd.AddCommand(newSelftestCompareCmd())
	return cmd
}

func newSelftestCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Compare two self-tests' JSON cell by cell",
		Long: `Compare two self-tests written with --json (or --report-dir's selftest.json): every correct
run's result and every cell's, keyed by side, mutant, transport, shape, store and property. Prints
each difference; a reported-only cell may differ (listed, not counted). Exit 0 when every correct
run and every required cell has the same result in both, 1 otherwise, 2 when a file cannot be read.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs [2]*selftest.Result
			for i, path := range args {
				data, err := os.ReadFile(path)
				if err != nil {
					return usageErr("%v", err)
				}
				rs[i] = &selftest.Result{}
				if err := json.Unmarshal(data, rs[i]); err != nil {
					return usageErr("%s: %v", path, err)
				}
			}
			out := cmd.OutOrStdout()
			diffs := selftest.Compare(rs[0], rs[1])
			for _, d := range diffs {
				mark := "differs"
				if !d.Required {
					mark = "differs (reported only)"
				}
				fmt.Fprintf(out, "%s: %s: %s in %s, %s in %s\n", d.What, mark, d.A, args[0], d.B, args[1])
			}
			required := selftest.Required(diffs)
			fmt.Fprintf(out, "%d of %d correct runs and cells compared differ where they count (%d reported-only differences)\n",
				len(required), len(rs[0].Correct)+len(rs[0].Cells), len(diffs)-len(required))
			if len(required) > 0 {
				return &exitError{exitViolation, fmt.Errorf("the self-tests differ")}
			}
			return nil
		},
	}
}

// matrixLabelWidth is the width of the matrix's first column.
const matrixLabelWidth = 52

// printMatrix prints the correct API's results and the mutant matrix.
func printMatrix(w io.Writer, res *selftest.Result, stores []string) {
	if len(stores) == 0 {
		stores = reference.AllStores
	}
	header := func(title string) {
		fmt.Fprintf(w, "%-*s", matrixLabelWidth, title)
		for _, s := range stores {
			fmt.Fprintf(w, " %-10s", s)
		}
		fmt.Fprintln(w)
	}
	header("correct API")
	failed := map[string][]string{}
	var clientFailed []string
	clientRan := false
	for _, c := range res.Correct {
		if c.Side == selftest.SideClient {
			clientRan = true
			if c.Result == "fail" {
				clientFailed = append(clientFailed, c.Property)
			}
			continue
		}
		if c.Result == "fail" {
			name := c.Property
			if c.Shape != "" {
				name += " (" + c.Shape + ")"
			}
			failed[c.Store] = append(failed[c.Store], name)
		}
	}
	fmt.Fprintf(w, "%-*s", matrixLabelWidth, "all properties (API, its shapes, the consumer)")
	for _, s := range stores {
		v := "pass"
		if len(failed[s]) > 0 {
			v = "FAIL"
		}
		fmt.Fprintf(w, " %-10s", v)
	}
	fmt.Fprintln(w)
	for _, s := range stores {
		if len(failed[s]) > 0 {
			fmt.Fprintf(w, "  %s fails: %s\n", s, strings.Join(failed[s], ", "))
		}
	}
	if clientRan {
		v := "pass"
		if len(clientFailed) > 0 {
			v = "FAIL: " + strings.Join(clientFailed, ", ")
		}
		fmt.Fprintf(w, "%-*s %s\n", matrixLabelWidth, "the reference client (every client property)", v)
	}
	fmt.Fprintln(w)
	header("mutant (property)")
	var last string
	var clientCells []selftest.Cell
	for _, c := range res.Cells {
		if c.Side == selftest.SideClient {
			clientCells = append(clientCells, c)
			continue
		}
		label := c.Mutant + " (" + c.Property + ")"
		switch {
		case c.Shape != "" && c.Transport == "": // the API's events cells
			label = c.Mutant + " [" + c.Shape + "] (" + c.Property + ")"
		case c.Shape != "" && c.Shape != string(consumer.ShapeSink):
			label = c.Mutant + " [" + c.Transport + ", " + c.Shape + "] (" + c.Property + ")"
		case c.Transport != "":
			label = c.Mutant + " [" + c.Transport + "] (" + c.Property + ")"
		}
		if label != last {
			if last != "" {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%-*s", matrixLabelWidth, label)
			last = label
		}
		v := c.Result
		if c.Result == selftest.Survived && c.Required {
			v = "SURVIVED"
		}
		if !c.Required && c.Result != selftest.NA {
			v += "*"
		}
		fmt.Fprintf(w, " %-10s", v)
	}
	fmt.Fprintln(w, "\n(* reported, not required)")
	if len(clientCells) > 0 {
		fmt.Fprintf(w, "\n%-*s %s\n", matrixLabelWidth, "client mutant (property)", "result (no store)")
		for _, c := range clientCells {
			v := c.Result
			if c.Result == selftest.Survived {
				v = "SURVIVED"
			}
			fmt.Fprintf(w, "%-*s %s\n", matrixLabelWidth, c.Mutant+" ("+c.Property+")", v)
		}
	}
}

func writeSelftestJSON(path string, res *selftest.Result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// splitList splits a comma-separated flag value, trimmed, without empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
