package broker

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRabbitmqctlNames(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []string
		wantErr bool
	}{
		{"empty", "[\n]\n", []string{}, false},
		{"default exchange left out, sorted", `[{"name":"b"},{"name":""},{"name":"a"}]`, []string{"a", "b"}, false},
		{"name with spaces", `[{"name":"a b"}]`, []string{"a b"}, false},
		{"not JSON", "Error: unable to perform an operation on node", nil, true},
		{"row without name", `[{"messages":1}]`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRabbitmqctlNames([]byte(tt.out))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInventorySince(t *testing.T) {
	before := Inventory{Queues: []string{"q1"}, Exchanges: []string{"amq.direct"}, Streams: []string{"s1"}}
	after := Inventory{Queues: []string{"q1", "q2"}, Exchanges: []string{"amq.direct", "run.x"}, Streams: []string{"s2"}}
	got := after.Since(before)
	want := Inventory{Queues: []string{"q2"}, Exchanges: []string{"run.x"}, Streams: []string{"s2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Since = %v, want %v", got, want)
	}
	if got.Empty() || !before.Since(before).Empty() {
		t.Error("Empty is wrong")
	}
	if p := after.WithPrefix("run"); !reflect.DeepEqual(p, Inventory{Exchanges: []string{"run.x"}}) {
		t.Errorf("WithPrefix(run) = %v", p)
	}
}

// A run's queue, exchange and stream show in an inventory while they exist, and none is left
// after Teardown.
func TestInventoryAroundARun(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	opts := []Option{WithNATSURL(testNATSURL())}
	before, err := TakeInventory(ctx, opts...)
	if err != nil {
		t.Fatalf("TakeInventory needs rabbitmqctl (run as root beside RabbitMQ) and NATS: %v", err)
	}
	if !slices.Contains(before.Exchanges, "amq.direct") {
		t.Errorf("RabbitMQ's amq.direct exchange is not listed: %v", before)
	}
	name := testName(t)
	amqpTopo, err := NewAMQPTopology(name, WithAMQPURL(testAMQPURL()))
	if err != nil {
		t.Fatal(err)
	}
	jsTopo, err := NewJetStreamTopology(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func() error{
		func() error { return amqpTopo.Setup(ctx) }, func() error { return jsTopo.Setup(ctx) },
	} {
		if err := setup(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { amqpTopo.Teardown(ctx); jsTopo.Teardown(ctx) })

	during, err := TakeInventory(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	want := Inventory{Queues: []string{amqpTopo.Queue}, Exchanges: []string{amqpTopo.Exchange}, Streams: []string{jsTopo.Stream}}
	if got := during.Since(before).WithPrefix(name); !reflect.DeepEqual(got, want) {
		t.Errorf("during the run, new names = %v, want %v", got, want)
	}
	if err := amqpTopo.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := jsTopo.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := TakeInventory(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if left := after.Since(before).WithPrefix(name); !left.Empty() {
		t.Errorf("left behind after teardown: %v", left)
	}
}

func TestTakeInventoryOneBroker(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	inv, err := TakeInventory(ctx, WithKinds(NATS), WithNATSURL(testNATSURL()),
		WithRabbitmqctl("/nonexistent/rabbitmqctl", "/"))
	if err != nil {
		t.Fatalf("NATS only: %v", err)
	}
	if inv.Queues != nil || inv.Exchanges != nil {
		t.Errorf("NATS only listed RabbitMQ: %v", inv)
	}
	_, err = TakeInventory(ctx, WithKinds(AMQP), WithRabbitmqctl("/nonexistent/rabbitmqctl", "/"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/rabbitmqctl") {
		t.Errorf("missing rabbitmqctl: err = %v, want one naming the command", err)
	}
	_, err = TakeInventory(ctx, WithKinds(AMQP), WithRabbitmqctl(DefaultRabbitmqctl, "/no-such-vhost"))
	if err == nil || !strings.Contains(err.Error(), "/no-such-vhost") {
		t.Errorf("missing vhost: err = %v, want one naming the vhost", err)
	}
}
