package queue

import (
	"context"
	"fmt"
	"strings"
)

// Message is one delivery of a message.
type Message struct {
	// ID is the message id the Handler deduplicates on: the AMQP message_id property or the
	// JetStream Nats-Msg-Id header ("" when the publisher set none).
	ID string
	// Body is the payload.
	Body []byte
	// Redelivered is true when the broker says it may have delivered the message before.
	// False proves nothing: JetStream (nats-server 2.9 at least) can count a redelivery after a
	// lost link as a first delivery, and a message the publisher sent twice is two messages
	// with one id. Deduplicate on ID.
	Redelivered bool
	// Attempt is the delivery count when the broker tells it (1 = first delivery), 0 when
	// unknown: JetStream tells it (with the caveat above); a RabbitMQ classic queue tells only
	// first deliveries (quorum queues tell every one).
	Attempt int
	// Headers are the message's application headers (AMQP table values as text).
	Headers map[string]string
}

// Header returns the value of a message header, its name compared case-insensitively ("" when
// the message has none).
func (m Message) Header(name string) string {
	if v, ok := m.Headers[name]; ok {
		return v
	}
	for k, v := range m.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Decision is what the Handler wants done with a message.
type Decision int

// The decisions.
const (
	// Ack acknowledges the message: its effect is committed.
	Ack Decision = iota
	// Retry gives the message back for redelivery after Options.RetryDelay: an AMQP
	// nack with requeue once the delay has passed, a JetStream NAK with that delay.
	Retry
	// Drop discards the message: an AMQP reject without requeue, a JetStream Term.
	Drop
)

// String returns "ack", "retry" or "drop".
func (d Decision) String() string {
	switch d {
	case Ack:
		return "ack"
	case Retry:
		return "retry"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Handler processes one message and decides how to settle it. It runs concurrently with other
// deliveries (up to Options.Prefetch at a time), possibly with another delivery of the same
// message. ctx is Run's: once it ends, the decision is not carried out.
type Handler func(ctx context.Context, m Message) Decision

// Broker names a transport.
type Broker string

// The transports.
const (
	// AMQP consumes a RabbitMQ queue.
	AMQP Broker = "amqp"
	// NATS consumes a NATS JetStream durable consumer.
	NATS Broker = "nats"
)

// Run consumes with opts.Broker until ctx ends, calling h for each message. Lost links and
// broker restarts are reconnected, not returned. Run returns nil once ctx has ended and the
// in-flight handlers have returned (or Options.DrainTimeout has passed), and an error only
// when opts are invalid or the broker's configuration contradicts them.
func Run(ctx context.Context, opts Options, h Handler) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("queue.Run: the handler is nil")
	}
	c := newConsumer(opts, h)
	if opts.DeleteOnExit {
		defer c.deleteOnExit()
	}
	defer c.drain()
	switch {
	case opts.Broker == AMQP:
		return c.loop(ctx, c.amqpSession)
	case opts.Push:
		return c.loop(ctx, c.natsPushSession)
	default:
		return c.loop(ctx, c.natsSession)
	}
}
