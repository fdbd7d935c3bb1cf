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
	// Method and Path are the webhook request (on each instance); Headers are sent with it.
	Method, Path string
	Headers      map[string]string
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

	req   request // the webhook request
	event *tmpl
}

// Transport is how events reach a consumer.
type Transport string

// The transports.
const (
	TransportWebhook Transport = "webhook"
	TransportAMQP    Transport = "amqp"
	TransportNATS    Transport = "nats"
)

// AMQPBinding says where a queue consumer's events go on RabbitMQ.
type AMQPBinding struct {
	// URL is the broker the harness publishes to (amqp://user:pass@host:port/vhost).
	URL string
	// Exchange, RoutingKey and Queue name the topology; Create makes the harness declare it at
	// the start of the run and delete it at the end.
	Exchange, RoutingKey, Queue string
	Create                      bool
}

// NATSBinding says where a queue consumer's events go on NATS JetStream.
type NATSBinding struct {
	// URL is the server the harness publishes to (nats://host:port).
	URL string
	// Stream and Subject name the stream; Create makes the harness create it (with a short
	// duplicates window) and delete it at the end. Durable names the consumer the harness
	// creates with it ("" = the consumer under test creates its own).
	Stream, Subject, Durable string
	Create                   bool
}

// EventSpec is the event the harness delivers.
type EventSpec struct {
	// Body is the event body template over {{.EventID}}, {{.Object}}, {{.Version}}, {{.Time}},
	// {{.Type}} and {{.Ref}}.
	Body string
	// Type fills {{.Type}}.
	Type string
	// IDHeader, when set, carries the event id in that header too (X-GitHub-Delivery, say);
	// otherwise the consumer reads it from the body (IDPath says where, for the record).
	IDHeader, IDPath string
}

// EventVars are what a consumer's templates see: the event and the run's ref.
type EventVars struct {
	EventID, Object, Version, Time, Type, Ref string
}

// consumerFields are the placeholders of a consumer's templates.
var consumerFields = []string{"EventID", "Object", "Version", "Time", "Type", "Ref"}

// RenderEvent renders the event body.
func (c *Consumer) RenderEvent(v EventVars) ([]byte, error) {
	s, err := c.event.render(v)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: event.body: %w", c.Name, err)
	}
	return []byte(s), nil
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

// consumerObjectFields are the fields of one consumer.
var consumerObjectFields = []string{"name", "transport", "method", "path", "headers", "amqp", "nats", "event",
	"signing", "effects", "state", "dedupe_retention", "lock_timeout"}

// consumers decodes the consumers list.
func (d *decoder) consumers(top *object) []*Consumer {
	nodes, _ := d.list(top, "consumers")
	var out []*Consumer
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("consumers[%d]", i), consumerObjectFields...)
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
		d.event(o, c)
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
		out = append(out, c)
	}
	return out
}

// consumerTransport decodes the webhook request or the broker binding of a consumer.
func (d *decoder) consumerTransport(o *object, c *Consumer) {
	switch c.Transport {
	case TransportWebhook:
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
	case TransportAMQP:
		bo, ok := d.object(o.fields["amqp"].val, o.at("amqp"), "url", "exchange", "routing_key", "queue", "create")
		if !ok {
			d.ps.add(o.line, o.at("amqp"), "missing required field (url, exchange, routing_key, queue)")
			return
		}
		b := &AMQPBinding{}
		b.URL, _ = d.required(bo, "url", " (amqp://guest:guest@127.0.0.1:5672/)")
		b.Exchange, _ = d.required(bo, "exchange", "")
		b.Queue, _ = d.required(bo, "queue", "")
		b.RoutingKey, _ = d.str(bo, "routing_key")
		b.Create, _ = d.boolean(bo, "create")
		c.AMQP = b
	case TransportNATS:
		bo, ok := d.object(o.fields["nats"].val, o.at("nats"), "url", "stream", "subject", "durable", "create")
		if !ok {
			d.ps.add(o.line, o.at("nats"), "missing required field (url, stream, subject)")
			return
		}
		b := &NATSBinding{}
		b.URL, _ = d.required(bo, "url", " (nats://127.0.0.1:4222)")
		b.Stream, _ = d.required(bo, "stream", "")
		b.Subject, _ = d.required(bo, "subject", "")
		b.Durable, _ = d.str(bo, "durable")
		b.Create, _ = d.boolean(bo, "create")
		c.NATS = b
	}
}

// event decodes a consumer's event.
func (d *decoder) event(o *object, c *Consumer) {
	eo, ok := d.object(o.fields["event"].val, o.at("event"), "body", "type", "id")
	if !ok {
		d.ps.add(o.line, o.at("event"), "missing required field (the event body template, with {{.EventID}})")
		return
	}
	if tp, ok := d.tmplField(eo, "body", consumerFields); ok {
		c.event, c.Event.Body = tp, tp.src
		if !strings.Contains(tp.src, ".EventID") && !eo.has("id") {
			d.ps.add(eo.lineOf("body"), eo.at("body"), "must carry {{.EventID}}, or event.id must name the header that carries it")
		}
	} else if !eo.has("body") {
		d.ps.add(eo.line, eo.at("body"), "missing required field (the event body template)")
	}
	c.Event.Type = "retrysafe.test"
	if s, ok := d.str(eo, "type"); ok {
		c.Event.Type = strings.TrimSpace(s)
	}
	if !eo.has("id") {
		c.Event.IDPath = "$.id"
		return
	}
	io, ok := d.object(eo.fields["id"].val, eo.at("id"), "header", "jsonpath")
	if !ok {
		return
	}
	if s, ok := d.str(io, "header"); ok {
		if !validHeaderName(strings.TrimSpace(s)) {
			d.ps.add(io.lineOf("header"), io.at("header"), "%q is not a valid HTTP header name", s)
		}
		c.Event.IDHeader = strings.TrimSpace(s)
	}
	if s, ok := d.str(io, "jsonpath"); ok {
		c.Event.IDPath = strings.TrimSpace(s)
	}
}

// signing decodes a consumer's signing block.
func (d *decoder) signing(o *object, c *Consumer) {
	c.Signing = webhook.Config{Scheme: webhook.SchemeNone}
	if !o.has("signing") {
		return
	}
	so, ok := d.object(o.fields["signing"].val, o.at("signing"), "scheme", "secret", "tolerance", "hmac")
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
		ho, ok := d.object(so.fields["hmac"].val, so.at("hmac"), "header", "template", "encoding", "prefix", "timestamp_header", "id_header")
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
	if c.Transport != TransportWebhook && c.Signing.Scheme != webhook.SchemeNone {
		d.ps.add(so.line, so.at("scheme"), "only webhook deliveries are signed (this consumer reads from %s)", c.Transport)
	}
	if _, err := webhook.New(c.Signing); err != nil && c.Signing.Secret != "" {
		d.ps.add(so.line, o.at("signing"), "%v", err)
	}
}

// Request renders a webhook delivery of body to an instance (the consumer's method, path and
// headers; no signature: the harness adds it).
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
	return req, nil
}

// Destination names where a queue consumer's events are published, for the history (no
// credentials): amqp://HOST/EXCHANGE/ROUTING_KEY or nats://HOST/SUBJECT.
func (c *Consumer) Destination() string {
	host := func(raw string) string {
		if u, err := url.Parse(raw); err == nil {
			return u.Host
		}
		return "?"
	}
	switch {
	case c.AMQP != nil:
		return "amqp://" + host(c.AMQP.URL) + "/" + c.AMQP.Exchange + "/" + c.AMQP.RoutingKey
	case c.NATS != nil:
		return "nats://" + host(c.NATS.URL) + "/" + c.NATS.Subject
	}
	return ""
}
