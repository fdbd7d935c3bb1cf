package consumer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/retrysafe/retrysafe/targets/reference/queue"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// testSecret signs the deliveries of the in-process reference consumer.
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// webhookTarget is a target file for an in-process reference webhook consumer at URL.
const webhookTarget = `name: consumer
instances: ["%URL%"]
consumers:
  - name: webhooks
    path: /webhooks
    event:
      body: '{"id": "{{.EventID}}", "type": "{{.Type}}", "object": "{{.Object}}", "version": {{.Version}}, "created": "{{.Time}}", "data": {"ref": "{{.Ref}}"}}'
    signing: {scheme: standard-webhooks, secret: "` + testSecret + `"}
    effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
    state: {http: {path: "/v1/objects/{{.Object}}", jsonpath: $.version}}
    lock_timeout: 2s
    dedupe_retention: 72h
`

// rigLockTimeout is the in-process consumers' lock timeout (the target files declare it).
const rigLockTimeout = 2 * time.Second

// consumerRig describes an in-process reference consumer and the target file that describes it
// to the harness.
type consumerRig struct {
	// mutant is the consumer's mode.
	mutant consumer.Mutant
	// doc is the target file; %URL% in it stands for the instances' URLs.
	doc string
	// signing is how the consumer verifies deliveries (zero: standard-webhooks, testSecret).
	signing webhook.Config
	// instances is how many instances serve the consumer (0: one); they share one store.
	instances int
	// retention is the consumer's dedupe retention (0: its default).
	retention time.Duration
	// settings are the run's (zero: seed 3).
	settings framework.Settings
	// noSink leaves the sink out: the consumer calls nothing of the harness's and offers its
	// test hooks, which the target file declares.
	noSink bool
	// idHeader, when set, is the message header a queue consumer reads the event id from (the
	// target file declares it).
	idHeader string
	// wrap, when set, wraps a webhook consumer's handler (to see what the harness sends it).
	wrap func(http.Handler) http.Handler
	// options are added to the harness's.
	options []framework.Option
	// operations makes the events name their business operations (data.operation and
	// data.operations, or operationHeader for the one), counted per operation, with
	// operation_dedupe unless noOperationDedupe (withOperations).
	operations        bool
	noOperationDedupe bool
	operationHeader   string
}

// consumerHooks is the hooks block of a consumer that offers the reference's test hooks.
const consumerHooks = `    hooks: {fail_next: {path: /_test/fail, query: "event={{.EventID}}"}, slow: {headers: {X-Test-Delay: "{{.Ms}}"}}}
`

// shaped returns the rig's target file as its options say: the hooks block when it has no
// sink, the event id's header when one is set.
func (r consumerRig) shaped(doc string) string {
	if r.noSink {
		doc = strings.Replace(doc, "    lock_timeout: 2s\n", "    lock_timeout: 2s\n"+consumerHooks, 1)
	}
	if r.idHeader != "" {
		doc = strings.Replace(doc, "    effects:", "      id: {header: "+r.idHeader+"}\n    effects:", 1)
	}
	if r.operations {
		doc = withOperations(doc, !r.noOperationDedupe, r.operationHeader)
	}
	return doc
}

// withOperations makes a rig's target file say where its events name their business
// operations, as the reference reads them (the body's data.operation and data.operations; or,
// with a header, the one operation in that header and no list), counts effects per operation,
// and declares operation_dedupe when dedupe.
func withOperations(doc string, dedupe bool, header string) string {
	body := `"data": {"ref": "{{.Ref}}"}}'` + "\n"
	if header != "" {
		doc = strings.Replace(doc, body, body+"      operation: {header: "+header+"}\n", 1)
	} else {
		doc = strings.Replace(doc, body, `"data": {"ref": "{{.Ref}}", "operation": {{json .Operation}}, "operations": {{json .Operations}}}}'`+"\n"+
			"      operation: {jsonpath: $.data.operation}\n      operations: {jsonpath: '$.data.operations[*]'}\n", 1)
	}
	doc = strings.Replace(doc, `query: "event={{.EventID}}"`, `query: "operation={{.Operation}}"`, 1)
	if dedupe {
		doc = strings.Replace(doc, "    lock_timeout: 2s\n", "    lock_timeout: 2s\n    operation_dedupe: true\n", 1)
	}
	return doc
}

// consumerHarness serves the reference webhook consumer in-process (memory store, mutant m,
// calling a sink) and opens a harness on it.
func consumerHarness(t *testing.T, m consumer.Mutant, doc string) *framework.Harness {
	t.Helper()
	return consumerRig{mutant: m, doc: doc}.open(t)
}

// open serves the rig's consumer on its instances and opens a harness on the target file.
func (r consumerRig) open(t *testing.T) *framework.Harness {
	t.Helper()
	sink, err := faults.NewSink("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	c := r.newConsumer(t, sink)
	var handler http.Handler = c
	if r.wrap != nil {
		handler = r.wrap(c)
	}
	var urls []string
	for range max(r.instances, 1) {
		srv := httptest.NewServer(handler)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	return r.harness(t, sink, r.shaped(strings.ReplaceAll(r.doc, "%URL%", strings.Join(urls, `", "`))))
}

// newConsumer returns the rig's consumer on a memory store, calling sink.
func (r consumerRig) newConsumer(t *testing.T, sink *faults.Sink) *consumer.Consumer {
	t.Helper()
	signing := r.signing
	if signing.Scheme == "" {
		signing = webhook.Config{Scheme: webhook.SchemeStandard, Secret: testSecret}
	}
	cfg := consumer.Config{Store: consumer.NewMemoryStore(), Mutant: r.mutant, Downstream: sink.URL(),
		Signing: signing, LockTimeout: rigLockTimeout, DedupeRetention: r.retention, Hooks: r.noSink}
	if r.noSink {
		cfg.Downstream = ""
	}
	if r.idHeader != "" {
		cfg.IDFrom = consumer.IDFrom{In: consumer.IDInHeader, Header: r.idHeader}
	}
	cfg.OperationHeader = r.operationHeader
	c, err := consumer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// harness opens a harness on a target file, with the sink, closed when the test ends.
func (r consumerRig) harness(t *testing.T, sink *faults.Sink, doc string) *framework.Harness {
	t.Helper()
	tg, err := targets.Parse("consumer.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := r.settings
	if st.Seed == 0 {
		st.Seed = 3
	}
	opts := []framework.Option{framework.WithSink(sink), framework.WithSettings(st)}
	if r.noSink {
		sink.Close()
		opts = opts[1:]
	}
	h, err := framework.Open(context.Background(), tg, append(opts, r.options...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); tg.Close() })
	return h
}

// queueTarget is a target file for an in-process reference queue consumer: %BROKER% is its
// broker binding, %URL% its HTTP observers.
const queueTarget = `name: consumer
instances: ["%URL%"]
consumers:
  - name: queue
    transport: %TRANSPORT%
    %BROKER%
    event:
      body: '{"id": "{{.EventID}}", "type": "{{.Type}}", "object": "{{.Object}}", "version": {{.Version}}, "created": "{{.Time}}", "data": {"ref": "{{.Ref}}"}}'
    effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
    state: {http: {path: "/v1/objects/{{.Object}}", jsonpath: $.version}}
    lock_timeout: 2s
    dedupe_retention: %RETENTION%
`

// rigBrokerURL returns the broker a queue rig uses (RETRYSAFE_AMQP_URL or RETRYSAFE_NATS_URL, else
// the local default).
func rigBrokerURL(transport targets.Transport) string {
	if transport == targets.TransportAMQP {
		if u := os.Getenv("RETRYSAFE_AMQP_URL"); u != "" {
			return u
		}
		return broker.DefaultAMQPURL
	}
	if u := os.Getenv("RETRYSAFE_NATS_URL"); u != "" {
		return u
	}
	return broker.DefaultNATSURL
}

// queueHarness serves the reference consumer in-process on a broker (amqp or nats): the harness
// creates a uniquely named queue or stream from the target file (and deletes it at the end), the
// consumer consumes it with the reference queue transport, and answers the observers over HTTP.
func (r consumerRig) queueHarness(t *testing.T, transport targets.Transport) *framework.Harness {
	t.Helper()
	sink, err := faults.NewSink("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	c := r.newConsumer(t, sink)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	name := broker.UniqueName("suites")
	url := rigBrokerURL(transport)
	opts := queue.Options{URL: url, Prefetch: queue.DefaultPrefetch}
	var binding string
	if transport == targets.TransportAMQP {
		opts.Broker, opts.Queue = queue.AMQP, name
		binding = `amqp: {url: "` + url + `", exchange: ` + name + `, routing_key: ` + name + `, queue: ` + name + `, create: true}`
	} else {
		opts.Broker, opts.Stream, opts.Subject, opts.Durable = queue.NATS, name, name+".events", name+"-consumer"
		binding = `nats: {url: "` + url + `", stream: ` + name + `, subject: ` + name + `.events, durable: ` + name + `-consumer, create: true}`
	}
	retention := "72h"
	if r.retention > 0 {
		retention = r.retention.String()
	}
	doc := strings.NewReplacer("%URL%", srv.URL, "%TRANSPORT%", string(transport), "%BROKER%", binding, "%RETENTION%", retention).Replace(queueTarget)
	h := r.harness(t, sink, r.shaped(doc))
	runQueueConsumer(t, c, opts)
	return h
}

// runQueueConsumer consumes with the reference queue transport until the test ends, handing
// each message to the consumer as `retrysafe serve --consumer` does, and returns once it
// consumes.
func runQueueConsumer(t *testing.T, c *consumer.Consumer, opts queue.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	opts.Ready = sync.OnceFunc(func() { close(ready) })
	errc := make(chan error, 1)
	go func() {
		errc <- queue.Run(ctx, opts, c.QueueHandler())
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("the queue consumer: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-errc:
		errc <- err
		t.Fatalf("the queue consumer stopped before consuming (these tests need RabbitMQ and NATS JetStream on 127.0.0.1): %v", err)
	case <-time.After(15 * time.Second):
		t.Fatalf("the queue consumer did not start consuming within 15s (these tests need RabbitMQ and NATS JetStream on 127.0.0.1)")
	}
}

// runProperty runs one property of the harness and returns its verdict and failure.
func runProperty(t *testing.T, h *framework.Harness, name string) (reports.Verdict, string) {
	t.Helper()
	res, err := h.Run(context.Background(), framework.Selection{LabelFilter: "property:" + name})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Report.Properties {
		if p.Name == name {
			var failure string
			for _, s := range p.Specs {
				failure += s.Failure
			}
			return p.Verdict, p.Reason + failure
		}
	}
	t.Fatalf("property %s did not run", name)
	return "", ""
}

// specVerdicts runs one property of the harness and returns the verdict of each spec by text.
func specVerdicts(t *testing.T, h *framework.Harness, name string) map[string]reports.Verdict {
	t.Helper()
	res, err := h.Run(context.Background(), framework.Selection{LabelFilter: "property:" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]reports.Verdict{}
	for _, p := range res.Report.Properties {
		for _, s := range p.Specs {
			out[s.Text] = s.Verdict
		}
	}
	return out
}

// expectCaught checks that the correct consumer passes a property and the mutant fails it with
// an anomaly of the kind given.
func expectCaught(t *testing.T, property string, correct, mutant *framework.Harness, kind reports.Kind) {
	t.Helper()
	if v, why := runProperty(t, correct, property); v != reports.Pass {
		t.Errorf("%s, the correct consumer: %s: %s", property, v, why)
	}
	v, why := runProperty(t, mutant, property)
	if v != reports.Fail || !strings.Contains(why, string(kind)+":") {
		t.Errorf("%s, the mutant: %s: %s; want a %s failure", property, v, why, kind)
	}
	t.Logf("%s, the mutant: %s", property, strings.SplitN(why, "\n", 2)[0])
}

// expectCaughtOnBrokers runs expectCaught with queue rigs on each transport (amqp, nats): the
// correct consumer and mutant m, otherwise as rig says.
func expectCaughtOnBrokers(t *testing.T, property string, rig consumerRig, m consumer.Mutant, kind reports.Kind, transports ...targets.Transport) {
	t.Helper()
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			correct, mutant := rig, rig
			correct.mutant, mutant.mutant = consumer.MutantNone, m
			expectCaught(t, property, correct.queueHarness(t, tr), mutant.queueHarness(t, tr), kind)
		})
	}
}

// queueTransports are the transports of the queue rigs.
var queueTransports = []targets.Transport{targets.TransportAMQP, targets.TransportNATS}

// dropLine returns doc without its line that starts with prefix.
func dropLine(t *testing.T, doc, prefix string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	if len(out) == strings.Count(doc, "\n")+1 {
		t.Fatalf("no line starts with %q", prefix)
	}
	return strings.Join(out, "\n")
}

// buildRetrysafe builds the retrysafe binary into the test's temporary directory.
func buildRetrysafe(t *testing.T) string { return frameworktest.Binary(t) }

// managedWebhookConsumer opens a harness on the managed webhook consumer example: the harness
// starts `retrysafe serve --consumer webhook` (mutant m) on SQLite in a temporary directory, with
// a lock timeout of 2s.
func managedWebhookConsumer(t *testing.T, bin string, m consumer.Mutant) *framework.Harness {
	t.Helper()
	dir := t.TempDir()
	mutant := string(m)
	if mutant == "" {
		mutant = "none"
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": bin, "RETRYSAFE_URL": frameworktest.ReservedURLs(t, 1), "RETRYSAFE_REUSE_PORT": "true", "RETRYSAFE_STORE": "sqlite",
		"RETRYSAFE_DSN": filepath.Join(dir, "consumer.db"), "RETRYSAFE_WEBHOOK_SECRET": testSecret,
		"RETRYSAFE_LOCK_TIMEOUT": "2s", "RETRYSAFE_MUTANT": mutant, "RETRYSAFE_DURABLE": "true",
	}
	tg, err := targets.Parse("consumer-webhook-managed.yaml", examples.ConsumerWebhookManaged, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	h, err := framework.Open(context.Background(), tg, framework.WithSettings(framework.Settings{Seed: 3}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestRedeliveryProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "redelivery", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantNoDedupe, webhookTarget), reports.KindDuplicateRecord)
}

// A redelivery re-encoded (the same content in other bytes) is a duplicate: a consumer that
// deduplicates on a hash of the raw bytes applies it again. Only that spec fails.
func TestRedeliveryReencoded(t *testing.T) {
	t.Parallel()
	raw := consumerHarness(t, consumer.MutantRawBytesDedupe, webhookTarget)
	for text, v := range specVerdicts(t, raw, "redelivery") {
		want := reports.Pass
		if strings.Contains(text, "re-encoded") {
			want = reports.Fail
		}
		if v != want {
			t.Errorf("raw-bytes-dedupe: %q: %s, want %s", text, v, want)
		}
	}
	expectCaughtOnBrokers(t, "redelivery", consumerRig{idHeader: "X-Event-Id"}, consumer.MutantRawBytesDedupe, reports.KindDuplicateRecord, queueTransports...)
}
