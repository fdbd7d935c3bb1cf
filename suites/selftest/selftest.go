// Package selftest runs retrysafe's properties against its own reference API: the correct
// API on every store must pass every property, and each mutant on every store of its row
// must be killed by the property named to catch it. It is the proof that every check can
// fail and that none fails the correct API.
package selftest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	_ "github.com/retrysafe/retrysafe/suites" // every side's properties: the self-test runs them all

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
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
	// Phase is the phase its run ran in: PhaseSerial or PhaseParallel.
	Phase string `json:"phase"`
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
	// Phase is the phase it ran in: PhaseSerial or PhaseParallel.
	Phase string `json:"phase"`
	// Log is its log file (the harness's notices, every spec's verdict, the failures'
	// evidence, its processes' output); "" when logs were not kept.
	Log string `json:"log,omitempty"`
}

// Result is the whole matrix.
type Result struct {
	Correct []Correct `json:"correct"`
	Cells   []Cell    `json:"cells"`
	// RunID names this self-test: its cells' schemas, Redis keys and broker topologies carry it.
	RunID string `json:"run_id"`
	// Parallel is how many jobs the parallel phase ran at once (PostgreSQLSlots of them on
	// PostgreSQL).
	Parallel        int `json:"parallel"`
	PostgreSQLSlots int `json:"postgresql_slots"`
	// Seconds is how long the self-test took; PhaseSeconds how long each phase took.
	Seconds      float64            `json:"seconds"`
	PhaseSeconds map[string]float64 `json:"phase_seconds,omitempty"`
	// Left is what the cells left in the services they shared (schemas, Redis keys, broker
	// topologies under the self-test's names), after its sweep: a failure when not empty. Nil
	// when it could not be checked.
	Left *Left `json:"left,omitempty"`
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
	// NoClients the reference client's; NoCorrect every run of the correct reference (only the
	// mutant cells run).
	NoConsumers, NoAPI, NoClients, NoCorrect bool
	// OnlyEvents keeps only the rows of the API's events: the correct API with events on each
	// store and transport, and the events mutants' cells.
	OnlyEvents bool
	// OnlyAsync keeps only the rows of the asynchronous API: the correct asynchronous API on
	// each of its stores, and the async mutants' cells.
	OnlyAsync bool
	// ConsumerShape keeps only the consumer rows of one shape (consumer.ShapeSink or
	// consumer.ShapeNoSink); "" = both.
	ConsumerShape consumer.Shape
	// Parallel is how many jobs the parallel phase runs at once (default 6 × GOMAXPROCS; 1 runs
	// every job one after another).
	Parallel int
	// PostgresSlots bounds the jobs on PostgreSQL that run at once (default: what its
	// max_connections leaves, see postgresSlots).
	PostgresSlots int
	// LogDir receives each job's log, a file per job ("" = none are kept).
	LogDir string
	// RunID names the self-test in its cells' schemas, Redis keys and broker topologies
	// (default: "st" and 8 random hex digits).
	RunID string
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
	if o.Parallel <= 0 {
		o.Parallel = defaultParallel()
	}
	if o.RunID == "" {
		o.RunID = newRunID()
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
	if r.Left != nil && !r.Left.Empty() {
		out = append(out, "the cells left "+r.Left.String())
	}
	return out
}

// correctLabel names the run of a correct result in its line of progress.
func correctLabel(c Correct) string {
	switch {
	case c.Side == SideClient:
		return "(correct client)"
	case c.Transport != "" && c.Shape != "" && c.Shape != string(consumer.ShapeSink):
		return "(correct consumer " + c.Transport + " " + c.Shape + ")"
	case c.Transport != "":
		return "(correct consumer " + c.Transport + ")"
	case c.Shape != "":
		return "(correct " + c.Shape + ")"
	}
	return "(correct)"
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
	if c.Shape != "" && c.Shape != string(consumer.ShapeSink) {
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

// correctResults are the correct reference's results of one run.
func correctResults(store, shape string, run *reports.Run) []Correct {
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
		out = append(out, c)
	}
	return out
}

// runCell runs the property of one row against the mutant on one store.
func runCell(ctx context.Context, st *stores, r row, store string) (Cell, error) {
	cell := Cell{Mutant: r.name, Store: store, Property: r.property}
	if isEventsProperty(r.property) {
		cell.Shape = "events-" + eventsCellTransport // on every store, so that the matrix keeps the row whole
	}
	if r.mutant.NeedsAsync() {
		cell.Shape = asyncShape
	}
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
	switch {
	case r.mutant.NeedsAsync():
		run, err = st.runAsync(ctx, store, r.mutant, "property:"+r.property)
	case isEventsProperty(r.property):
		run, err = st.runEvents(ctx, eventsCellTransport, store, r.mutant, "property:"+r.property)
	case isProcessProperty(r.property):
		run, err = st.runManaged(ctx, store, r.mutant, "property:"+r.property)
	default:
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
