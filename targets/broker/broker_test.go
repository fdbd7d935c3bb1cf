package broker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// testAMQPURL is RETRYSAFE_AMQP_URL, or the local RabbitMQ.
func testAMQPURL() string {
	if u := os.Getenv("RETRYSAFE_AMQP_URL"); u != "" {
		return u
	}
	return DefaultAMQPURL
}

// testNATSURL is RETRYSAFE_NATS_URL, or the local NATS.
func testNATSURL() string {
	if u := os.Getenv("RETRYSAFE_NATS_URL"); u != "" {
		return u
	}
	return DefaultNATSURL
}

// testContext returns a context that ends with the test, or after d.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// testName returns a unique run name labelled with the test's name.
func testName(t *testing.T) string {
	label := strings.NewReplacer("/", "-", " ", "-", "#", "-").Replace(t.Name())
	return UniqueName("test-" + label)
}

// setupAMQP creates a run's exchange and queue and deletes them when the test ends.
func setupAMQP(t *testing.T) *AMQPTopology {
	t.Helper()
	topo, err := NewAMQPTopology(testName(t), WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	setUp(t, topo, "RabbitMQ at "+redactURL(topo.URL)+" (set RETRYSAFE_AMQP_URL to use another)")
	return topo
}

// setupJetStream creates a run's stream and deletes it when the test ends.
func setupJetStream(t *testing.T, opts ...Option) *JetStreamTopology {
	t.Helper()
	topo, err := NewJetStreamTopology(testName(t), append([]Option{WithNATSURL(testNATSURL())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	setUp(t, topo, "NATS with JetStream at "+topo.URL+" (set RETRYSAFE_NATS_URL to use another)")
	return topo
}

// setUp sets topo up, failing the test with what it needs when it cannot, and tears it down
// when the test ends.
func setUp(t *testing.T, topo Topology, needs string) {
	t.Helper()
	if err := topo.Setup(testContext(t, 10*time.Second)); err != nil {
		t.Fatalf("these tests need %s: %v", needs, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := topo.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
}
