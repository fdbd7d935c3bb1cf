// Package selftest runs retrysafe's properties against its own reference API: the correct
// API on every store must pass every property, and each mutant on every store of its row
// must be killed by the property named to catch it. It is the proof that every check can
// fail and that none fails the correct API.
package selftest

import (
	"context"
	"fmt"
	_ "github.com/retrysafe/retrysafe/suites" // every side's properties: the self-test runs them all
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/reference"
	refclient "github.com/retrysafe/retrysafe/targets/reference/client"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// Cell results.
const (
	Killed   = "killed"
	Survived = "survived"
	Pending  = "pending"
	NA       = "n-a"
)

// TwoMemoryInstances names the row of two `--store memory` instances behind one target: a
// multi-instance bug by construction (each instance dedupes alone).
const TwoMemoryInstances = "two-memory-instances"

// Correct is the result of one property against the correct API on one store.
type Correct struct {
	Store string `json:"store"`
	// Side is "client" for the reference client's results (Store is then ClientStore); "" for
	// the API's and the consumer's.
	Side string `json:"side,omitempty"`
	// Transport is the consumer's transport (webhook, amqp, nats) of a consumer property's
	// run; "" for the API's.
	Transport string `json:"transport,omitempty"`
	// Shape names the reference's shape (see shapes.go; for the consumer sink or no-sink);
	// "" = the API as reference.yaml describes it.
	Shape    string `json:"shape,omitempty"`
	Property string `json:"property"`
	Result   string `json:"result"` // pass | fail | skipped (unknown is reported as fail)
	Reason   string `json:"reason,omitempty"`
	// Seconds is the time the property took.
	Seconds float64 `json:"seconds"`
}

// Cell is the result of one mutant on one store.
type Cell struct {
	Mutant string `json:"mutant"`
	// Side is "client" for a client mutant's cell (Store is then ClientStore); "" for the API's
	// and the consumer's.
	Side string `json:"side,omitempty"`
	// Transport is the transport of a consumer mutant's cell (webhook, amqp, nats); "" for the API's.
	Transport string `json:"transport,omitempty"`
	// Shape is how the consumer of a consumer cell is set up: sink (it calls the harness's
	// downstream) or no-sink (it calls nothing of the harness's; test hooks); "" for the API's.
	Shape    string `json:"shape,omitempty"`
	Store    string `json:"store"`
	Property string `json:"property"`
	Result   string `json:"result"`   // killed | survived | pending | n-a
	Required bool   `json:"required"` // false for stores where the mutant is only reported
	Reason   string `json:"reason,omitempty"`
	// Seconds is the time the cell took, its process start included.
	Seconds float64 `json:"seconds"`
}

// Result is the whole matrix.
type Result struct {
	Correct []Correct `json:"correct"`
	Cells   []Cell    `json:"cells"`
	// LeftOnBrokers is what the consumer rows left on RabbitMQ and JetStream (queues,
	// exchanges, streams under the self-test's names): a failure when not empty. Nil when the
	// brokers were not compared (no consumer rows, or they cannot be listed here).
	LeftOnBrokers *broker.Inventory `json:"left_on_brokers,omitempty"`
}

// Options configure a self-test.
type Options struct {
	Stores      []string      // default: every store
	Mutants     []string      // default: every mutant (and the two-memory-instances row)
	Retention   time.Duration // default 3s
	LockTimeout time.Duration // default 3s
	PostgresDSN string        // default: $RETRYSAFE_PG_DSN or the built-in default
	RedisURL    string        // default: $RETRYSAFE_REDIS_URL or the built-in default
	Progress    io.Writer     // one line per finished cell (nil = none)
	Binary      string        // the retrysafe binary started for the process properties (default: this program)
	Settings    framework.Settings
	// NoConsumers leaves the reference consumer's rows out; NoAPI the reference API's;
	// NoClients the reference client's.
	NoConsumers, NoAPI, NoClients bool
	// ConsumerShape keeps only the consumer rows of one shape (consumer.ShapeSink or
	// consumer.ShapeNoSink); "" = both.
	ConsumerShape consumer.Shape
}

func (o *Options) defaults() {
	if len(o.Stores) == 0 {
		o.Stores = reference.AllStores
	}
	if o.Retention <= 0 {
		o.Retention = 3 * time.Second
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 3 * time.Second
	}
	if o.PostgresDSN == "" {
		o.PostgresDSN, _ = reference.DefaultDSN("postgres")
	}
	if o.RedisURL == "" {
		o.RedisURL, _ = reference.DefaultDSN("redis")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Binary == "" {
		o.Binary = defaultBinary()
	}
}

// OK reports whether the self-test passed: the correct API and consumer pass everywhere,
// every required cell is killed and the consumer rows left nothing on the brokers.
func (r *Result) OK() bool { return len(r.Problems()) == 0 }

// Problems says why the self-test failed, one sentence per reason (none when it passed).
func (r *Result) Problems() []string {
	var out []string
	failed, survived := 0, 0
	for _, c := range r.Correct {
		if c.Result == "fail" {
			failed++
		}
	}
	for _, c := range r.Cells {
		if c.Required && c.Result == Survived {
			survived++
		}
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("the correct reference failed %d property runs", failed))
	}
	if survived > 0 {
		out = append(out, fmt.Sprintf("%d required mutant cells survived", survived))
	}
	if r.LeftOnBrokers != nil && !r.LeftOnBrokers.Empty() {
		out = append(out, "the consumer rows left "+r.LeftOnBrokers.String()+" on the brokers")
	}
	return out
}

// Run runs the self-test.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts.defaults()
	tmp, err := os.MkdirTemp("", "retrysafe-selftest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	st := &stores{opts: &opts, dir: tmp, prefix: fmt.Sprintf("retrysafe-selftest:%d:", time.Now().UnixNano())}
	defer st.purge(context.Background())
	res := &Result{}
	if !opts.NoAPI {
		for _, store := range opts.Stores {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			cs, err := runCorrect(ctx, st, store)
			if err != nil {
				return res, err
			}
			res.Correct = append(res.Correct, cs...)
		}
		if err := res.addCells(ctx, st, rows(opts.Mutants), runCell, opts.Stores); err != nil {
			return res, err
		}
	}
	if !opts.NoClients {
		cs, err := runClientCorrect(ctx, st)
		if err != nil {
			return res, err
		}
		res.Correct = append(res.Correct, cs...)
		if err := res.addCells(ctx, st, clientRows(opts.Mutants), runClientCell, []string{ClientStore}); err != nil {
			return res, err
		}
	}
	if opts.NoConsumers {
		return res, nil
	}
	defer compareBrokers(ctx, opts.Progress, res)()
	for _, shape := range consumerShapes {
		if opts.ConsumerShape != "" && shape != opts.ConsumerShape {
			continue
		}
		for _, tr := range consumerTransports {
			for _, store := range opts.Stores {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				if tr != consumer.TransportWebhook && !slices.Contains(brokerRequired, store) {
					continue // the correct broker consumer is proven on the required stores
				}
				cs, err := runConsumerCorrect(ctx, st, tr, store, shape)
				if err != nil {
					return res, err
				}
				res.Correct = append(res.Correct, cs...)
			}
		}
	}
	return res, res.addCells(ctx, st, consumerRows(opts.Mutants, opts.ConsumerShape), runConsumerCell, opts.Stores)
}

// addCells runs each row's cell on each store (run: runCell, runConsumerCell or runClientCell,
// whose one column is ClientStore), timed, and adds it to the matrix, printing it as it ends.
func (r *Result) addCells(ctx context.Context, st *stores, rows []row, run func(context.Context, *stores, row, string) (Cell, error), stores []string) error {
	for _, row := range rows {
		for _, store := range stores {
			if err := ctx.Err(); err != nil {
				return err
			}
			started := time.Now()
			cell, err := run(ctx, st, row, store)
			if err != nil {
				return err
			}
			cell.Seconds = time.Since(started).Seconds()
			printCell(st.opts.Progress, cell)
			r.Cells = append(r.Cells, cell)
		}
	}
	return nil
}

// printCell prints one cell's line of progress.
func printCell(w io.Writer, c Cell) {
	name := c.Mutant
	if c.Side == SideClient {
		name = "client " + name
	}
	if c.Transport != "" {
		name += "/" + c.Transport
	}
	if c.Shape == string(consumer.ShapeNoSink) {
		name += "/" + c.Shape
	}
	printProgress(w, name, c.Store, c.Property, c.Result, c.Seconds, c.Reason)
}

// printProgress prints one line of progress: a cell's or a property's of the correct API.
func printProgress(w io.Writer, name, store, property, result string, seconds float64, reason string) {
	if reason != "" {
		reason = ": " + reason
	}
	fmt.Fprintf(w, "  %-26s %-9s %-23s %s (%.1fs)%s\n", name, store, property, result, seconds, reason)
}

// row is one row of the matrix: a mutant (or the two-memory-instances setup), of the API or
// (consumer set) of the consumer on one transport.
type row struct {
	name      string
	mutant    reference.Mutant
	consumer  consumer.Mutant
	client    refclient.Mutant
	transport string
	shape     consumer.Shape // the consumer's shape (consumer rows)
	property  string
	required  []string
	reported  []string
}

// rows lists the matrix rows, filtered by name when names is not empty: a row per mutant and
// property that must catch it (reference.MutantInfo's CaughtBy, then AlsoCaughtBy), so that
// every property is shown to fail against some mutant, and two rows (race and load) for two
// memory instances.
func rows(names []string) []row {
	var out []row
	for _, m := range reference.Mutants {
		out = append(out, row{name: string(m.Name), mutant: m.Name, property: m.CaughtBy, required: m.Stores, reported: m.Reported})
		for _, p := range m.AlsoCaughtBy {
			out = append(out, row{name: string(m.Name), mutant: m.Name, property: p, required: m.Stores, reported: m.Reported})
		}
	}
	out = append(out, row{name: TwoMemoryInstances, property: "race", required: []string{"memory"}},
		row{name: TwoMemoryInstances, property: "load", required: []string{"memory"}})
	if len(names) == 0 {
		return out
	}
	return slices.DeleteFunc(out, func(r row) bool { return !slices.Contains(names, r.name) })
}

// built reports whether a property exists in this build of the framework.
func built(property string) bool {
	return slices.ContainsFunc(framework.Properties(), func(p *framework.Property) bool { return p.Name == property })
}

// runCorrect runs every property against the correct API on one store: in-process, and the
// process properties against managed processes on the durable stores.
func runCorrect(ctx context.Context, st *stores, store string) ([]Correct, error) {
	run, err := st.runAgainst(ctx, cell{kind: store, labelFilter: "!" + processLabel})
	if err != nil {
		return nil, err
	}
	if store != "memory" {
		managed, err := st.runManaged(ctx, store, reference.MutantNone, processLabel)
		if err != nil {
			return nil, err
		}
		run.Properties = append(run.Properties, managed.Properties...)
	}
	out := correctResults(st, store, "", run)
	for i := range shapes {
		sh := &shapes[i]
		// Load and the retention waits check nothing a shape changes: left out, for time.
		run, err := st.runAgainst(ctx, cell{kind: store, shape: sh, labelFilter: "!" + processLabel + " && !wait:retention && !property:load"})
		if err != nil {
			return nil, fmt.Errorf("shape %s: %w", sh.name, err)
		}
		out = append(out, correctResults(st, store, sh.name, run)...)
	}
	return out, nil
}

// correctResults are the correct API's results of one run, printed as they come.
func correctResults(st *stores, store, shape string, run *reports.Run) []Correct {
	var out []Correct
	for _, p := range run.Properties {
		c := Correct{Store: store, Shape: shape, Property: p.Name, Result: string(p.Verdict), Reason: p.Reason, Seconds: p.Duration.Seconds()}
		if p.Verdict == reports.Unknown {
			c.Result = "fail"
			c.Reason = "unknown: " + p.Reason
		}
		if p.Verdict == reports.Fail {
			c.Reason = failingSpecs(p)
		}
		label := "(correct)"
		if shape != "" {
			label = "(correct " + shape + ")"
		}
		printProgress(st.opts.Progress, label, store, p.Name, c.Result, c.Seconds, c.Reason)
		out = append(out, c)
	}
	return out
}

// runCell runs the property of one row against the mutant on one store.
func runCell(ctx context.Context, st *stores, r row, store string) (Cell, error) {
	cell := Cell{Mutant: r.name, Store: store, Property: r.property}
	required := slices.Contains(r.required, store)
	if !required && !slices.Contains(r.reported, store) {
		cell.Result = NA
		return cell, nil
	}
	cell.Required = required
	if !built(r.property) {
		cell.Result = Pending
		cell.Reason = "property " + r.property + " is not built yet"
		return cell, nil
	}
	instances := 1
	if r.name == TwoMemoryInstances {
		instances = 2
	}
	var run *reports.Run
	var err error
	if isProcessProperty(r.property) {
		run, err = st.runManaged(ctx, store, r.mutant, "property:"+r.property)
	} else {
		c := cellOf(r)
		c.kind, c.mutant, c.instances, c.labelFilter = store, r.mutant, instances, "property:"+r.property
		run, err = st.runAgainst(ctx, c)
	}
	if err != nil {
		return cell, err
	}
	judge(&cell, run)
	return cell, nil
}

// failingSpecs names the failing specs of a property, with the first line of each failure.
func failingSpecs(p reports.Property) string {
	var names []string
	for _, s := range p.Specs {
		if s.Verdict == reports.Fail {
			msg, _, _ := strings.Cut(s.Failure, "\n")
			names = append(names, s.Text+" ("+msg+")")
		}
	}
	return strings.Join(names, "; ")
}

// loadTarget parses an embedded reference target file pointed at urls.
func loadTarget(doc []byte, urls []string, shared bool, retention, lock time.Duration) (*targets.Target, error) {
	vars := map[string]string{
		"RETRYSAFE_URL":          strings.Join(urls, ","),
		"RETRYSAFE_RETENTION":    retention.String(),
		"RETRYSAFE_LOCK_TIMEOUT": lock.String(),
	}
	t, err := targets.Parse("reference target (embedded)", doc, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		return nil, err
	}
	t.SharedStore = shared
	return t, nil
}

// leftPrefix starts the names of every broker topology the consumer rows create
// (ManagedConsumer's topologyNames).
var leftPrefix = broker.DefaultNamePrefix + "-run-"

// compareBrokers lists the brokers before the consumer rows; the function it returns lists them
// again and records in res what the rows left behind under their names. Where the brokers
// cannot be listed (rabbitmqctl out of reach), it says so and compares nothing.
func compareBrokers(ctx context.Context, progress io.Writer, res *Result) func() {
	before, err := broker.TakeInventory(ctx)
	if err != nil {
		fmt.Fprintf(progress, "  brokers: cannot list them (%v): what the consumer rows leave on them is not checked\n", err)
		return func() {}
	}
	return func() {
		after, err := broker.TakeInventory(context.WithoutCancel(ctx))
		if err != nil {
			fmt.Fprintf(progress, "  brokers: cannot list them after the consumer rows: %v\n", err)
			return
		}
		left := after.Since(before).WithPrefix(leftPrefix)
		res.LeftOnBrokers = &left
		if left.Empty() {
			fmt.Fprintf(progress, "  brokers: nothing left behind (RabbitMQ queues and exchanges, JetStream streams compared before and after)\n")
		} else {
			fmt.Fprintf(progress, "  brokers: the consumer rows left %s\n", left)
		}
	}
}
