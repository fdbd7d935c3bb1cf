package targets

import "strings"

// AMQPBinding says where a queue consumer's events go on RabbitMQ.
type AMQPBinding struct {
	// URL is the broker the harness publishes to (amqp://user:pass@host:port/vhost).
	URL string
	// Exchange is the exchange the harness publishes to; "" is the default exchange, which
	// routes a message straight to the queue its routing key names (nothing is declared or
	// deleted on it).
	Exchange string
	// RoutingKey binds Queue to Exchange ("" or Queue on the default exchange).
	RoutingKey string
	// Queue is the queue the consumer consumes.
	Queue string
	// Create makes the harness declare the exchange (unless the default) and the queue at the
	// start of the run, and delete them at its end.
	Create bool
	// Delete makes the harness delete the queue (and a named exchange) at the end of the run,
	// whoever declared them.
	Delete bool
	// ExchangeDurable and ExchangeAutoDelete are the settings the harness declares the exchange
	// with (Create only): durable and not auto-deleted unless the file says otherwise
	// (exchange_durable: false, exchange_auto_delete: true), as the app declares its own.
	ExchangeDurable, ExchangeAutoDelete bool

	line  int    // where the block is in the file (ExchangeError)
	field string // its dotted path
}

// ExchangeError locates an error of the harness's declaration of the exchange (create: true) at
// the block's exchange settings in file: FILE:LINE: field: message.
func (b *AMQPBinding) ExchangeError(file string, err error) error {
	return &ValidationError{Problems: []Problem{{File: file, Line: b.line, Field: b.field, Message: err.Error()}}}
}

// DefaultExchange reports whether events are published through RabbitMQ's default exchange.
func (b *AMQPBinding) DefaultExchange() bool { return b.Exchange == "" }

// PublishKey is the routing key the harness publishes with: the queue's name on the default
// exchange, else RoutingKey.
func (b *AMQPBinding) PublishKey() string {
	if b.DefaultExchange() {
		return b.Queue
	}
	return b.RoutingKey
}

// NATSBinding says where a queue consumer's events go on NATS JetStream.
type NATSBinding struct {
	// URL is the server the harness publishes to (nats://host:port).
	URL string
	// Stream and Subject name the stream and the subject the harness publishes to.
	Stream, Subject string
	// Durable names the durable consumer the harness inspects (pull or push); "" = none (the
	// fault properties that ask JetStream what the consumer left unacknowledged skip).
	Durable string
	// Create makes the harness create the stream (with a short duplicates window) and delete
	// it at the end.
	Create bool
	// CreateDurable is the kind of durable consumer the harness creates with the stream:
	// DurablePull, DurablePush, or "" (none: the consumer under test creates its own).
	CreateDurable DurableKind
	// Delete makes the harness delete the stream at the end of the run, whoever created it.
	Delete bool
}

// DurableKind is how a JetStream durable consumer hands out messages.
type DurableKind string

// The kinds of durable consumers the harness creates.
const (
	// DurablePull: the consumers pull (fetch) their messages.
	DurablePull DurableKind = "pull"
	// DurablePush: the server pushes to a deliver subject, shared by the instances as a queue
	// group named after the durable.
	DurablePush DurableKind = "push"
)

// amqpBinding decodes a consumer's amqp block.
func (d *decoder) amqpBinding(o *object) *AMQPBinding { return d.amqpBlock(o, true) }

// amqpBlock decodes an amqp block: a consumer's (its queue, on any exchange), or the one of an
// event an operation publishes (no queue: the harness binds one of its own to the exchange,
// which cannot be the default one).
func (d *decoder) amqpBlock(o *object, consumer bool) *AMQPBinding {
	missing := "url, and exchange and routing_key"
	if consumer {
		missing = "url, queue, and exchange and routing_key unless the default exchange"
	}
	bo, ok := d.child(o, "amqp")
	if !ok {
		d.ps.add(o.line, o.at("amqp"), "missing required field (%s)", missing)
		return nil
	}
	b := &AMQPBinding{ExchangeDurable: true, line: o.lineOf("amqp"), field: o.at("amqp")}
	b.URL, _ = d.required(bo, "url", " (amqp://guest:guest@127.0.0.1:5672/)")
	b.Exchange, _ = d.str(bo, "exchange")
	b.Exchange = strings.TrimSpace(b.Exchange)
	b.RoutingKey, _ = d.str(bo, "routing_key")
	b.Create, _ = d.boolean(bo, "create")
	b.Delete, _ = d.boolean(bo, "delete")
	d.exchangeSettings(bo, b)
	if !consumer {
		if b.DefaultExchange() {
			d.ps.add(bo.lineOf("exchange"), bo.at("exchange"), "the default exchange cannot be bound: the harness observes events through a queue of its own "+
				"bound to the exchange the API publishes to, and the default exchange routes only to the queue a routing key names; publish to a named exchange")
		}
		if b.RoutingKey == "" {
			b.RoutingKey = DefaultBindingKey
		}
		return b
	}
	b.Queue, _ = d.required(bo, "queue", "")
	if b.DefaultExchange() && b.RoutingKey != "" && b.RoutingKey != b.Queue {
		d.ps.add(bo.lineOf("routing_key"), bo.at("routing_key"),
			"on the default exchange (exchange \"\" or none) a message goes to the queue its routing key names: leave routing_key out or set it to the queue %q", b.Queue)
	}
	return b
}

// exchangeSettings decodes exchange_durable and exchange_auto_delete: how the harness declares
// the exchange it creates (create: true), so that an app that declares its own with the same
// settings starts against it. They mean nothing without create: true, or on the default
// exchange, which nobody declares.
func (d *decoder) exchangeSettings(bo *object, b *AMQPBinding) {
	located := false
	for _, f := range []string{"exchange_durable", "exchange_auto_delete"} {
		if !bo.has(f) {
			continue
		}
		v, ok := d.boolean(bo, f)
		switch {
		case !ok:
			continue
		case b.DefaultExchange():
			d.ps.add(bo.lineOf(f), bo.at(f), "the default exchange is never declared: %s applies to a named exchange the harness creates (create: true)", f)
			continue
		case !b.Create:
			d.ps.add(bo.lineOf(f), bo.at(f), "applies only with create: true (how the harness declares the exchange it creates; an exchange it does not create is used as it is)")
			continue
		}
		if f == "exchange_durable" {
			b.ExchangeDurable = v
		} else {
			b.ExchangeAutoDelete = v
		}
		if !located { // an error of the declaration points at the settings
			b.line, b.field, located = bo.lineOf(f), bo.at(f), true
		}
	}
}

// natsBinding decodes a consumer's nats block.
func (d *decoder) natsBinding(o *object) *NATSBinding { return d.natsBlock(o, true) }

// natsBlock decodes a nats block: a consumer's (with its durable), or the one of an event an
// operation publishes (the stream and subject only: the harness observes through an ephemeral
// ordered consumer of its own).
func (d *decoder) natsBlock(o *object, consumer bool) *NATSBinding {
	bo, ok := d.child(o, "nats")
	if !ok {
		d.ps.add(o.line, o.at("nats"), "missing required field (url, stream, subject)")
		return nil
	}
	b := &NATSBinding{}
	b.URL, _ = d.required(bo, "url", " (nats://127.0.0.1:4222)")
	b.Stream, _ = d.required(bo, "stream", "")
	b.Subject, _ = d.required(bo, "subject", "")
	b.Create, _ = d.boolean(bo, "create")
	b.Delete, _ = d.boolean(bo, "delete")
	if !consumer {
		return b
	}
	b.Durable, _ = d.str(bo, "durable")
	if b.Create && b.Durable != "" {
		b.CreateDurable = DurablePull // what create: true always meant with a durable named
	}
	if s, ok := d.str(bo, "create_durable"); ok {
		switch k := strings.TrimSpace(s); k {
		case string(DurablePull), string(DurablePush):
			b.CreateDurable = DurableKind(k)
		case "false", "none":
			b.CreateDurable = ""
		default:
			d.ps.add(bo.lineOf("create_durable"), bo.at("create_durable"), "must be pull, push or false, got %q", s)
		}
		if b.CreateDurable != "" && b.Durable == "" {
			d.ps.add(bo.lineOf("create_durable"), bo.at("create_durable"), "needs nats.durable: the name of the durable consumer to create")
		}
	}
	return b
}

// redeliveryAfter decodes a queue consumer's redelivery_after: RabbitMQ's redelivery delay, which
// the broker cannot be asked, or JetStream's when no durable is named.
func (d *decoder) redeliveryAfter(o *object, c *Consumer) {
	v, ok := d.duration(o, "redelivery_after")
	switch {
	case !ok:
	case c.Transport == TransportWebhook:
		d.ps.add(o.lineOf("redelivery_after"), o.at("redelivery_after"), "a webhook's redeliveries are the harness's own (it delivers again what was not acknowledged on its own schedule): only a queue consumer declares how long its broker takes")
	case c.NATS != nil && c.NATS.Durable != "":
		d.ps.add(o.lineOf("redelivery_after"), o.at("redelivery_after"), "JetStream tells the AckWait and BackOff of nats.durable %q: the harness reads them from the server (declare redelivery_after only for a JetStream consumer without nats.durable)", c.NATS.Durable)
	default:
		c.RedeliveryAfter = v
	}
}
