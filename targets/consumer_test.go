package targets

import (
	"maps"
	"strings"
	"testing"
)

// queueConsumer is a queue consumer of a file without instances: its effects observed through
// SQL, started by a lifecycle of two replicas ready at a log line. %BINDING% and %EXTRA% are
// replaced by each test.
const queueConsumer = `consumers:
  - name: q
    transport: %TRANSPORT%
    %BINDING%
    event:
      body: '{"object": "{{.Object}}", "version": {{.Version}}}'
%EXTRA%
    effects: {sql: {driver: sqlite, dsn: /tmp/effects.db, query: "SELECT count(*) FROM effects WHERE event = '{{.EventID}}'"}}
lifecycle:
  command: [worker, --broker, "{{.Broker}}"]
  replicas: 2
  ready: {log: "consuming"}
`

const amqpDefault = `amqp: {url: "amqp://guest:guest@127.0.0.1:5672/", exchange: "", queue: jobs}`

// queueFile renders queueConsumer.
func queueFile(transport, binding, extra string) string {
	return strings.NewReplacer("%TRANSPORT%", transport, "%BINDING%", binding, "%EXTRA%", extra).Replace(queueConsumer)
}

// A queue worker with no HTTP port: no instances, the default exchange, the event id in a
// message header (the body need not carry it), message headers rendered per event, replicas and
// a log readiness probe.
func TestQueueWorkerWithoutInstances(t *testing.T) {
	src := queueFile("amqp", amqpDefault, `      id: {header: x-event-id}
    headers: {x-source: "retrysafe {{.Object}}"}`)
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Consumers[0]
	if len(tg.Instances) != 0 || tg.Lifecycle.Replicas != 2 || tg.Lifecycle.Ready.Log == nil || tg.Lifecycle.Ready.Path != "" {
		t.Errorf("instances %v, lifecycle %+v; want none, 2 replicas ready at a log line", tg.Instances, tg.Lifecycle)
	}
	if !c.AMQP.DefaultExchange() || c.AMQP.PublishKey() != "jobs" || c.Destination() != "amqp://127.0.0.1:5672/(default)/jobs" {
		t.Errorf("binding %+v, destination %s; want the default exchange, routing key = the queue", c.AMQP, c.Destination())
	}
	if c.Event.ID != (EventID{In: IDInHeader, Header: "x-event-id"}) {
		t.Errorf("event id %+v, want header x-event-id", c.Event.ID)
	}
	got, err := c.MessageHeaders(EventVars{EventID: "evt_1", Object: "obj_1"})
	want := map[string]string{"x-source": "retrysafe obj_1", "x-event-id": "evt_1"}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("message headers = %v, %v; want %v", got, err, want)
	}
}

// Where the event id travels: the transport's id by default on a queue, the body's $.id on a
// webhook; one of transport, header and jsonpath when declared.
func TestEventIDTravel(t *testing.T) {
	webhook := "instances: [http://127.0.0.1:8080]\nconsumers:\n  - name: w\n    path: /hooks\n    event:\n      body: '{\"id\": \"{{.EventID}}\"}'\n%ID%\n    effects: {http: {path: /e, jsonpath: $.n}}\n"
	cases := []struct {
		name, src string
		want      EventID
	}{
		{"queue default", queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, durable: d}", ""), EventID{In: IDInTransport}},
		{"queue transport", queueFile("amqp", amqpDefault, "      id: {transport: true}"), EventID{In: IDInTransport}},
		{"queue body", strings.Replace(queueFile("amqp", amqpDefault, "      id: {jsonpath: $.key}"), `{"object"`, `{"key": "{{.EventID}}", "object"`, 1),
			EventID{In: IDInBody, Path: "$.key"}},
		{"webhook default", strings.Replace(webhook, "%ID%", "", 1), EventID{In: IDInBody, Path: "$.id"}},
		{"webhook header", strings.Replace(webhook, "%ID%", "      id: {header: webhook-id}", 1), EventID{In: IDInHeader, Header: "webhook-id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, probs := parseString(c.src, nil)
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			if got := tg.Consumers[0].Event.ID; got != c.want {
				t.Errorf("event id = %+v, want %+v", got, c.want)
			}
		})
	}
}

// Fields that cannot apply to a transport, or contradict each other, are errors with their line
// and field, never ignored.
func TestConsumerProblems(t *testing.T) {
	webhook := "instances: [http://127.0.0.1:8080]\nconsumers:\n  - name: w\n    path: /hooks\n    event:\n      body: '{\"id\": \"{{.EventID}}\"}'\n%ID%\n    effects: {http: {path: /e, jsonpath: $.n}}\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a path on a queue", queueFile("amqp", amqpDefault+"\n    path: /x", ""),
			[]string{"t.yaml:5: consumers[0].path: a amqp consumer takes no path"}},
		{"a method on a queue", queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e}\n    method: PUT", ""),
			[]string{"t.yaml:5: consumers[0].method: a nats consumer takes no method"}},
		{"nats on an amqp consumer", queueFile("amqp", amqpDefault+"\n    nats: {url: nats://x}", ""),
			[]string{"t.yaml:5: consumers[0].nats: a amqp consumer takes no nats"}},
		{"a routing key elsewhere on the default exchange", queueFile("amqp", `amqp: {url: "amqp://127.0.0.1/", queue: jobs, routing_key: other}`, ""),
			[]string{"t.yaml:4: consumers[0].amqp.routing_key: on the default exchange"}},
		{"a transport id on a webhook", strings.Replace(webhook, "%ID%", "      id: {transport: true}", 1),
			[]string{"t.yaml:7: consumers[0].event.id.transport: a webhook has no transport message id"}},
		{"two id locations", queueFile("amqp", amqpDefault, "      id: {header: x-id, jsonpath: $.id}"),
			[]string{"t.yaml:7: consumers[0].event.id: declare exactly one of transport: true, header: NAME and jsonpath: PATH"}},
		{"the body without the id that travels there", queueFile("amqp", amqpDefault, "      id: {jsonpath: $.id}"),
			[]string{"t.yaml:6: consumers[0].event.body: must carry {{.EventID}}"}},
		{"a header that is the id's", queueFile("amqp", amqpDefault, "      id: {header: X-Id}\n    headers: {x-id: fixed}"),
			[]string{"t.yaml:8: consumers[0].headers.x-id: is the event id's header"}},
		{"create_durable without a durable", queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, create: true, create_durable: push}", ""),
			[]string{"t.yaml:4: consumers[0].nats.create_durable: needs nats.durable"}},
		{"a bad create_durable", queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, durable: d, create_durable: pulled}", ""),
			[]string{"t.yaml:4: consumers[0].nats.create_durable: must be pull, push or false"}},
		{"a fail_next request without an HTTP port", queueFile("amqp", amqpDefault, "    hooks: {fail_next: {path: /fail}}"),
			[]string{"t.yaml:1: instances: missing required field (consumer q's hooks (fail_next, disarm) are requests sent to an instance; a worker without an HTTP port declares fail_next: {message_headers: {...}})"}},
		{"slow without headers", queueFile("amqp", amqpDefault, "    hooks: {slow: {}}"),
			[]string{"t.yaml:7: consumers[0].hooks.slow: declare one of headers or message_headers"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// Without instances, whatever needs HTTP is refused with the reason, and so is a readiness
// probe that needs a port.
func TestInstancesNeeded(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"an HTTP observer", strings.Replace(queueFile("amqp", amqpDefault, ""),
			`{sql: {driver: sqlite, dsn: /tmp/effects.db, query: "SELECT count(*) FROM effects WHERE event = '{{.EventID}}'"}}`,
			"{http: {path: /effects, jsonpath: $.n}}", 1),
			[]string{"t.yaml:1: instances: missing required field (consumer q is observed over HTTP"}},
		{"a readiness path", strings.Replace(queueFile("amqp", amqpDefault, ""), `ready: {log: "consuming"}`, "ready: {path: /healthz}", 1),
			[]string{"t.yaml:12: lifecycle.ready: a target without instances has no HTTP port to probe"}},
		{"two probes", strings.Replace(queueFile("amqp", amqpDefault, ""), `ready: {log: "consuming"}`, `ready: {log: "x", broker_consumers: 1}`, 1),
			[]string{"t.yaml:12: lifecycle.ready: declare one probe"}},
		{"replicas beside instances", "instances: [http://127.0.0.1:1]\n" + queueFile("amqp", amqpDefault, ""),
			[]string{"t.yaml:12: lifecycle.replicas: is 2, but one process runs per instance (1)"}},
		{"operations without instances", "operations:\n  - name: op\n    path: /p\n",
			[]string{"t.yaml:1: instances: missing required field (the base URLs of the API"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// A broker readiness probe counts consumers; a push durable the harness creates.
func TestBrokerReadinessAndPushDurable(t *testing.T) {
	src := strings.Replace(queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, durable: d, create: true, create_durable: push, delete: true}", ""),
		`ready: {log: "consuming"}`, "ready: {broker_consumers: 1, timeout: 5s}", 1)
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	if r := tg.Lifecycle.Ready; r.BrokerConsumers != 1 || r.Log != nil || r.Path != "" {
		t.Errorf("ready = %+v, want broker_consumers 1", r)
	}
	if n := tg.Consumers[0].NATS; n.CreateDurable != DurablePush || !n.Delete {
		t.Errorf("nats binding = %+v, want a push durable created and the stream deleted", n)
	}
}
