package queue

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// waitLimit bounds every wait of these tests for an event.
const waitLimit = 10 * time.Second

func testAMQPURL() string {
	if u := os.Getenv("RETRYSAFE_AMQP_URL"); u != "" {
		return u
	}
	return DefaultAMQPURL
}

func testNATSURL() string {
	if u := os.Getenv("RETRYSAFE_NATS_URL"); u != "" {
		return u
	}
	return DefaultNATSURL
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// settledState reads the durable consumer's counts until nothing is pending or waitLimit passes,
// and returns the last it read.
func settledState(t *testing.T, topo *broker.JetStreamTopology) (broker.ConsumerState, error) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s, err := topo.ConsumerState(testContext(t))
		if (err == nil && s.Pending == 0 && s.AckPending == 0) || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func runName(t *testing.T) string {
	return broker.UniqueName("test-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
}

// amqpQueue creates a run's exchange and queue, deleted when the test ends, and a publisher.
func amqpQueue(t *testing.T) (*broker.AMQPTopology, broker.Publisher) {
	t.Helper()
	ctx := testContext(t)
	topo, err := broker.NewAMQPTopology(runName(t), broker.WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	setUp(t, topo, "RabbitMQ (set RETRYSAFE_AMQP_URL to use another)")
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close() })
	return topo, pub
}

// natsStream creates a run's stream (and, with consumer, its durable consumer), deleted when
// the test ends, and a publisher.
func natsStream(t *testing.T, consumer bool) (*broker.JetStreamTopology, *broker.JetStreamPublisher) {
	t.Helper()
	ctx := testContext(t)
	topo, err := broker.NewJetStreamTopology(runName(t), broker.WithNATSURL(testNATSURL()))
	if err != nil {
		t.Fatal(err)
	}
	setUp(t, topo, "NATS JetStream (set RETRYSAFE_NATS_URL to use another)")
	if consumer {
		if err := topo.CreateConsumer(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close() })
	return topo, pub
}

// setUp sets topo up, failing the test with what it needs when it cannot, and tears it down
// when the test ends.
func setUp(t *testing.T, topo broker.Topology, needs string) {
	t.Helper()
	if err := topo.Setup(testContext(t)); err != nil {
		t.Fatalf("these tests need %s: %v", needs, err)
	}
	t.Cleanup(func() {
		if err := topo.Teardown(context.Background()); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
}

func amqpOptions(topo *broker.AMQPTopology) Options {
	return Options{Broker: AMQP, URL: topo.URL, Queue: topo.Queue}
}

func natsOptions(topo *broker.JetStreamTopology) Options {
	return Options{Broker: NATS, URL: topo.URL, Stream: topo.Stream, Subject: topo.Subject, Durable: topo.Durable}
}

func publish(t *testing.T, pub broker.Publisher, ids ...string) {
	t.Helper()
	for _, id := range ids {
		r, err := pub.Publish(testContext(t), broker.Message{ID: id, Body: []byte("body of " + id)})
		if err != nil || r.Duplicate {
			t.Fatalf("publish %s: %+v, %v", id, r, err)
		}
	}
}

// checkEachOnce checks that each of ids was delivered exactly once, as a first delivery with
// the body publish gave it.
func checkEachOnce(t *testing.T, rec *recorder, ids []string) {
	t.Helper()
	for _, id := range ids {
		d := rec.deliveries(id)
		if len(d) != 1 || d[0].Redelivered || d[0].Attempt != 1 || string(d[0].Body) != "body of "+id {
			t.Errorf("%s: deliveries %+v, want one first delivery", id, d)
		}
	}
}

// checkCompetingConsumersShare runs two consumers with opts, publishes 40 messages with pub,
// and checks that each was handled by one consumer only, and that both handled some.
func checkCompetingConsumersShare(t *testing.T, opts Options, pub broker.Publisher) {
	t.Helper()
	recs := []*recorder{newRecorder(), newRecorder()}
	for _, rec := range recs {
		start(t, opts, func(ctx context.Context, m Message) Decision {
			time.Sleep(5 * time.Millisecond)
			return rec.acking(ctx, m)
		})
	}
	all := ids("c", 40)
	publish(t, pub, all...)
	deadline := time.Now().Add(waitLimit)
	for recs[0].total()+recs[1].total() < len(all) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range all {
		if n := len(recs[0].deliveries(id)) + len(recs[1].deliveries(id)); n != 1 {
			t.Errorf("%s handled %d times by the two consumers, want 1", id, n)
		}
	}
	if recs[0].total() == 0 || recs[1].total() == 0 {
		t.Errorf("consumers handled %d and %d messages: not shared", recs[0].total(), recs[1].total())
	}
}

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// brokerProxy starts an embedded Toxiproxy in front of the broker of brokerURL and returns
// it with the URL through it.
func brokerProxy(t *testing.T, brokerURL string) (*faults.Proxy, string) {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	p, err := n.Proxy("broker", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Listen()
	return p, u.String()
}

// inject injects f and heals it when the test ends.
func inject(t *testing.T, f faults.Fault) {
	t.Helper()
	if err := f.Inject(testContext(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Heal(context.Background()) })
}

func heal(t *testing.T, f faults.Fault) {
	t.Helper()
	if err := f.Heal(testContext(t)); err != nil {
		t.Fatal(err)
	}
}
