package broker

import (
	"testing"
	"time"
)

// On RabbitMQ's default exchange the topology is the queue alone, reached by its name: Setup
// declares nothing else, Teardown deletes nothing else, Exists tells whether the queue is there.
func TestAMQPDefaultExchange(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo, err := NewAMQPTopology(testName(t), WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	topo.Exchange, topo.RoutingKey = "", ""
	if ok, err := topo.Exists(ctx); ok || err != nil {
		t.Fatalf("Exists before Setup = %v, %v; want false", ok, err)
	}
	setUp(t, topo, "RabbitMQ at "+redactURL(topo.URL))
	if ok, err := topo.Exists(ctx); !ok || err != nil {
		t.Fatalf("Exists after Setup = %v, %v; want true", ok, err)
	}
	pub, err := NewAMQPPublisher(ctx, topo.URL, "", topo.Queue)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pub.Publish(ctx, Message{ID: "m-1", Body: []byte("x")}); err != nil {
		t.Fatalf("publish through the default exchange: %v", err)
	}
	if d := getOne(t, topo); d.MessageId != "m-1" {
		t.Errorf("got message %q, want m-1", d.MessageId)
	}
	if err := topo.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := topo.Exists(ctx); ok || err != nil {
		t.Errorf("Exists after Teardown = %v, %v; want false", ok, err)
	}
}

// A durable push consumer: created with a deliver subject and a queue group, inspected like a
// pull one (ConsumerState says it pushes), and the stream's duplicates window read back.
func TestJetStreamPushConsumer(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	if err := topo.CreatePushConsumer(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := topo.Exists(ctx); !ok || err != nil {
		t.Fatalf("Exists = %v, %v; want the stream and its push durable", ok, err)
	}
	s, err := topo.ConsumerState(ctx)
	if err != nil || !s.Push || s.Bound || s.AckWait != DefaultAckWait {
		t.Errorf("ConsumerState = %+v, %v; want a push consumer, not bound, AckWait %v", s, err, DefaultAckWait)
	}
	if d, err := topo.StreamDuplicates(ctx); err != nil || d != DefaultDuplicatesWindow {
		t.Errorf("StreamDuplicates = %v, %v; want %v", d, err, DefaultDuplicatesWindow)
	}
	if got, want := topo.PushConfig().DeliverGroup, topo.Durable; got != want {
		t.Errorf("deliver group %q, want the durable %q", got, want)
	}
	other := *topo
	other.Durable = "absent"
	if ok, err := other.Exists(ctx); ok || err != nil {
		t.Errorf("Exists of an absent durable = %v, %v; want false", ok, err)
	}
}
