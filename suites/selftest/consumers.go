package selftest

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// The consumer rows of the matrix: the reference consumer on each transport and store, correct
// (every consumer property) and as each of its mutants (only the property that catches it).
// Webhook rows are required on every store of the mutant; broker rows run on SQLite and
// PostgreSQL only, where they are required: the store code under a broker is the one the webhook
// rows prove on every store, and each broker cell costs seconds of kills and redeliveries.

// brokerRequired are the stores on which broker rows are required.
var brokerRequired = []string{"sqlite", "postgres"}

// Consumer cells' settings. The dedupe retention outlasts whatever a loaded machine makes of a
// run (a backlog of redeliveries, restarts after kills): a redelivery past the retention may
// take effect again, and the correct consumer would seem to apply an event twice. late-redelivery
// checks it from below, within consumerLateWait (its --max-wait): the forgets-early mutant, which
// forgets after about a second whatever it declares, is caught there; its cell declares 3 s.
const (
	consumerDedupeRetention = time.Minute
	consumerLateWait        = 4 * time.Second
	forgetsEarlyRetention   = 3 * time.Second
)

// consumerTransports are the transports of the consumer rows.
var consumerTransports = []string{consumer.TransportWebhook, consumer.TransportAMQP, consumer.TransportNATS}

// consumerRows lists a row per consumer mutant, transport it applies to and property (in its
// shape) that must catch it there, filtered by name and shape ("" = every shape).
func consumerRows(names []string, shape consumer.Shape) []row {
	var out []row
	for _, m := range consumer.Mutants {
		if len(names) > 0 && !slices.Contains(names, string(m.Name)) {
			continue
		}
		for _, tr := range m.Transports {
			for _, c := range m.CatchesOn(tr) {
				if shape != "" && c.Shape != shape {
					continue
				}
				r := row{name: string(m.Name), consumer: m.Name, transport: tr, property: c.Property, shape: c.Shape,
					required: m.Stores, reported: m.Reported}
				if c.Stores != nil {
					r.required, r.reported = c.Stores, nil
				}
				if tr != consumer.TransportWebhook {
					required := r.required
					r.required, r.reported = nil, nil
					for _, s := range required {
						if slices.Contains(brokerRequired, s) {
							r.required = append(r.required, s)
						}
					}
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// shapeRow is how the correct consumer runs in one shape: on which transports, which properties.
type shapeRow struct {
	shape      consumer.Shape
	transports []string
	// properties is the label filter of its properties ("" = every consumer property).
	properties string
	// retention is the dedupe retention the consumer declares (0: consumerDedupeRetention).
	retention time.Duration
}

// crashProperties are the consumer properties whose waits follow the broker's redelivery clock
// after a kill.
const crashProperties = "(property:crash-before-ack || property:crash-after-ack || property:crash-under-delivery)"

// consumerShapes are the shapes of the reference consumer the correct rows run in: every property
// in the sink and no-sink shapes; on a JetStream durable of a long AckWait, only the crash
// properties (the others wait for no redelivery after a kill), with a dedupe retention that
// outlasts the broker's redelivery (a redelivery past the retention may take effect again).
var consumerShapes = []shapeRow{
	{shape: consumer.ShapeSink, transports: consumerTransports},
	{shape: consumer.ShapeNoSink, transports: consumerTransports},
	{shape: consumer.ShapeLongAckWait, transports: []string{consumer.TransportNATS}, properties: crashProperties, retention: longAckWaitRetention},
}

// longAckWaitRetention is the dedupe retention in the long-ack-wait shape: several AckWaits.
const longAckWaitRetention = 10 * consumer.LongAckWait

// shapeOf returns the row of a shape.
func shapeOf(shape consumer.Shape) shapeRow {
	for _, r := range consumerShapes {
		if r.shape == shape {
			return r
		}
	}
	return shapeRow{shape: shape}
}

// runConsumerCorrect runs the consumer properties of a shape against the correct consumer on one
// store and transport.
func runConsumerCorrect(ctx context.Context, st *stores, transport, store string, shape consumer.Shape) ([]Correct, error) {
	row := shapeOf(shape)
	filter := "consumer:" + transport
	if row.properties != "" {
		filter += " && " + row.properties
	}
	run, err := st.runConsumer(ctx, transport, store, consumer.MutantNone, shape, filter, cmp.Or(row.retention, consumerDedupeRetention))
	if err != nil {
		return nil, fmt.Errorf("correct consumer (%s, %s, %s): %w", transport, store, shape, err)
	}
	out := correctResults(store, "", run)
	for i := range out {
		out[i].Transport, out[i].Shape = transport, string(shape)
	}
	return out, nil
}

// runConsumerCell runs the property of one consumer row against the mutant on one store.
func runConsumerCell(ctx context.Context, st *stores, r row, store string) (Cell, error) {
	cell := Cell{Mutant: r.name, Transport: r.transport, Store: store, Property: r.property, Shape: string(r.shape)}
	required := slices.Contains(r.required, store)
	if !required && !slices.Contains(r.reported, store) {
		cell.Result = NA
		info, _ := r.consumer.Info()
		switch {
		case !slices.Contains(info.Stores, store):
		case r.transport != consumer.TransportWebhook && !slices.Contains(brokerRequired, store):
			cell.Reason = "broker rows run on " + strings.Join(brokerRequired, " and ") + " only"
		default:
			cell.Reason = "its other shape's row proves it on this store; this proof runs on " + strings.Join(r.required, " and ")
		}
		return cell, nil
	}
	cell.Required = required
	retention := cmp.Or(shapeOf(r.shape).retention, consumerDedupeRetention)
	if r.consumer == consumer.MutantDedupeForgetsEarly {
		retention = forgetsEarlyRetention
	}
	run, err := st.runConsumer(ctx, r.transport, store, r.consumer, r.shape, "property:"+r.property+" && consumer:"+r.transport, retention)
	if err != nil {
		return cell, err
	}
	judge(&cell, run)
	return cell, nil
}

// judge sets a cell's result from the run of its property: killed when it failed.
func judge(cell *Cell, run *reports.Run) {
	cell.Result = Survived
	for _, p := range run.Properties {
		if p.Name != cell.Property {
			continue
		}
		switch p.Verdict {
		case reports.Fail:
			cell.Result, cell.Reason = Killed, failingSpecs(p)
		case reports.Pass:
		default:
			cell.Reason = string(p.Verdict) + ": " + p.Reason
		}
	}
}

// runConsumer starts the reference consumer (transport, store, mutant) through its managed
// target file and runs the selected properties against it.
func (st *stores) runConsumer(ctx context.Context, transport, store string, m consumer.Mutant, shape consumer.Shape, labelFilter string, retention time.Duration) (*reports.Run, error) {
	sp, err := st.space(ctx, store)
	if err != nil {
		return nil, err
	}
	defer st.release(sp)
	dsn := sp.dsn
	if store == "sqlite" {
		dsn = filepath.Join(st.dir, fmt.Sprintf("consumer-%d.db", sp.cell))
	}
	t, err := ManagedConsumer(ConsumerSpec{Transport: transport, Store: store, DSN: dsn, Binary: st.opts.Binary,
		Mutant: string(m), LockTimeout: st.opts.LockTimeout, DedupeRetention: retention, Shape: shape, Names: sp.names})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return st.run(ctx, t, sp.cell, labelFilter, consumerLateWait)
}
