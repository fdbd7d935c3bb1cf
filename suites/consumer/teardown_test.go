package consumer

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// teardownTarget is the reference consumer on JetStream creating its own stream at start-up and
// deleting it on SIGTERM (--declare --delete-on-exit), through {{.Broker}}; the harness neither
// creates nor deletes it.
const teardownTarget = `name: teardown
instances: ["%URL%"]
consumers:
  - name: nats
    transport: nats
    nats: {url: "%NATS%", stream: %NAME%, subject: %NAME%.events, durable: %NAME%-c}
    event: {body: '{"id": "{{.EventID}}", "object": "{{.Object}}", "version": {{.Version}}}'}
    effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
lifecycle:
  command: ["%BIN%", serve, --reuse-port, --consumer, nats, --addr, "{{.Addr}}", --broker-url, "nats://{{.Broker}}", --stream, %NAME%,
    --subject, %NAME%.events, --durable, %NAME%-c, --declare, --delete-on-exit, --store, sqlite, --dsn, "%DSN%"]
  ready: {path: /healthz}
`

// Close stops the target's processes before it closes the broker proxy: a consumer that deletes
// its stream on SIGTERM reaches its broker through {{.Broker}} and does.
func TestCloseStopsProcessesBeforeTheLinks(t *testing.T) {
	t.Parallel()
	bin := buildBrokerConsumer(t)
	name := broker.UniqueName("teardown")
	doc := strings.NewReplacer("%URL%", frameworktest.ReservedURLs(t, 1), "%NATS%", rigBrokerURL(targets.TransportNATS),
		"%NAME%", name, "%BIN%", bin, "%DSN%", filepath.Join(t.TempDir(), "c.db")).Replace(teardownTarget)
	tg, err := targets.Parse("teardown.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := framework.Open(ctx, tg, framework.WithSettings(framework.Settings{Seed: 5}))
	if err != nil {
		t.Fatalf("open (needs NATS JetStream on 127.0.0.1): %v", err)
	}
	before, err := brokerInventory(ctx, broker.NATS)
	if err != nil {
		t.Fatal(err)
	}
	if before.WithPrefix(name).Empty() {
		t.Fatalf("the consumer did not create its stream %s", name)
	}
	if err := h.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	after, err := brokerInventory(ctx, broker.NATS)
	if err != nil {
		t.Fatal(err)
	}
	if left := after.WithPrefix(name); !left.Empty() {
		t.Errorf("the consumer's SIGTERM handler could not delete its stream through {{.Broker}}: %s left", left)
		(&broker.JetStreamTopology{URL: rigBrokerURL(targets.TransportNATS), Stream: name}).Teardown(context.WithoutCancel(ctx))
	}
}
