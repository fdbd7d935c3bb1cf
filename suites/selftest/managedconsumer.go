package selftest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"net"
	"os"
	"strings"
	"time"

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
	// Shape is how the consumer is set up: calling the harness's sink (the default), or
	// consumer.ShapeNoSink (no downstream, test hooks, the event id in a message header on NATS).
	Shape consumer.Shape
}

// managedQueueInstances is how many instances of a reference queue consumer run: competing
// consumers of one queue (or durable consumer), on one store.
const managedQueueInstances = 2

// ManagedConsumer describes the reference consumer that the harness starts through the embedded
// managed target file of its transport: webhook deliveries signed with a fresh secret; a queue
// consumer as two instances on one queue, on a topology the harness creates under names unique
// to the run and deletes at its end.
func ManagedConsumer(cs ConsumerSpec) (*targets.Target, error) {
	docs := map[string][]byte{
		"webhook": examples.ConsumerWebhookManaged,
		"amqp":    examples.ConsumerAMQPManaged,
		"nats":    examples.ConsumerNATSManaged,
	}
	if cs.Shape == consumer.ShapeNoSink {
		docs = map[string][]byte{
			"webhook": examples.ConsumerWebhookNoSinkManaged,
			"amqp":    examples.ConsumerAMQPNoSinkManaged,
			"nats":    examples.ConsumerNATSNoSinkManaged,
		}
	}
	doc, ok := docs[cs.Transport]
	if !ok {
		return nil, fmt.Errorf("unknown consumer transport %q (known: webhook, amqp, nats)", cs.Transport)
	}
	instances := 1
	if cs.Transport != "webhook" && cs.Store != "memory" {
		instances = managedQueueInstances // competing consumers need one shared store
	}
	urls, err := freeURLs(instances)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	mutant := cs.Mutant
	if mutant == "" {
		mutant = "none"
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": cs.Binary, "RETRYSAFE_URL": strings.Join(urls, ","), "RETRYSAFE_STORE": cs.Store, "RETRYSAFE_DSN": cs.DSN,
		"RETRYSAFE_DURABLE": fmt.Sprint(cs.Store != "memory"), "RETRYSAFE_LOCK_TIMEOUT": cs.LockTimeout.String(),
		"RETRYSAFE_DEDUPE_RETENTION": cs.DedupeRetention.String(), "RETRYSAFE_MUTANT": mutant,
		"RETRYSAFE_WEBHOOK_SECRET": "whsec_" + base64.StdEncoding.EncodeToString(secret),
	}
	maps.Copy(vars, topologyNames(cs.Transport))
	name := "consumer-" + cs.Transport + "-managed.yaml (embedded)"
	if cs.Shape == consumer.ShapeNoSink {
		name = "consumer-" + cs.Transport + "-nosink-managed.yaml (embedded)"
	}
	return targets.Parse(name, doc, func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
}

// topologyNames are the names of a queue consumer's topology, unique to the run
// (broker.UniqueName), in the variables its managed target file reads them from. The queue has
// no dot in its name: the harness names its topology after it.
func topologyNames(transport string) map[string]string {
	name := broker.UniqueName("run-" + transport)
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

// freeURLs returns n http:// URLs on free ports of 127.0.0.1, all distinct.
func freeURLs(n int) ([]string, error) {
	var urls []string
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln) // held open until all are picked, so that no port comes twice
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls, nil
}
