package selftest

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// ConsumerSpec says which reference consumer ManagedConsumer describes.
type ConsumerSpec struct {
	// Transport is webhook, amqp or nats.
	Transport string
	// Store and DSN are the consumer's store (DSN "" = the store's default).
	Store, DSN string
	// Binary is the retrysafe binary the lifecycle starts.
	Binary string
	// Mutant is the consumer's mutant ("" = correct).
	Mutant string
	// LockTimeout and DedupeRetention are the consumer's (and what the target file declares).
	LockTimeout, DedupeRetention time.Duration
	// Names labels the names of its broker topology (broker.UniqueName): "" = "run".
	Names string
	// Shape is how the consumer is set up: calling the harness's sink (the default),
	// consumer.ShapeNoSink (no downstream, test hooks: HTTP on webhooks and NATS, message headers
	// on RabbitMQ; the event id in a message header on NATS), or consumer.ShapeLongAckWait (the
	// no-sink NATS consumer creating its durable with AckWait consumer.LongAckWait).
	Shape consumer.Shape
	// Topology overrides names of its broker topology (the variables topologyNames sets): a
	// chain's consumer binds to the exchange, or reads the stream, its API publishes to.
	Topology map[string]string
	// Secret is the webhook consumer's signing secret ("" = a fresh one): a chain's consumer
	// verifies what its API signs.
	Secret string
}

// managedQueueInstances is how many instances of a reference queue consumer run: competing
// consumers of one queue (or durable consumer), on one store.
const managedQueueInstances = 2

// ManagedConsumer describes the reference consumer that the harness starts through the embedded
// managed target file of its transport: webhook deliveries signed with a fresh secret; a queue
// consumer as two instances on one queue, each on a port reserved for it (faults/ports), on a topology the harness creates under names unique
// to the run and deletes at its end.
func ManagedConsumer(cs ConsumerSpec) (*targets.Target, error) {
	docs := map[string][]byte{
		"webhook": examples.ConsumerWebhookManaged,
		"amqp":    examples.ConsumerAMQPManaged,
		"nats":    examples.ConsumerNATSManaged,
	}
	switch cs.Shape {
	case consumer.ShapeNoSink:
		docs = map[string][]byte{
			"webhook": examples.ConsumerWebhookNoSinkManaged,
			"amqp":    examples.ConsumerAMQPNoSinkManaged,
			"nats":    examples.ConsumerNATSNoSinkManaged,
		}
	case consumer.ShapeLongAckWait:
		docs = map[string][]byte{"nats": examples.ConsumerNATSNoSinkManaged}
	}
	doc, ok := docs[cs.Transport]
	if !ok {
		return nil, fmt.Errorf("unknown consumer transport %q (known: webhook, amqp, nats)", cs.Transport)
	}
	instances := 1
	if cs.Transport != "webhook" && cs.Store != "memory" {
		instances = managedQueueInstances // competing consumers need one shared store
	}
	reserved, err := ports.Reserve(instances)
	if err != nil {
		return nil, err
	}
	mutant := cs.Mutant
	if mutant == "" {
		mutant = "none"
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": cs.Binary, "RETRYSAFE_URL": strings.Join(reserved.URLs(), ","), "RETRYSAFE_REUSE_PORT": "true",
		"RETRYSAFE_STORE": cs.Store, "RETRYSAFE_DSN": cs.DSN,
		"RETRYSAFE_DURABLE": fmt.Sprint(cs.Store != "memory"), "RETRYSAFE_LOCK_TIMEOUT": cs.LockTimeout.String(),
		"RETRYSAFE_DEDUPE_RETENTION": cs.DedupeRetention.String(), "RETRYSAFE_MUTANT": mutant,
		"RETRYSAFE_WEBHOOK_SECRET": cmp.Or(cs.Secret, newWebhookSecret()),
	}
	maps.Copy(vars, topologyNames(cmp.Or(cs.Names, "run"), cs.Transport))
	maps.Copy(vars, cs.Topology)
	name := "consumer-" + cs.Transport + "-managed.yaml (embedded)"
	switch cs.Shape {
	case consumer.ShapeNoSink:
		name = "consumer-" + cs.Transport + "-nosink-managed.yaml (embedded)"
	case consumer.ShapeLongAckWait:
		// The consumer creates its durable with the long AckWait; the harness reads it.
		vars["RETRYSAFE_CREATE_DURABLE"], vars["RETRYSAFE_ACK_WAIT"] = "false", consumer.LongAckWait.String()
		name = "consumer-nats-nosink-managed.yaml (embedded, AckWait " + consumer.LongAckWait.String() + ")"
	}
	return parseOwning(name, doc, vars, reserved)
}

// newWebhookSecret is a fresh Standard Webhooks secret: whsec_ and 24 random bytes in base64.
func newWebhookSecret() string {
	secret := make([]byte, 24)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	return "whsec_" + base64.StdEncoding.EncodeToString(secret)
}

// topologyNames are the names of a queue consumer's topology, labelled and unique to the run
// (broker.UniqueName), in the variables its managed target file reads them from. The queue has
// no dot in its name: the harness names its topology after it.
func topologyNames(label, transport string) map[string]string {
	name := broker.UniqueName(label + "-" + transport)
	switch transport {
	case "amqp":
		return map[string]string{"RETRYSAFE_AMQP_EXCHANGE": name + "-x", "RETRYSAFE_AMQP_QUEUE": name + "-q",
			"RETRYSAFE_AMQP_ROUTING_KEY": name}
	case "nats":
		return map[string]string{"RETRYSAFE_NATS_STREAM": name, "RETRYSAFE_NATS_SUBJECT": name + ".events",
			"RETRYSAFE_NATS_DURABLE": name + "-consumer"}
	}
	return nil
}
