package targets

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/webhook"
)

// Consumer is one consumer of events under test (the target file's consumers): a webhook
// endpoint the harness delivers events to, or a queue consumer the harness publishes to on a
// real broker. The harness plays the provider that delivers at least once; the consumer must
// deduplicate on the event id, apply each event's effect once, and keep the newest state.
type Consumer struct {
	// Name identifies the consumer in reports and labels.
	Name string
	// Transport is how events reach it: webhook, amqp or nats.
	Transport Transport
	// Method and Path are the webhook request (on each instance); empty for a queue consumer.
	Method, Path string
	// Headers are sent with every delivery (templates over the event's fields): the webhook
	// request's headers, or a queue message's headers (AMQP table values as strings).
	Headers map[string]string
	// AMQP and NATS say where a queue consumer's events are published (one is set for its
	// transport).
	AMQP *AMQPBinding
	NATS *NATSBinding
	// Event is the event the harness delivers.
	Event EventSpec
	// Signing is how deliveries are signed (webhook.SchemeNone: not at all).
	Signing webhook.Config
	// Effects counts the effects one event left; State reads an object's stored version.
	Effects, State *Observer
	// DedupeRetention is how long the consumer remembers an event id (0 = not declared).
	DedupeRetention time.Duration
	// LockTimeout is how long a claimed event may stay in progress before a redelivery takes it
	// over (0 = not declared).
	LockTimeout time.Duration
	// RedeliveryAfter is how long a queue consumer's broker takes to deliver again a message the
	// consumer gave back (a retry queue's TTL, a delayed requeue): declared for RabbitMQ, where
	// the broker cannot be asked (0 = at once, as on a closed channel or a plain requeue), and on
	// JetStream without nats.durable (the durable's AckWait and BackOff are read from the server
	// otherwise).
	RedeliveryAfter time.Duration
	// Hooks are the consumer's test hooks (nil = none): make a handling fail, or slow.
	Hooks *ConsumerHooks
	// OperationDedupe declares that the consumer applies each business operation once, whatever
	// message names it (operation_dedupe; needs event.operation or event.operations).
	OperationDedupe bool

	req     request  // the webhook request
	headers []header // a queue message's headers
	event   *tmpl
}

// Transport is how events reach a consumer.
type Transport string

// The transports.
const (
	TransportWebhook Transport = "webhook"
	TransportAMQP    Transport = "amqp"
	TransportNATS    Transport = "nats"
)

// IsQueue reports whether events reach the consumer through a broker (amqp, nats).
func (c *Consumer) IsQueue() bool { return c.Transport != TransportWebhook }

// EventSpec is the event the harness delivers.
type EventSpec struct {
	// Body is the event body template over {{.EventID}}, {{.Object}}, {{.Version}}, {{.Time}},
	// {{.Type}} and {{.Ref}}.
	Body string
	// Type fills {{.Type}}.
	Type string
	// ID says where the consumer reads the event id.
	ID EventID
	// Operation says where an event names the business operation it applies ({{.Operation}});
	// nil = not declared.
	Operation *EventOperation
	// Operations says where an event names the several operations it applies
	// ({{.Operations}}, a JSONPath over the body); nil = not declared.
	Operations *EventOperation
}

// IDTravel is where an event's id travels to the consumer.
type IDTravel string

// Where the event id travels.
const (
	// IDInTransport: the broker's own message id (AMQP message_id, JetStream Nats-Msg-Id); the
	// default on queues. Every delivery of one event carries the same transport id.
	IDInTransport IDTravel = "transport"
	// IDInHeader: a header (the webhook request's, or the message's); the transport id of a
	// queue message then differs per publication.
	IDInHeader IDTravel = "header"
	// IDInBody: the body only (EventID.Path says where); the default on webhooks.
	IDInBody IDTravel = "body"
)

// EventID says where the consumer reads an event's id.
type EventID struct {
	// In is where it travels.
	In IDTravel
	// Header names the header with IDInHeader.
	Header string
	// Path is the body's field with IDInBody (RFC 9535, for the record: the harness renders the
	// body from its template).
	Path string
}

// EventVars are what a consumer's templates see: the event and the run's ref (and, in
// hooks.slow, the delay).
type EventVars struct {
	EventID, Object, Version, Time, Type, Ref string
	// Ms is the delay a slow hook asks for, in milliseconds (hooks.slow only).
	Ms string
	// When is the point at which a fail_next hook fails the handling (hooks.fail_next only):
	// FailBeforeEffect or FailAfterEffect.
	When string
	// Operation is the business operation the event applies (event.operation), "" when it names
	// several; in the effects observer, the operation whose effects are counted.
	Operation string
	// Operations are every operation the event applies (event.operations): its one operation,
	// or the several it names.
	Operations []string
}

// consumerFields are the placeholders of a consumer's templates.
var consumerFields = []string{"EventID", "Object", "Version", "Time", "Type", "Ref", "Operation", "Operations"}

// RenderEvent renders the event body.
func (c *Consumer) RenderEvent(v EventVars) ([]byte, error) {
	s, err := c.event.render(v)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: event.body: %w", c.Name, err)
	}
	return []byte(s), nil
}

// MessageHeaders renders a queue message's headers for an event: the declared headers, and the
// event id's header when the id travels in one.
func (c *Consumer) MessageHeaders(v EventVars) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range c.headers {
		s, err := h.tmpl.render(v)
		if err != nil {
			return nil, fmt.Errorf("consumer %s: headers.%s: %w", c.Name, h.Name, err)
		}
		out[h.Name] = s
	}
	if c.Event.ID.In == IDInHeader {
		out[c.Event.ID.Header] = v.EventID
	}
	if op := c.Event.Operation; op != nil && op.Header != "" && v.Operation != "" {
		out[op.Header] = v.Operation
	}
	return out, nil
}

// brokerURL is the URL of a queue consumer's broker ("" for a webhook).
func (c *Consumer) brokerURL() string {
	switch {
	case c.AMQP != nil:
		return c.AMQP.URL
	case c.NATS != nil:
		return c.NATS.URL
	}
	return ""
}

// consumers decodes the consumers list.
func (d *decoder) consumers(top *object) []*Consumer {
	nodes, _ := d.list(top, "consumers")
	var out []*Consumer
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("consumers[%d]", i), "consumers[]")
		if !ok {
			continue
		}
		c := &Consumer{Name: d.uniqueName(o, "consumer", seen), Transport: TransportWebhook}
		if s, ok := d.str(o, "transport"); ok {
			switch t := Transport(strings.TrimSpace(s)); t {
			case TransportWebhook, TransportAMQP, TransportNATS:
				c.Transport = t
			default:
				d.ps.add(o.lineOf("transport"), o.at("transport"), "must be webhook, amqp or nats, got %q", s)
			}
		}
		d.consumerTransport(o, c)
		eo := d.event(o, c)
		d.signing(o, c)
		c.Effects = d.observerAt(o, "effects", consumerFields)
		if c.Effects == nil && !o.has("effects") {
			d.ps.add(o.line, o.at("effects"), "missing required field (how many effects one event left, e.g. {http: {path: /v1/effects, query: \"event={{.EventID}}\", jsonpath: $.count}})")
		}
		if o.has("state") {
			c.State = d.observerAt(o, "state", consumerFields)
		}
		if v, ok := d.duration(o, "dedupe_retention"); ok {
			c.DedupeRetention = v
		}
		if v, ok := d.duration(o, "lock_timeout"); ok {
			c.LockTimeout = v
		}
		d.redeliveryAfter(o, c)
		c.Hooks = d.consumerHooks(o, c)
		d.operationDedupe(o, eo, c)
		if eo != nil {
			d.checkOperations(o, eo, c)
		}
		out = append(out, c)
	}
	return out
}

// consumerTransport decodes the webhook request, or the broker binding and message headers of a
// queue consumer; fields of the other transports are errors.
func (d *decoder) consumerTransport(o *object, c *Consumer) {
	if c.Transport == TransportWebhook {
		for _, f := range []string{"amqp", "nats"} {
			if o.has(f) {
				d.ps.add(o.lineOf(f), o.at(f), "only a %s consumer takes %s (this one is a webhook)", f, f)
			}
		}
		if !o.has("path") {
			d.ps.add(o.line, o.at("path"), "missing required field (the webhook's path, such as /webhooks)")
			return
		}
		d.requestWith(o, &c.req, "POST", consumerFields)
		c.Method, c.Path, c.Headers = c.req.method, srcOf(c.req.path), headerMap(c.req.headers)
		return
	}
	for _, f := range []string{"method", "path", "amqp", "nats"} {
		if o.has(f) && f != string(c.Transport) {
			d.ps.add(o.lineOf(f), o.at(f), "a %s consumer takes no %s (events are published on its broker, not sent over HTTP)", c.Transport, f)
		}
	}
	c.headers, _ = d.tmplHeaders(o, consumerFields)
	c.Headers = headerMap(c.headers)
	if c.Transport == TransportAMQP {
		c.AMQP = d.amqpBinding(o)
	} else {
		c.NATS = d.natsBinding(o)
	}
}

// event decodes a consumer's event, and returns its object (nil when it has none).
func (d *decoder) event(o *object, c *Consumer) *object {
	eo, ok := d.child(o, "event")
	if !ok {
		d.ps.add(o.line, o.at("event"), "missing required field (the event body template, with {{.EventID}})")
		return nil
	}
	d.eventID(eo, c)
	d.eventOperation(eo, c)
	d.eventOperations(eo, c)
	if tp, ok := d.tmplField(eo, "body", consumerFields); ok {
		c.event, c.Event.Body = tp, tp.src
		if !strings.Contains(tp.src, ".EventID") && c.Event.ID.In == IDInBody {
			d.ps.add(eo.lineOf("body"), eo.at("body"), "must carry {{.EventID}}: the event id travels in the body (event.id names a header or, on a queue, transport: true otherwise)")
		}
	} else if !eo.has("body") {
		d.ps.add(eo.line, eo.at("body"), "missing required field (the event body template)")
	}
	c.Event.Type = "retrysafe.test"
	if s, ok := d.str(eo, "type"); ok {
		c.Event.Type = strings.TrimSpace(s)
	}
	if c.Event.ID.In == IDInHeader {
		for name := range c.Headers {
			if strings.EqualFold(name, c.Event.ID.Header) {
				d.ps.add(o.lineOf("headers"), o.at("headers")+"."+name, "is the event id's header (event.id.header): the harness sets it to each event's id")
			}
		}
	}
	return eo
}

// eventID decodes where the event id travels: one of transport (queues only), header and
// jsonpath; the default is the transport id on a queue, $.id in the body of a webhook.
func (d *decoder) eventID(eo *object, c *Consumer) {
	c.Event.ID = EventID{In: IDInBody, Path: "$.id"}
	if c.IsQueue() {
		c.Event.ID = EventID{In: IDInTransport}
	}
	if !eo.has("id") {
		return
	}
	io, ok := d.child(eo, "id")
	if !ok {
		return
	}
	declared := 0
	for _, f := range []string{"transport", "header", "jsonpath"} {
		if io.has(f) {
			declared++
		}
	}
	if declared != 1 {
		d.ps.add(io.line, eo.at("id"), "declare exactly one of transport: true, header: NAME and jsonpath: PATH (where the consumer reads the event id)")
		return
	}
	switch {
	case io.has("transport"):
		v, ok := d.boolean(io, "transport")
		switch {
		case !ok:
		case !v:
			d.ps.add(io.lineOf("transport"), io.at("transport"), "only transport: true is meaningful (name a header or a jsonpath instead)")
		case !c.IsQueue():
			d.ps.add(io.lineOf("transport"), io.at("transport"), "a webhook has no transport message id: name the header (e.g. webhook-id) or the body's jsonpath that carries the event id")
		default:
			c.Event.ID = EventID{In: IDInTransport}
		}
	case io.has("header"):
		s, _ := d.str(io, "header")
		name := strings.TrimSpace(s)
		if !validHeaderName(name) {
			d.ps.add(io.lineOf("header"), io.at("header"), "%q is not a valid header name", s)
		}
		c.Event.ID = EventID{In: IDInHeader, Header: name}
	default:
		s, _ := d.str(io, "jsonpath")
		c.Event.ID = EventID{In: IDInBody, Path: strings.TrimSpace(s)}
	}
}

// signing decodes a consumer's signing block.
func (d *decoder) signing(o *object, c *Consumer) {
	c.Signing = webhook.Config{Scheme: webhook.SchemeNone}
	if !o.has("signing") {
		return
	}
	so, ok := d.child(o, "signing")
	if !ok {
		return
	}
	if s, ok := d.str(so, "scheme"); ok {
		sc, err := webhook.ParseScheme(strings.TrimSpace(s))
		if err != nil {
			d.ps.add(so.lineOf("scheme"), so.at("scheme"), "%v", err)
		}
		c.Signing.Scheme = sc
	}
	c.Signing.Secret, _ = d.str(so, "secret")
	if v, ok := d.duration(so, "tolerance"); ok {
		c.Signing.Tolerance = v
	}
	if so.has("hmac") {
		ho, ok := d.child(so, "hmac")
		if ok {
			h := &webhook.HMACConfig{}
			h.Header, _ = d.str(ho, "header")
			h.Template, _ = d.str(ho, "template")
			h.Encoding, _ = d.str(ho, "encoding")
			h.Prefix, _ = d.str(ho, "prefix")
			h.TimestampHeader, _ = d.str(ho, "timestamp_header")
			h.IDHeader, _ = d.str(ho, "id_header")
			c.Signing.HMAC = h
		}
	}
	if c.Signing.Scheme != webhook.SchemeNone && c.Signing.Secret == "" {
		d.ps.add(so.line, so.at("secret"), "missing required field (the signing secret, e.g. \"${WEBHOOK_SECRET}\")")
	}
	if c.IsQueue() && c.Signing.Scheme != webhook.SchemeNone {
		d.ps.add(so.line, so.at("scheme"), "only webhook deliveries are signed (this consumer reads from %s)", c.Transport)
	}
	if _, err := webhook.New(c.Signing); err != nil && c.Signing.Secret != "" && !d.standIns[so.at("secret")] {
		d.ps.add(so.line, o.at("signing"), "%v", err)
	}
}

// Request renders a webhook delivery of body to an instance (the consumer's method, path and
// headers, and the event id's header when it travels in one; no signature: the harness adds
// it).
func (c *Consumer) Request(ctx context.Context, inst *Instance, v EventVars, body []byte) (*http.Request, error) {
	pq, err := c.req.pathQuery(v)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", c.Name, err)
	}
	req, err := c.req.newRequest(ctx, inst, nil, v, pq, body)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", c.Name, err)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Event.ID.In == IDInHeader {
		req.Header.Set(c.Event.ID.Header, v.EventID)
	}
	if op := c.Event.Operation; op != nil && op.Header != "" && v.Operation != "" {
		req.Header.Set(op.Header, v.Operation)
	}
	return req, nil
}

// Destination names where a queue consumer's events are published, for the history (no
// credentials): amqp://HOST/EXCHANGE/ROUTING_KEY (the default exchange as "(default)") or
// nats://HOST/SUBJECT.
func (c *Consumer) Destination() string {
	host := func(raw string) string {
		if u, err := url.Parse(raw); err == nil {
			return u.Host
		}
		return "?"
	}
	switch {
	case c.AMQP != nil:
		ex := c.AMQP.Exchange
		if ex == "" {
			ex = "(default)"
		}
		return "amqp://" + host(c.AMQP.URL) + "/" + ex + "/" + c.AMQP.PublishKey()
	case c.NATS != nil:
		return "nats://" + host(c.NATS.URL) + "/" + c.NATS.Subject
	}
	return ""
}
