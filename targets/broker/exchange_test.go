package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// refused reports ExchangeRefused.
func refused(err error) bool {
	_, ok := ExchangeRefused(err)
	return ok
}

// The harness declares an exchange as the file says (durable or not, auto-deleted or not):
// declaring it again with the same settings does nothing; with others it is RabbitMQ's
// PRECONDITION_FAILED, whose text names the received and the current values. A queue consumer's
// topology declares its direct exchange the same way, and binds to an exchange of another type
// (a chain's API's topic exchange) as it is.
func TestAMQPExchangeSettings(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	name := testName(t)
	ex, err := NewAMQPExchange(testAMQPURL(), name+".x")
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Durable || ex.AutoDelete {
		t.Errorf("defaults durable %v, auto-delete %v; want true, false", ex.Durable, ex.AutoDelete)
	}
	ex.Durable = false
	setUp(t, ex, "RabbitMQ")
	if err := ex.Setup(ctx); err != nil {
		t.Errorf("declared again with the same settings: %v", err)
	}
	durable := *ex
	durable.Durable = true
	err = durable.Setup(ctx)
	if _, ok := ExchangeRefused(err); !ok || !strings.Contains(err.Error(), "PRECONDITION_FAILED") ||
		!strings.Contains(err.Error(), "inequivalent arg 'durable'") || !strings.Contains(err.Error(), "received 'true' but current is 'false'") {
		t.Errorf("a durable declaration of a non-durable exchange: %v", err)
	}

	topo, err := NewAMQPTopology(name+"-q", WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	topo.Exchange = ex.Name // a topic exchange: bound as it is
	setUp(t, topo, "RabbitMQ")
	own, err := NewAMQPTopology(name+"-own", WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	own.ExchangeAutoDelete = true
	setUp(t, own, "RabbitMQ")
	again := *own
	again.ExchangeAutoDelete = false
	if err := again.Setup(ctx); !refused(err) || !strings.Contains(err.Error(), "inequivalent arg 'auto_delete'") {
		t.Errorf("a queue consumer's exchange declared again with other settings: %v", err)
	}
	if refused(nil) || refused(ctx.Err()) {
		t.Error("ExchangeRefused of no RabbitMQ error")
	}

	// A queue that exists with other settings (not durable) is refused too, but not as an
	// exchange: the exchange's settings cannot mend it.
	app, err := NewAMQPTopology(name+"-app", WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	app.Exchange = ""
	if err := withChannel(ctx, app.URL, app.dialTimeout, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(app.Queue, false, false, false, false, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Teardown(context.Background()) })
	if err := app.Setup(ctx); err == nil || refused(err) || !strings.Contains(err.Error(), "for queue") {
		t.Errorf("a queue declared again with other settings: %v (want PRECONDITION_FAILED, not the exchange's)", err)
	}
}

// A publisher with a channel per message publishes each on one connection, confirmed, and
// opens a channel again after the broker closed one (a missing exchange).
func TestAMQPChannelPerPublish(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupAMQP(t)
	pub, err := NewAMQPPublisher(ctx, topo.URL, topo.Exchange, topo.RoutingKey, WithChannelPerPublish())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	conn := pub.conn
	for _, id := range []string{"c-1", "c-2", "c-3"} {
		if _, err := pub.Publish(ctx, Message{ID: id, Body: []byte(id)}); err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
	}
	if pub.conn != conn {
		t.Error("a connection per message, want one")
	}
	if s, err := topo.State(ctx); err != nil || s.Ready != 3 {
		t.Fatalf("State = %+v, %v; want 3 ready", s, err)
	}
	missing, err := NewAMQPPublisher(ctx, topo.URL, topo.Exchange+"-missing", topo.RoutingKey, WithChannelPerPublish())
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	for range 2 {
		if _, err := missing.Publish(ctx, Message{ID: "no-exchange"}); !errors.Is(err, ErrNotPublished) {
			t.Errorf("missing exchange: err = %v, want ErrNotPublished", err)
		}
	}
}
