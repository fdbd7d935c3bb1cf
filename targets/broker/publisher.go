package broker

import (
	"context"
	"errors"
)

// ErrNotPublished is wrapped by a Publish error when the broker certainly did not take the
// message (it refused it, or nothing was sent). Any other Publish error leaves the outcome
// unknown.
var ErrNotPublished = errors.New("broker: message not published")

// Message is one message the harness publishes.
type Message struct {
	// ID is the transport's message id (AMQP message_id, JetStream Nats-Msg-Id), which
	// JetStream deduplicates within its window. The harness sets it to the event id when the
	// consumer reads the event id there, and to a new id per publication when the event id
	// travels in a header or the body. It must not be empty.
	ID string
	// Body is the payload, sent as is.
	Body []byte
	// Headers are application headers (AMQP table values as strings, NATS headers): the
	// consumer's declared headers, the event id's when it travels in one, the slow hook's.
	Headers map[string]string
}

// Receipt is what the broker answered to a published message.
type Receipt struct {
	// Duplicate is true when the broker dropped the message because it had seen its id within
	// its own deduplication window (JetStream); the consumer will not receive it. Always false
	// on AMQP, which has no such window.
	Duplicate bool
	// Sequence is the message's position: the stream sequence on JetStream (of the original
	// message for a duplicate), the channel's publish sequence number on AMQP.
	Sequence uint64
}

// Publisher puts messages on a broker for the consumer under test.
type Publisher interface {
	// Publish sends m and returns once the broker has confirmed it (or refused it, wrapping
	// ErrNotPublished). An error that does not wrap ErrNotPublished leaves the outcome unknown.
	Publish(ctx context.Context, m Message) (Receipt, error)
	// Close releases the connection; in-flight publishes fail.
	Close() error
}

// Kind names a broker.
type Kind string

// The brokers this package drives.
const (
	// AMQP is RabbitMQ over AMQP 0-9-1.
	AMQP Kind = "amqp"
	// NATS is NATS JetStream.
	NATS Kind = "nats"
)

// errEmptyID is returned when a message has no id.
var errEmptyID = errors.New("message id is empty: the consumer deduplicates on it")
