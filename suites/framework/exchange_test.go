package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// An exchange the file asks the harness to create (create: true) that exists already with other
// settings (the app declared it non-durable) is a start-up error located at the file's amqp
// block, quoting RabbitMQ's PRECONDITION_FAILED; declared as the file says, it starts.
func TestExchangeWithOtherSettingsIsLocated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := broker.UniqueName("test-exchange-settings")
	app, err := broker.NewAMQPExchange(broker.DefaultAMQPURL, name)
	if err != nil {
		t.Fatal(err)
	}
	app.Durable = false // as the app declares it
	if err := app.Setup(ctx); err != nil {
		t.Fatalf("this test needs RabbitMQ on 127.0.0.1:5672: %v", err)
	}
	t.Cleanup(func() { _ = app.Teardown(context.Background()) })
	file := func(settings, consumerSettings string) string {
		return `instances: [http://127.0.0.1:1]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}"}'
    publishes:
      - name: order.created
        amqp:
          url: "` + broker.DefaultAMQPURL + `"
          exchange: ` + name + `
          create: true` + settings + `
        id: {message_id: true}
        ref: {jsonpath: $.ref}
consumers:
  - name: worker
    transport: amqp
    amqp: {url: "` + broker.DefaultAMQPURL + `", exchange: ` + name + `.c, queue: ` + name + `.q, routing_key: k, create: true` + consumerSettings + `}
    event:
      body: '{"object": "{{.Object}}", "version": {{.Version}}}'
    effects: {http: {path: /effects, jsonpath: $.n}}
`
	}
	setUp := func(src string) error {
		tg, err := targets.Parse("t.yaml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		f := newFaults(tg)
		defer f.events.close()
		_, _, err = f.setUpEvents(ctx, tg, "test")
		return err
	}
	err = setUp(file("", ""))
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:8: operations[0].publishes[0].amqp: exchange \""+name+"\" exists with other settings") ||
		!strings.Contains(err.Error(), `RabbitMQ answered "PRECONDITION_FAILED - inequivalent arg 'durable'`) || !strings.Contains(err.Error(), "received 'true' but current is 'false'") {
		t.Errorf("the harness's durable declaration: %v", err)
	}
	t.Logf("%v", err)
	if err := setUp(file("\n          exchange_durable: false", "")); err != nil {
		t.Errorf("declared as the app declares it: %v", err)
	}

	// A queue consumer's exchange, declared non-durable by its app before the run.
	consumerApp, err := broker.NewAMQPTopology("app", broker.WithAMQPURL(broker.DefaultAMQPURL))
	if err != nil {
		t.Fatal(err)
	}
	consumerApp.Exchange, consumerApp.Queue, consumerApp.RoutingKey, consumerApp.ExchangeDurable = name+".c", name+".q", "k", false
	if err := consumerApp.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = consumerApp.Teardown(context.Background()) })
	tg, err := targets.Parse("t.yaml", []byte(file("", "")), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newFaults(tg).setUpConsumers(ctx, tg)
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:17: consumers[0].amqp: exchange \""+name+".c\" exists with other settings") ||
		!strings.Contains(err.Error(), "PRECONDITION_FAILED") {
		t.Errorf("the consumer's durable declaration: %v", err)
	}
	tg, err = targets.Parse("t.yaml", []byte(file("", ", exchange_durable: false")), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFaults(tg)
	if _, err = f.setUpConsumers(ctx, tg); err != nil {
		t.Errorf("the consumer's exchange declared as its app declares it: %v", err)
	}
}
