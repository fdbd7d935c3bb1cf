package targets

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// publishing is a file whose one operation publishes %PUBLISHES% (indented as a list entry's
// fields); %LIFECYCLE% is replaced by a lifecycle block or nothing.
const publishing = `instances: [http://127.0.0.1:8080]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1}'
    publishes:
      - name: order.created
%PUBLISHES%
%LIFECYCLE%`

// publishFile renders publishing with the entry's fields (each on its own line, indented under
// the entry) and a lifecycle.
func publishFile(lifecycle string, fields ...string) string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString("        " + f + "\n")
	}
	return strings.NewReplacer("%PUBLISHES%", strings.TrimRight(b.String(), "\n"), "%LIFECYCLE%", lifecycle).Replace(publishing)
}

const (
	amqpOrders   = `amqp: {url: "amqp://guest:s3cret-pw@127.0.0.1:5672/", exchange: orders, routing_key: order.created}`
	natsOrders   = `nats: {url: "nats://127.0.0.1:4222", stream: ORDERS, subject: orders.created}`
	hookOrders   = `webhook: {listen: "127.0.0.1:9876", path: /events}`
	idBody       = `id: {jsonpath: $.id}`
	refData      = `ref: {jsonpath: $.data.ref}`
	eventsURLEnv = "lifecycle:\n  command: [api, --events-url, \"{{.EventsURL}}\"]\n"
)

// The three transports, every way an id travels, both ties, within and ignore decode as
// declared; a broker's password is a secret.
func TestPublishesDecode(t *testing.T) {
	tg, probs := parseString(publishFile("", amqpOrders, "id: {message_id: true}", refData, "within: 3s", "ignore: [$.sent_at]"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	p := tg.Operations[0].Publishes[0]
	if p.Name != "order.created" || p.Transport != TransportAMQP || p.AMQP.Exchange != "orders" || p.AMQP.RoutingKey != "order.created" {
		t.Errorf("publish %+v, amqp %+v", p, p.AMQP)
	}
	if p.ID != (EventID{In: IDInTransport}) || p.Tie != (EventTie{Path: "$.data.ref"}) || p.Within != 3*time.Second || len(p.Ignore) != 1 {
		t.Errorf("id %+v, tie %+v, within %v, ignore %v", p.ID, p.Tie, p.Within, p.Ignore)
	}
	if got := p.Destination(); got != "amqp://127.0.0.1:5672/orders/order.created" {
		t.Errorf("destination %s", got)
	}
	if secrets := tg.SecretValues(); !strings.Contains(strings.Join(secrets, " "), "s3cret-pw") {
		t.Errorf("secrets %v lack the broker's password", secrets)
	}
	if got := tg.Publishing(); len(got) != 1 || got[0].Name != "orders" {
		t.Errorf("publishing operations %v", got)
	}

	tg, probs = parseString(publishFile(eventsURLEnv, "webhook: {path: /events}", "id: {header: Event-Id}", "record: {jsonpath: $.data.id}"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	p = tg.Operations[0].Publishes[0]
	if p.Webhook == nil || p.Webhook.Path != "/events" || p.ID != (EventID{In: IDInHeader, Header: "Event-Id"}) ||
		p.Tie != (EventTie{Record: true, Path: "$.data.id", Answer: "$.id"}) || p.Within != DefaultWithin {
		t.Errorf("webhook %+v, id %+v, tie %+v, within %v", p.Webhook, p.ID, p.Tie, p.Within)
	}

	tg, probs = parseString(publishFile("", natsOrders, idBody, "record: {jsonpath: $.order_id, answer: $.order.id}"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	p = tg.Operations[0].Publishes[0]
	if p.NATS.Stream != "ORDERS" || p.NATS.Subject != "orders.created" || p.Tie.Answer != "$.order.id" || p.Destination() != "nats://127.0.0.1:4222/orders.created" {
		t.Errorf("nats %+v, tie %+v", p.NATS, p.Tie)
	}
}

// An observed event's id and tie are read where the file says; a record tie reads the 2xx
// answer.
func TestPublishReadsEvents(t *testing.T) {
	tg, probs := parseString(publishFile(eventsURLEnv, "webhook: {}", "id: {header: Event-Id}", "record: {jsonpath: $.data.id}"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	p := tg.Operations[0].Publishes[0]
	m := EventMessage{Body: []byte(`{"id": "evt_1", "data": {"id": "ord_7", "amount": 1}}`), Header: http.Header{"Event-Id": {"evt_h"}}}
	if id, err := p.EventID(m); id != "evt_h" || err != nil {
		t.Errorf("event id %q, %v; want the header's", id, err)
	}
	if tie, err := p.TieOf(m); tie != "ord_7" || err != nil {
		t.Errorf("tie %q, %v", tie, err)
	}
	if rec, err := p.RecordOf([]byte(`{"id": "ord_7"}`)); rec != "ord_7" || err != nil {
		t.Errorf("record %q, %v", rec, err)
	}
	if _, err := p.EventID(EventMessage{Body: m.Body}); err == nil || !strings.Contains(err.Error(), "no header Event-Id") {
		t.Errorf("an event without the header: %v", err)
	}
	if _, err := p.TieOf(EventMessage{Body: []byte(`{"data": {}}`)}); err == nil || !strings.Contains(err.Error(), "selects nothing") {
		t.Errorf("an event without the member: %v", err)
	}
}

// Every mistake in a publishes entry is located: two transports, none, a bound default
// exchange, an id or a tie that names nothing, a receiver the API cannot learn.
func TestPublishesProblems(t *testing.T) {
	at := func(line int, field, msg string) string {
		return "t.yaml:" + strconv.Itoa(line) + ": operations[0].publishes[0]" + field + ": " + msg
	}
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"two transports", publishFile("", amqpOrders, natsOrders, idBody, refData),
			[]string{at(9, ".nats", "an event is published on one transport, and amqp is declared too")}},
		{"no transport", publishFile("", idBody, refData),
			[]string{at(7, "", "declare where the event is published")}},
		{"the default exchange", publishFile("", `amqp: {url: "amqp://127.0.0.1:5672/", exchange: "", routing_key: k}`, idBody, refData),
			[]string{at(8, ".amqp.exchange", "the default exchange cannot be bound")}},
		{"no exchange is the default one", publishFile("", `amqp: {url: "amqp://127.0.0.1:5672/"}`, idBody, refData),
			[]string{at(8, ".amqp.exchange", "the default exchange cannot be bound")}},
		{"a queue", publishFile("", `amqp: {url: "amqp://127.0.0.1:5672/", exchange: x, queue: q}`, idBody, refData),
			[]string{at(8, ".amqp.queue", "unknown field")}},
		{"an id that names nothing", publishFile("", natsOrders, "id: {}", refData),
			[]string{at(9, ".id", "names nothing: declare exactly one of")}},
		{"an id of two places", publishFile("", natsOrders, "id: {jsonpath: $.id, header: X-Id}", refData),
			[]string{at(9, ".id", "names nothing: declare exactly one of")}},
		{"an id at the whole document", publishFile("", natsOrders, "id: {jsonpath: $}", refData),
			[]string{at(9, ".id.jsonpath", "names nothing: \"$\" is the whole document")}},
		{"an id of several nodes", publishFile("", natsOrders, "id: {jsonpath: '$..id'}", refData),
			[]string{at(9, ".id.jsonpath", "names no single member")}},
		{"message_id false", publishFile("", natsOrders, "id: {message_id: false}", refData),
			[]string{at(9, ".id.message_id", "names nothing")}},
		{"a webhook's message id", publishFile(eventsURLEnv, "webhook: {}", "id: {message_id: true}", refData),
			[]string{at(9, ".id.message_id", "a webhook has no transport message id")}},
		{"no id", publishFile("", natsOrders, refData),
			[]string{at(7, ".id", "missing required field")}},
		{"no tie", publishFile("", natsOrders, idBody),
			[]string{at(7, ".ref", "missing required field (how an event names its operation")}},
		{"a ref that names nothing", publishFile("", natsOrders, idBody, "ref: {}"),
			[]string{at(10, ".ref.jsonpath", "missing required field")}},
		{"a ref and a record", publishFile("", natsOrders, idBody, refData, "record: {jsonpath: $.data.id}"),
			[]string{at(11, ".record", "ties the event to its operation like ref does")}},
		{"a receiver the API cannot learn", publishFile("", "webhook: {}", idBody, refData),
			[]string{"t.yaml:7: publishes: event order.created: the API cannot learn the receiver's address"}},
		{"two transports named in the file's order", publishFile("", hookOrders, amqpOrders, idBody, refData),
			[]string{at(9, ".amqp", "an event is published on one transport, and webhook is declared too")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// A ref tie needs an operation that sends its {{.Ref}}; {{.EventsURL}} needs a webhook event.
func TestPublishesAgainstTheFile(t *testing.T) {
	noRef := strings.Replace(publishFile("", natsOrders, idBody, refData), `{"ref": "{{.Ref}}", "amount": 1}`, `{"amount": 1}`, 1)
	_, probs := parseString(noRef, nil)
	wantProblems(t, probs, []string{"t.yaml:10: operations[0].publishes[0].ref: the operation sends no {{.Ref}}"})

	_, probs = parseString(publishFile(eventsURLEnv, natsOrders, idBody, refData), nil)
	wantProblems(t, probs, []string{"t.yaml:11: lifecycle: uses {{.EventsURL}} but no operation publishes a webhook event"})
}

// {{.EventsBroker}} is where the API reaches its events' broker or receiver: it lets a webhook
// event's API learn the receiver's address, and needs an event.
func TestPublishesEventsBroker(t *testing.T) {
	brokerEnv := "lifecycle:\n  command: [api, --events-url, \"http://{{.EventsBroker}}/events\"]\n"
	tg, probs := parseString(publishFile(brokerEnv, "webhook: {path: /events}", "id: {header: Event-Id}", refData), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	if !tg.Lifecycle.UsesEventsBroker() || tg.Lifecycle.UsesEventsURL() || tg.Lifecycle.UsesBroker() {
		t.Errorf("uses EventsBroker %v, EventsURL %v, Broker %v", tg.Lifecycle.UsesEventsBroker(), tg.Lifecycle.UsesEventsURL(), tg.Lifecycle.UsesBroker())
	}
	argv, _, err := tg.Lifecycle.Render(LifecycleVars{EventsBroker: "127.0.0.1:7"})
	if err != nil || argv[2] != "http://127.0.0.1:7/events" {
		t.Errorf("rendered %q, %v", argv, err)
	}
	noEvents := "instances: [http://127.0.0.1:8080]\noperations:\n  - name: orders\n    path: /v1/orders\n" +
		"lifecycle:\n  command: [api, --events-url, \"amqp://{{.EventsBroker}}/\"]\n"
	_, probs = parseString(noEvents, nil)
	wantProblems(t, probs, []string{"t.yaml:5: lifecycle: uses {{.EventsBroker}} but no operation publishes an event"})
}
