package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A chain target file names its three parts, as files relative to it or inline, and each part is
// an ordinary target file loaded as such.
func TestChainFile(t *testing.T) {
	examples, err := filepath.Abs("examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, doc string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	client := filepath.Join(examples, "chain-client-managed.yaml")
	api := filepath.Join(examples, "reference-events-amqp.yaml")
	consumer := filepath.Join(examples, "consumer-amqp-nosink-managed.yaml")
	env := envOf(map[string]string{})

	tg, err := Parse(write("chain.yaml", "name: orders-chain\nchain:\n  client: "+client+"\n  api: "+api+"\n  consumer: "+consumer+"\n"),
		mustRead(t, filepath.Join(dir, "chain.yaml")), env)
	if err != nil {
		t.Fatalf("a chain of the example files: %v", err)
	}
	defer tg.Close()
	c := tg.Chain
	if tg.Name != "orders-chain" || c == nil || c.Client.Clients[0].Name != "reference" || c.API.Name != "reference-events-amqp" || c.Consumer.Name != "consumer-amqp-nosink-managed" {
		t.Fatalf("chain %q: %+v", tg.Name, c)
	}
	if op, pub := c.Published(); op.Name != "orders" || pub.Name != "order.created" || c.EventConsumer().Name != "amqp" {
		t.Errorf("published %s %s, consumed by %s", op.Name, pub.Name, c.EventConsumer().Name)
	}
	if len(tg.Operations)+len(tg.Consumers)+len(tg.Clients) != 0 {
		t.Errorf("a chain target describes no side of its own: %d operations, %d consumers, %d clients", len(tg.Operations), len(tg.Consumers), len(tg.Clients))
	}

	ex, err := Parse(filepath.Join(examples, "chain-amqp.yaml"), mustRead(t, filepath.Join(examples, "chain-amqp.yaml")),
		envOf(map[string]string{"RETRYSAFE_CHAIN_NAME": "x", "RETRYSAFE_CHAIN_API_URL": "http://127.0.0.1:9001"}))
	if err != nil {
		t.Fatalf("chain-amqp.yaml: %v", err)
	}
	defer ex.Close()
	_, pub := ex.Chain.Published()
	if got := ex.Chain.EventConsumer().AMQP; got.Exchange != "x-orders" || pub.AMQP.Exchange != "x-orders" || got.RoutingKey != pub.AMQP.RoutingKey {
		t.Errorf("the consumer binds %s/%s, the API publishes to %s/%s", got.Exchange, got.RoutingKey, pub.AMQP.Exchange, pub.AMQP.RoutingKey)
	}
	if api, cons := ex.Chain.API.Instances[0].URL.Host, ex.Chain.Consumer.Instances[0].URL.Host; api != "127.0.0.1:9001" || cons != "127.0.0.1:8090" {
		t.Errorf("each part's own RETRYSAFE_URL: the API on %s, the consumer on %s", api, cons)
	}

	inline := "chain:\n  client: " + client + "\n  api: " + api + "\n  consumer:\n" + indent(string(mustRead(t, consumer)), "    ")
	tg2, err := Parse(write("inline.yaml", inline), []byte(inline), env)
	if err != nil {
		t.Fatalf("a chain with an inline consumer: %v", err)
	}
	defer tg2.Close()
	if tg2.Name != "inline" || tg2.Chain.Consumer.Consumers[0].Name != "amqp" {
		t.Errorf("inline chain %q: consumer %+v", tg2.Name, tg2.Chain.Consumer)
	}

	tests := []struct {
		name, doc string
		says      []string
	}{
		{"an API that publishes nothing", "chain:\n  client: " + client + "\n  api: " + filepath.Join(examples, "reference-managed.yaml") + "\n  consumer: " + consumer + "\n",
			[]string{"chain.api: the API part declares no operation that publishes its events"}},
		{"a part missing", "chain:\n  client: " + client + "\n  api: " + api + "\n",
			[]string{"chain.consumer: missing required field"}},
		{"a part that is not there", "chain:\n  client: nowhere.yaml\n  api: " + api + "\n  consumer: " + consumer + "\n",
			[]string{"chain.client: cannot read the client part"}},
		{"an unknown field", "chain:\n  client: " + client + "\n  api: " + api + "\n  consumer: " + consumer + "\n  broker: amqp\n",
			[]string{"chain.broker: unknown field"}},
		{"a consumer naming its operation in a header", "chain:\n  client: " + client + "\n  api: " + api + "\n  consumer:\n" +
			indent(strings.NewReplacer("    event:\n", "    event:\n      operation: {header: X-Operation}\n",
				"event={{.EventID}}", "operation={{.Operation}}").Replace(string(mustRead(t, consumer))), "    "),
			[]string{"chain.consumer: consumer amqp names its operation in the header X-Operation"}},
		{"a consumer on another transport", "chain:\n  client: " + client + "\n  api: " + api + "\n  consumer: " + filepath.Join(examples, "consumer-nats-managed.yaml") + "\n",
			[]string{"chain.consumer: no consumer on amqp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := Parse(write("bad.yaml", tt.doc), []byte(tt.doc), env)
			if err == nil {
				tg.Close()
				t.Fatal("parsed")
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not say %q:\n%v", s, err)
				}
			}
		})
	}
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}
