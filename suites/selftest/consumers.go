package selftest

import (
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

// Consumer cells' settings: a short dedupe retention, so that late-redelivery waits it out in a
// few seconds; the forgets-early mutant's cell declares at most 3 s.
const (
	consumerDedupeRetention = 4 * time.Second
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

// consumerShapes are the shapes of the reference consumer the correct rows run in.
var consumerShapes = []consumer.Shape{consumer.ShapeSink, consumer.ShapeNoSink}

// runConsumerCorrect runs every consumer property against the correct consumer on one store and
// transport, in one shape.
func runConsumerCorrect(ctx context.Context, st *stores, transport, store string, shape consumer.Shape) ([]Correct, error) {
	run, err := st.runConsumer(ctx, transport, store, consumer.MutantNone, shape, "consumer:"+transport, consumerDedupeRetention)
	if err != nil {
		return nil, fmt.Errorf("correct consumer (%s, %s, %s): %w", transport, store, shape, err)
	}
	label := "consumer " + transport
	if shape == consumer.ShapeNoSink {
		label += " " + string(shape)
	}
	out := correctResults(st, store, label, run)
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
	retention := consumerDedupeRetention
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
	id := st.n.Add(1)
	dsn := ""
	switch store {
	case "sqlite":
		dsn = filepath.Join(st.dir, fmt.Sprintf("consumer-%d.db", id))
	case "postgres":
		dsn = st.opts.PostgresDSN
	case "redis":
		dsn = st.opts.RedisURL
	}
	return onFreePorts(func() (*reports.Run, error) {
		t, err := ManagedConsumer(ConsumerSpec{Transport: transport, Store: store, DSN: dsn, Binary: st.opts.Binary,
			Mutant: string(m), LockTimeout: st.opts.LockTimeout, DedupeRetention: retention, Shape: shape})
		if err != nil {
			return nil, err
		}
		defer t.Close()
		return st.run(ctx, t, id, labelFilter, 0)
	})
}
