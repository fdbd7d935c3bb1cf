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
		opts     selftest.Options
		jsonFile string
		stores   string
		mutants  string
		shape    string
	)
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Prove every property against the reference API and its mutants",
		Long: `Run the properties against the correct reference API on every store (memory, sqlite,
postgres, redis), in its default shape and its other shapes (UUID keys, no auth, test hooks, a
400 mismatch), and each mutant on every store of its row, running for a mutant only the
property that must catch it; then the same for the reference consumer on each transport
(webhook on every store; amqp and nats on sqlite and postgres), in two shapes: calling the
harness's downstream sink, and calling nothing of the harness's (no-sink: test hooks, the event id
in a message header on NATS), where every property takes its black-box path; and the reference
client ('retrysafe client', no store: its state is files) against the harness's scripted API,
correct and as each of its mutants. Prints the matrix (rows mutants, columns stores; each cell
killed, survived, pending or n-a; a cell marked * is reported, not required). Exit 0 only when
the correct API, consumer and client pass everywhere and every required cell is killed.

PostgreSQL and Redis are found at $RETRYSAFE_PG_DSN and $RETRYSAFE_REDIS_URL, or at the defaults
of 'retrysafe serve'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stores = splitList(stores)
			opts.Mutants = splitList(mutants)
			switch consumer.Shape(shape) {
			case "", consumer.ShapeSink, consumer.ShapeNoSink:
				opts.ConsumerShape = consumer.Shape(shape)
			default:
				return usageErr("--consumer-shape: unknown shape %q (known: %s, %s)", shape, consumer.ShapeSink, consumer.ShapeNoSink)
			}
			for _, s := range opts.Stores {
				if !slices.Contains(reference.AllStores, s) {
					return usageErr("--stores: unknown store %q (known: %s)", s, strings.Join(reference.AllStores, ", "))
				}
			}
			out := cmd.OutOrStdout()
			opts.Progress = out
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			started := time.Now()
			res, err := selftest.Run(ctx, opts)
			if res != nil {
				fmt.Fprintln(out)
				printMatrix(out, res, opts.Stores)
			}
			if err != nil {
				return &exitError{exitIncomplete, err}
			}
			if jsonFile != "" {
				if err := writeSelftestJSON(jsonFile, res); err != nil {
					return usageErr("--json: %v", err)
				}
			}
			fmt.Fprintf(out, "self-test took %s\n", time.Since(started).Round(time.Second))
			if problems := res.Problems(); len(problems) > 0 {
				return &exitError{exitViolation, fmt.Errorf("self-test failed: %s", strings.Join(problems, "; "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&jsonFile, "json", "", "write the matrix as JSON to this file")
	f.StringVar(&stores, "stores", "", "comma-separated stores (default: memory,sqlite,postgres,redis)")
	f.StringVar(&mutants, "mutants", "", "comma-separated rows to run (default: every mutant and "+selftest.TwoMemoryInstances+")")
	f.BoolVar(&opts.NoConsumers, "no-consumers", false, "leave out the reference consumer's rows (webhook, amqp, nats)")
	f.BoolVar(&opts.NoAPI, "no-api", false, "leave out the reference API's rows")
	f.BoolVar(&opts.NoClients, "no-clients", false, "leave out the reference client's rows")
	f.StringVar(&shape, "consumer-shape", "", "run only the consumer rows of one shape: sink (it calls the harness's downstream) or no-sink (it calls nothing of the harness's: test hooks, black-box fault paths)")
	f.DurationVar(&opts.Retention, "retention", 3*time.Second, "retention of the reference API under test")
	f.DurationVar(&opts.LockTimeout, "lock-timeout", 3*time.Second, "lock timeout of the reference API under test")
	return cmd
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
		case c.Shape == string(consumer.ShapeNoSink):
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
