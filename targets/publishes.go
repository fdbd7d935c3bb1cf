package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/theory/jsonpath"
)

// Publish is one event an operation publishes (an entry of its publishes block): where it goes
// (a RabbitMQ exchange, a JetStream stream, or a webhook the harness receives), where its id
// travels (what consumers deduplicate on), and how it is tied to the operation (its {{.Ref}}, or
// the id of the record its 2xx answer names). The harness observes it without disturbing the
// API's own consumers: its own exclusive queue bound to the exchange, an ephemeral ordered
// consumer on the stream, its own receiver.
type Publish struct {
	// Name names the event (order.created); names are unique within an operation.
	Name string
	// Transport is how the event leaves the API: amqp, nats or webhook.
	Transport Transport
	// AMQP is where it is published on RabbitMQ: Exchange (never the default one: a queue of
	// the harness's is bound to it) and RoutingKey, the binding key of that queue (default
	// "#"). Queue is unused.
	AMQP *AMQPBinding
	// NATS is the JetStream stream and subject it is published on (no durable is used).
	NATS *NATSBinding
	// Webhook is the receiver the harness runs for it.
	Webhook *EventReceiver
	// ID says where the event's id travels: the transport's message id (AMQP message_id,
	// JetStream Nats-Msg-Id), a header, or a member of the body.
	ID EventID
	// Tie says how an event names its operation.
	Tie EventTie
	// Within is how long after the operation's first 2xx answer the event must be published
	// (default DefaultWithin).
	Within time.Duration
	// Outage is how long event-under-broker-outage keeps the API's link to its broker cut after
	// the last operation acknowledged while it was cut: the longest broker outage the team
	// plans for (a restart, a failover). Default Within. Within still counts from the heal.
	Outage time.Duration
	// Grace is how long a spec still looks, once every acknowledged operation's event is in,
	// for late second ids and ghosts (default DefaultGrace).
	Grace time.Duration
	// Ignore lists the JSONPaths of members that may differ between copies of one id (a send
	// time).
	Ignore []string

	ignore Ignore
	id     *jsonpath.Path
	tie    *jsonpath.Path
	answer *jsonpath.Path
	line   int
}

// DefaultWithin is how long after its operation's first 2xx answer an event must be published
// when the target file says nothing (publishes[].within).
const DefaultWithin = 10 * time.Second

// DefaultGrace is how long an events spec looks for late extra ids and ghosts once every
// event it waits for is in, when the target file says nothing (publishes[].grace).
const DefaultGrace = 2 * time.Second

// DefaultBindingKey is the binding key of the harness's queue on an exchange when publishes
// names no routing_key: every message of a topic exchange.
const DefaultBindingKey = "#"

// EventReceiver is the harness's webhook receiver for an API that delivers events over HTTP.
type EventReceiver struct {
	// Listen is a fixed address for it ("" = any port, given to the API as {{.EventsURL}}).
	Listen string
	// Path is the URL path its events arrive on ("" = any path).
	Path string
}

// EventTie says how an event names the operation that published it.
type EventTie struct {
	// Record is false when the event's member at Path is the operation's {{.Ref}}; true when it
	// is the id of the record the operation's 2xx answer names at Answer.
	Record bool
	// Path is the event's member (RFC 9535, singular).
	Path string
	// Answer is the member of a 2xx answer that holds the record's id (Record only; default $.id).
	Answer string
}

// EventMessage is one observed event as the transport handed it over.
type EventMessage struct {
	// Body is the payload.
	Body []byte
	// Header holds the message's headers (AMQP table values as strings, NATS headers, the
	// webhook request's headers).
	Header http.Header
	// MessageID is the transport's message id ("" on a webhook).
	MessageID string
}

// EventID returns the event's id, read where the target file says it travels.
func (p *Publish) EventID(m EventMessage) (string, error) {
	switch p.ID.In {
	case IDInTransport:
		if m.MessageID == "" {
			return "", errors.New("the message carries no message id")
		}
		return m.MessageID, nil
	case IDInHeader:
		if v := m.Header.Get(p.ID.Header); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("the message has no header %s", p.ID.Header)
	}
	return member(m.Body, p.id, p.ID.Path)
}

// TieOf returns what the event names of its operation: its {{.Ref}}, or its record's id.
func (p *Publish) TieOf(m EventMessage) (string, error) { return member(m.Body, p.tie, p.Tie.Path) }

// RecordOf returns the record id a 2xx answer of the operation names (Tie.Record only).
func (p *Publish) RecordOf(answer []byte) (string, error) {
	return member(answer, p.answer, p.Tie.Answer)
}

// IgnoreSet is what comparing two copies of one event leaves out.
func (p *Publish) IgnoreSet() Ignore { return p.ignore }

// Destination names where the event is published, for the history (no credentials):
// amqp://HOST/EXCHANGE/KEY, nats://HOST/SUBJECT or webhook PATH.
func (p *Publish) Destination() string {
	host := func(raw string) string {
		if u, err := url.Parse(raw); err == nil {
			return u.Host
		}
		return "?"
	}
	switch {
	case p.AMQP != nil:
		return "amqp://" + host(p.AMQP.URL) + "/" + p.AMQP.Exchange + "/" + p.AMQP.RoutingKey
	case p.NATS != nil:
		return "nats://" + host(p.NATS.URL) + "/" + p.NATS.Subject
	case p.Webhook != nil && p.Webhook.Path != "":
		return "webhook " + p.Webhook.Path
	}
	return "webhook"
}

// member reads the singular member at p of a JSON document, as text (a string unquoted).
func member(body []byte, p *jsonpath.Path, src string) (string, error) {
	if p == nil {
		return "", fmt.Errorf("no JSONPath")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("not JSON (%v): %s", err, snippet(body))
	}
	nodes := p.Select(doc)
	if len(nodes) == 0 {
		return "", fmt.Errorf("%s selects nothing in %s", src, snippet(body))
	}
	b, _ := json.Marshal(nodes[0])
	s := jsonText(b)
	if s == "" {
		return "", fmt.Errorf("%s is empty in %s", src, snippet(body))
	}
	return s, nil
}

// Publishing returns the operations that declare what they publish.
func (t *Target) Publishing() []*Operation {
	var out []*Operation
	for _, op := range t.Operations {
		if len(op.Publishes) > 0 {
			out = append(out, op)
		}
	}
	return out
}

// publishBrokerURLs are the broker URLs of every event the operations publish.
func (t *Target) publishBrokerURLs() []string {
	var out []string
	for _, op := range t.Operations {
		for _, p := range op.Publishes {
			switch {
			case p.AMQP != nil:
				out = append(out, p.AMQP.URL)
			case p.NATS != nil:
				out = append(out, p.NATS.URL)
			}
		}
	}
	return out
}
