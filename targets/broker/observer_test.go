package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// seenMessages collects what an observer hands over.
type seenMessages struct {
	mu   sync.Mutex
	msgs []Observed
}

func (s *seenMessages) add(o Observed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, o)
}

// wait waits until n messages were seen (at most 10s) and returns them.
func (s *seenMessages) wait(t *testing.T, n int) []Observed {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := append([]Observed(nil), s.msgs...)
		s.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) < n {
				t.Fatalf("observed %d messages, want %d", len(got), n)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The observer's own queue, bound to the exchange beside the API's queue, sees every message;
// the API's queue keeps every one; the observer's queue goes with it.
func TestAMQPObserverLeavesTheAPIsQueue(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	topo := setupAMQP(t) // the API's exchange and its consumer's queue
	var seen seenMessages
	queue := topo.Name + "-observer"
	obs, err := ObserveAMQP(ctx, topo.URL, topo.Exchange, topo.RoutingKey, queue, seen.add)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for _, id := range []string{"evt-1", "evt-2"} {
		if _, err := pub.Publish(ctx, Message{ID: id, Body: []byte(`{"id":"` + id + `"}`), Headers: map[string]string{"event-type": "order.created"}}); err != nil {
			t.Fatal(err)
		}
	}
	got := seen.wait(t, 2)
	if got[0].MessageID != "evt-1" || string(got[1].Body) != `{"id":"evt-2"}` || got[0].Headers["event-type"] != "order.created" || got[0].At.IsZero() {
		t.Errorf("observed %+v", got)
	}
	waitReady(t, topo, 2)
	if err := obs.Lost(); err != nil {
		t.Errorf("Lost = %v while observing", err)
	}
	obs.Close()
	obs.Close()
	probe := &AMQPTopology{Name: queue, URL: topo.URL, Queue: queue, dialTimeout: time.Second}
	if ok, err := probe.Exists(ctx); ok || err != nil {
		t.Errorf("the observer's queue exists after Close: %v, %v", ok, err)
	}
}

// An exchange the harness creates is a durable topic exchange, bound by pattern; binding to an
// exchange that does not exist fails.
func TestAMQPExchangeObserved(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	name := testName(t)
	ex, err := NewAMQPExchange(testAMQPURL(), name+".x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ObserveAMQP(ctx, ex.URL, ex.Name, "#", name+"-obs", func(Observed) {}); err == nil || !isNotFound(errors.Unwrap(err)) {
		t.Errorf("binding to a missing exchange: %v", err)
	}
	setUp(t, ex, "RabbitMQ")
	if ok, err := ex.Exists(ctx); !ok || err != nil {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	var seen seenMessages
	obs, err := ObserveAMQP(ctx, ex.URL, ex.Name, "order.*", name+"-obs", seen.add)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	pub, err := NewAMQPPublisher(ctx, ex.URL, ex.Name, "order.created")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pub.Publish(ctx, Message{ID: "evt-1", Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if got := seen.wait(t, 1); got[0].MessageID != "evt-1" {
		t.Errorf("observed %+v", got)
	}
	if _, err := NewAMQPExchange(ex.URL, ""); err == nil {
		t.Error("the default exchange was accepted")
	}
}

// The ordered consumer sees what is published after it starts, with its Nats-Msg-Id, and the
// durable consumer of the API still gets every message.
func TestJetStreamObserverLeavesTheDurable(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	topo := setupJetStream(t)
	if err := topo.CreateConsumer(ctx); err != nil {
		t.Fatal(err)
	}
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pub.Publish(ctx, Message{ID: "before", Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	var seen seenMessages
	obs, err := ObserveJetStream(ctx, topo.URL, topo.Stream, topo.Subject, seen.add)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	for _, id := range []string{"evt-1", "evt-2"} {
		if _, err := pub.Publish(ctx, Message{ID: id, Body: []byte(id), Headers: map[string]string{"Event-Type": "order.created"}}); err != nil {
			t.Fatal(err)
		}
	}
	got := seen.wait(t, 2)
	if len(got) != 2 || got[0].MessageID != "evt-1" || string(got[1].Body) != "evt-2" || got[0].Headers["Event-Type"] != "order.created" {
		t.Errorf("observed %+v, want evt-1 and evt-2 (not the message published before it started)", got)
	}
	if st, err := topo.ConsumerState(ctx); err != nil || st.Pending != 3 {
		t.Errorf("the durable consumer: %+v, %v; want its 3 messages pending", st, err)
	}
}

// A WorkQueue stream is refused, saying why.
func TestJetStreamObserverRefusesWorkQueue(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	topo, err := NewJetStreamTopology(testName(t), WithNATSURL(testNATSURL()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := topo.StreamConfig()
	cfg.Retention = jetstream.WorkQueuePolicy
	err = withJetStream(ctx, topo.URL, time.Second, func(ctx context.Context, js jetstream.JetStream) error {
		_, err := js.CreateStream(ctx, cfg)
		return err
	})
	if err != nil {
		t.Fatalf("these tests need NATS with JetStream: %v", err)
	}
	t.Cleanup(func() { _ = topo.Teardown(context.Background()) })
	_, err = ObserveJetStream(ctx, topo.URL, topo.Stream, topo.Subject, func(Observed) {})
	if !errors.Is(err, ErrWorkQueue) {
		t.Errorf("observing a WorkQueue stream: %v, want ErrWorkQueue", err)
	}
}
