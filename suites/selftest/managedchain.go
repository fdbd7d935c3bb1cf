package selftest

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// ChainSpec says which reference chain ManagedChain describes: the reference client, the
// reference API with its outbox, the broker, and the reference consumer, each as a mutant or not.
type ChainSpec struct {
	// Transport is the events' transport: amqp, nats or webhook.
	Transport string
	// Binary is the retrysafe binary every part's lifecycle starts.
	Binary string
	// Dir holds the SQLite files of the API and the consumer.
	Dir string
	// ClientMutant, APIMutant and ConsumerMutant are the parts' mutants ("" = correct).
	ClientMutant, APIMutant, ConsumerMutant string
	// Names labels the names of the exchange or stream and the consumer's queue: "" = "chain".
	Names string
}

// Chain's clocks: the API's events are published at the commit, but after a failed publication
// (the broker link's cut) the relay waits up to its 2 s backoff cap, and a restarted API first
// reconnects: on a loaded machine that took over 3 s (the events self-test's eventsWithin), so
// 6 s; the lock timeout is short so that a retry after a kill is not held long, and the
// consumer's claim expires soon after a kill.
const (
	chainWithin      = 6 * time.Second
	chainLockTimeout = 2 * time.Second
)

// ManagedChain describes the reference chain the harness starts (`retrysafe run --chain`): the
// reference API with its outbox on SQLite (reference-events-TRANSPORT.yaml), the reference
// consumer on SQLite (consumer-amqp-nosink-managed.yaml, consumer-nats-managed.yaml,
// consumer-webhook-nosink-managed.yaml) bound to the exchange, or reading the stream, the API
// publishes to, or taking the API's webhooks (signed the Standard Webhooks way with the secret
// it verifies) from the harness's receiver that passes them on, and the reference client
// (chain-client-managed.yaml) acting as the API's first tenant.
func ManagedChain(cs ChainSpec) (*targets.Target, error) {
	if !slices.Contains(eventsTransports, cs.Transport) {
		return nil, fmt.Errorf("unknown chain transport %q (known: amqp, nats, webhook)", cs.Transport)
	}
	names := cmp.Or(cs.Names, "chain")
	es := EventsSpec{Transport: cs.Transport, Store: "sqlite", DSN: filepath.Join(cs.Dir, "chain-api.db"),
		Binary: cs.Binary, Mutant: cs.APIMutant, Within: chainWithin, Retention: time.Hour, LockTimeout: chainLockTimeout, Names: names}
	if cs.Transport == reference.EventsWebhook {
		es.Signing, es.Secret = "standard-webhooks", newWebhookSecret()
	}
	api, err := ManagedEvents(es)
	if err != nil {
		return nil, fmt.Errorf("the API: %w", err)
	}
	pub := api.Publishing()[0].Publishes[0]
	queue := broker.UniqueName(names + "-consumer")
	topology := map[string]string{}
	switch cs.Transport {
	case reference.EventsAMQP:
		topology["RETRYSAFE_AMQP_EXCHANGE"], topology["RETRYSAFE_AMQP_ROUTING_KEY"] = pub.AMQP.Exchange, pub.AMQP.RoutingKey
		topology["RETRYSAFE_AMQP_QUEUE"] = queue
	case reference.EventsNATS:
		topology["RETRYSAFE_NATS_STREAM"], topology["RETRYSAFE_NATS_SUBJECT"] = pub.NATS.Stream, pub.NATS.Subject
		topology["RETRYSAFE_NATS_DURABLE"] = queue
	}
	// The consumer reads the event id where the API puts it: the message id (AMQP's message_id,
	// JetStream's Nats-Msg-Id), the body's id on a webhook (webhook-id too). On RabbitMQ and
	// webhooks that is the no-sink consumer (it calls nothing of the harness's); on JetStream the
	// no-sink one reads a header of the harness's own, so the chain takes the one that calls the
	// harness's sink for each effect.
	shape := consumer.ShapeNoSink
	if cs.Transport == reference.EventsNATS {
		shape = consumer.ShapeSink
	}
	cons, err := ManagedConsumer(ConsumerSpec{Transport: cs.Transport, Store: "sqlite", DSN: filepath.Join(cs.Dir, "chain-consumer.db"),
		Binary: cs.Binary, Mutant: cs.ConsumerMutant, LockTimeout: chainLockTimeout, DedupeRetention: time.Hour, Names: names,
		Shape: shape, Topology: topology, Secret: es.Secret})
	if err != nil {
		api.Close()
		return nil, fmt.Errorf("the consumer: %w", err)
	}
	vars := map[string]string{"RETRYSAFE_BIN": cs.Binary, "RETRYSAFE_MUTANT": cmp.Or(cs.ClientMutant, "none")}
	client, err := targets.Parse("chain-client-managed.yaml (embedded)", examples.ChainClientManaged, varsThenEnv(vars))
	if err != nil {
		api.Close()
		cons.Close()
		return nil, fmt.Errorf("the client: %w", err)
	}
	return targets.NewChain("reference-chain-"+cs.Transport, client, api, cons)
}
