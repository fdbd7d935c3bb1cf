package queue

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// A consumer that creates its stream (Declare) and consumes a durable push consumer it creates
// too (Push), shared by two runs as a queue group: each message handled once, its headers
// handed to the handler; DeleteOnExit deletes the stream when the runs end.
func TestNATSPushDeclaredStream(t *testing.T) {
	t.Parallel()
	name := runName(t)
	opts := Options{Broker: NATS, URL: testNATSURL(), Stream: name, Subject: name + ".events", Durable: name + "-c",
		Push: true, Declare: true}
	topo, err := broker.NewJetStreamTopology(name, broker.WithNATSURL(testNATSURL()), broker.WithDurable(opts.Durable))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topo.Teardown(context.Background()) })
	rec := newRecorder()
	opts.Settled = rec.settle
	first := start(t, opts, rec.acking)
	second := opts
	second.DeleteOnExit = true
	last := start(t, second, rec.acking)
	if st, err := topo.ConsumerState(testContext(t)); err != nil || !st.Push {
		t.Fatalf("the durable: %+v, %v; want a push consumer Run created", st, err)
	}
	pub, err := topo.Publisher(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	all := ids("p", 10)
	for _, id := range all {
		if _, err := pub.Publish(testContext(t), broker.Message{ID: id, Body: []byte("body of " + id), Headers: map[string]string{"X-Event-Id": "evt-" + id}}); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitAcked(t, all)
	checkEachOnce(t, rec, all)
	if got := rec.deliveries(all[1])[0].Header("x-event-id"); got != "evt-"+all[1] {
		t.Errorf("header X-Event-Id = %q, want evt-%s (case-insensitive)", got, all[1])
	}
	first.stop(t)
	last.stop(t)
	if ok, err := topo.Exists(testContext(t)); ok || err != nil {
		t.Errorf("the stream after DeleteOnExit: exists %v, %v; want gone", ok, err)
	}
	// A stream another process made with a two-minute window keeps it: Declare does not touch it.
	if _, err := topo.StreamDuplicates(testContext(t)); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("StreamDuplicates after the deletion: %v, want stream not found", err)
	}
}

// An AMQP consumer that declares its queue (Declare) consumes it through the default exchange.
func TestAMQPDeclaredQueue(t *testing.T) {
	t.Parallel()
	name := runName(t)
	topo, err := broker.NewAMQPTopology(name, broker.WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	topo.Exchange, topo.RoutingKey = "", ""
	t.Cleanup(func() { topo.Teardown(context.Background()) })
	rec := newRecorder()
	opts := Options{Broker: AMQP, URL: testAMQPURL(), Queue: topo.Queue, Declare: true, Settled: rec.settle}
	r := start(t, opts, rec.acking)
	pub, err := broker.NewAMQPPublisher(testContext(t), topo.URL, "", topo.Queue)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	publish(t, pub, "a", "b")
	rec.waitAcked(t, []string{"a", "b"})
	r.stop(t)
	checkEachOnce(t, rec, []string{"a", "b"})
}
