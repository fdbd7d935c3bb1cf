package selftest

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// The rows of the API's events: the reference API publishing its order.created events through
// its outbox (serve --events), started through the example file of each transport. The correct
// API passes the events properties on every store on webhooks, and on sqlite and postgres on
// RabbitMQ and JetStream (the store code under a broker is the one the webhook rows prove on
// every store), the fault properties (kills, the broker link's cuts) on the brokers on sqlite
// only: what they add under a broker is the publisher's (its reconnection, its confirms), not the
// store's, and the rows on PostgreSQL are the self-test's scarcest slots; each events mutant is
// killed on sqlite and postgres by the property that catches it, on webhooks (no broker: the
// cheapest cell; the correct rows prove the brokers).

// EventsSpec says which reference API with events ManagedEvents describes.
type EventsSpec struct {
	// Transport is amqp, nats or webhook.
	Transport string
	// Store and DSN are the API's store (DSN "" = the store's default).
	Store, DSN string
	// Binary is the retrysafe binary the lifecycle starts.
	Binary string
	// Mutant is the API's mutant ("" = correct).
	Mutant string
	// Within is how long after an order's 2xx its event must be published (what the file declares).
	Within time.Duration
	// Retention and LockTimeout are the API's (and what the file declares).
	Retention, LockTimeout time.Duration
	// Names labels the names of the exchange or stream (broker.UniqueName): "" = "run".
	Names string
	// Signing and Secret sign the API's webhooks (serve --events-signing): "" = unsigned.
	Signing, Secret string
	// ChannelPerPublish makes the API's AMQP publisher open a channel per publication (serve
	// --events-channel-per-publish): a publisher that waits for the broker's answer.
	ChannelPerPublish bool
}

// eventsWithin is the self-test's publishes[].within, what the reference API can honestly
// promise: the relay publishes at the commit, but after a failed publication it waits up to
// its backoff cap (2 s) before the next try, and a restarted process first reconnects to its
// store and broker; on a loaded machine (the self-test beside go test -race) that took 3.1-3.7 s.
// A spec waits it out only for an event that does not come (a mutant's); the cut of
// event-under-broker-outage lasts it too (publishes[].outage defaults to within), longer than
// relay-gives-up's 2 s.
const eventsWithin = 6 * time.Second

// eventsTransports are the transports of the events rows.
var eventsTransports = []string{reference.EventsWebhook, reference.EventsAMQP, reference.EventsNATS}

// eventsCellTransport is the transport the events mutants' cells run on.
const eventsCellTransport = reference.EventsWebhook

// ManagedEvents describes the reference API with events that the harness starts through the
// embedded example file of its transport: one process, on a port reserved for it, its exchange
// or stream named for the run (created by the harness and deleted at its end).
func ManagedEvents(es EventsSpec) (*targets.Target, error) {
	docs := map[string][]byte{
		reference.EventsAMQP:    examples.ReferenceEventsAMQP,
		reference.EventsNATS:    examples.ReferenceEventsNATS,
		reference.EventsWebhook: examples.ReferenceEventsWebhook,
	}
	doc, ok := docs[es.Transport]
	if !ok {
		return nil, fmt.Errorf("unknown events transport %q (known: amqp, nats, webhook)", es.Transport)
	}
	reserved, err := ports.Reserve(1)
	if err != nil {
		return nil, err
	}
	name := broker.UniqueName(cmp.Or(es.Names, "run") + "-events")
	vars := map[string]string{
		"RETRYSAFE_BIN": es.Binary, "RETRYSAFE_URL": reserved.URLs()[0], "RETRYSAFE_REUSE_PORT": "true",
		"RETRYSAFE_STORE": es.Store, "RETRYSAFE_DSN": es.DSN, "RETRYSAFE_DURABLE": fmt.Sprint(es.Store != "memory"),
		"RETRYSAFE_MUTANT": cmp.Or(es.Mutant, "none"), "RETRYSAFE_EVENTS_WITHIN": cmp.Or(es.Within, eventsWithin).String(),
		"RETRYSAFE_RETENTION":       cmp.Or(es.Retention, reference.DefaultRetention).String(),
		"RETRYSAFE_LOCK_TIMEOUT":    cmp.Or(es.LockTimeout, reference.DefaultLockTimeout).String(),
		"RETRYSAFE_EVENTS_EXCHANGE": name, "RETRYSAFE_EVENTS_STREAM": name, "RETRYSAFE_EVENTS_SUBJECT": name + ".orders.created",
		"RETRYSAFE_EVENTS_SIGNING": cmp.Or(es.Signing, "none"), "RETRYSAFE_WEBHOOK_SECRET": es.Secret,
		"RETRYSAFE_EVENTS_CHANNEL_PER_PUBLISH": fmt.Sprint(es.ChannelPerPublish),
	}
	return parseOwning("reference-events-"+es.Transport+".yaml (embedded)", doc, vars, reserved)
}

// runEvents starts the reference API with events (transport, store, mutant) and runs the
// selected properties against it.
func (st *stores) runEvents(ctx context.Context, transport, store string, m reference.Mutant, labelFilter string) (*reports.Run, error) {
	sp, err := st.space(ctx, store)
	if err != nil {
		return nil, err
	}
	defer st.release(sp)
	dsn := sp.dsn
	if store == "sqlite" {
		dsn = filepath.Join(st.dir, fmt.Sprintf("events-%d.db", sp.cell))
	}
	t, err := ManagedEvents(EventsSpec{Transport: transport, Store: store, DSN: dsn, Binary: st.opts.Binary, Mutant: string(m),
		Retention: max(st.opts.Retention, 10*st.opts.LockTimeout), LockTimeout: st.opts.LockTimeout, Names: sp.names})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return st.run(ctx, t, sp.cell, labelFilter, 0)
}

// eventsFaultStores are the stores on which the correct API with events on a broker runs the
// fault properties of its events (webhooks run them on every store).
var eventsFaultStores = []string{"sqlite"}

// eventsFaultLabels select the fault properties of the events: they kill the API or cut its link.
const eventsFaultLabels = "fault:process || fault:network"

// correctEventsJobs are the runs of the correct API with events on one store: webhooks on every
// store, the brokers on the required ones (their fault properties on eventsFaultStores).
func (st *stores) correctEventsJobs(store string) []*job {
	var out []*job
	for _, tr := range eventsTransports {
		if tr != reference.EventsWebhook && !slices.Contains(brokerRequired, store) {
			continue
		}
		filter := framework.EventsLabel
		if tr != reference.EventsWebhook && !slices.Contains(eventsFaultStores, store) {
			filter += " && !(" + eventsFaultLabels + ")"
		}
		shape := "events-" + tr
		out = append(out, &job{name: "correct api " + store + " " + shape, pg: store == "postgres", events: true,
			run: func(ctx context.Context) ([]Correct, *Cell, error) {
				run, err := st.runEvents(ctx, tr, store, reference.MutantNone, filter)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", shape, err)
				}
				return correctResults(store, shape, run), nil, nil
			}})
	}
	return out
}

// isEventsProperty reports whether a property checks the events an API publishes.
func isEventsProperty(name string) bool {
	return slices.ContainsFunc(framework.Properties(), func(p *framework.Property) bool {
		return p.Name == name && slices.Contains(p.Labels, framework.EventsLabel)
	})
}
