package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Observed is one message an observer saw an API publish.
type Observed struct {
	// MessageID is the transport's message id (AMQP message_id, JetStream Nats-Msg-Id).
	MessageID string
	// Body is the payload.
	Body []byte
	// Headers are the message's headers (AMQP table values as text).
	Headers map[string]string
	// At is when the observer received it.
	At time.Time
}

// Observer watches what an API publishes, without taking anything from the API's own
// consumers, until Close. Lost says why it stopped seeing messages before Close (nil while it
// sees them): messages published since went unseen.
type Observer interface {
	Lost() error
	Close() error
}

var (
	_ Observer = (*AMQPObserver)(nil)
	_ Observer = (*JetStreamObserver)(nil)
)

// ErrWorkQueue is wrapped by ObserveJetStream for a stream with the WorkQueue retention policy.
var ErrWorkQueue = errors.New("a WorkQueue stream hands each message to one consumer only")

// AMQPObserver is a queue of the observer's own, exclusive and auto-deleted (RabbitMQ deletes it
// when the observer's connection goes, also when the observer dies), bound to the exchange the
// API publishes to: RabbitMQ copies every matching message to it as to every other bound queue,
// so the API's own queues lose nothing.
type AMQPObserver struct {
	conn  *amqp.Connection
	done  chan struct{}
	mu    sync.Mutex
	lost  error
	close sync.Once
}

// ObserveAMQP declares queue (exclusive, auto-deleted, not durable) on url, binds it to
// exchange with bindingKey and calls handle with every message routed to it, from one goroutine,
// until Close. It takes WithDialTimeout.
func ObserveAMQP(ctx context.Context, url, exchange, bindingKey, queue string, handle func(Observed), opts ...Option) (*AMQPObserver, error) {
	if err := checkName(queue); err != nil {
		return nil, fmt.Errorf("observer queue: %w", err)
	}
	c := newConfig(opts)
	conn, err := dialAMQP(ctx, url, c.dialTimeout)
	if err != nil {
		return nil, err
	}
	deliveries, err := bindObserver(conn, exchange, bindingKey, queue)
	if err != nil {
		closeAMQP(conn, amqpCloseTimeout)
		return nil, err
	}
	o := &AMQPObserver{conn: conn, done: make(chan struct{})}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		defer close(o.done)
		for d := range deliveries {
			handle(Observed{MessageID: d.MessageId, Body: d.Body, Headers: tableText(d.Headers), At: time.Now()})
		}
		if err, ok := <-closed; ok && err != nil {
			o.setLost(fmt.Errorf("the observer's link to RabbitMQ closed: %w", err))
		}
	}()
	return o, nil
}

// bindObserver declares and binds the observer's queue and starts consuming it.
func bindObserver(conn *amqp.Connection, exchange, key, queue string) (<-chan amqp.Delivery, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a channel: %w", err)
	}
	if _, err := ch.QueueDeclare(queue, false, true, true, false, nil); err != nil {
		return nil, fmt.Errorf("declare the observer's queue %q: %w", queue, err)
	}
	if err := ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		return nil, fmt.Errorf("bind the observer's queue to exchange %q with key %q: %w", exchange, key, err)
	}
	deliveries, err := ch.Consume(queue, "retrysafe-observer", true, true, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("consume the observer's queue %q: %w", queue, err)
	}
	return deliveries, nil
}

// tableText renders an AMQP header table as text values.
func tableText(t amqp.Table) map[string]string {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]string, len(t))
	for k, v := range t {
		if b, ok := v.([]byte); ok {
			out[k] = string(b)
		} else {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

func (o *AMQPObserver) setLost(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lost == nil {
		o.lost = err
	}
}

// Lost says why the observer stopped before Close (nil while it observes).
func (o *AMQPObserver) Lost() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lost
}

// Close closes the connection, which deletes the queue, and waits for the last message handled.
func (o *AMQPObserver) Close() error {
	o.close.Do(func() {
		o.setLost(errors.New("closed"))
		closeAMQP(o.conn, amqpCloseTimeout)
		<-o.done
	})
	return nil
}

// JetStreamObserver is an ephemeral ordered consumer of the observer's own on the stream the API
// publishes to, from the moment it starts: JetStream keeps each consumer's position apart, so the
// API's own durable consumers lose nothing.
type JetStreamObserver struct {
	nc    *nats.Conn
	cc    jetstream.ConsumeContext
	mu    sync.Mutex
	lost  error
	close sync.Once
}

// ObserveJetStream creates an ordered consumer of subject on stream at url, delivering what is
// published from now on, and calls handle with every message until Close. A WorkQueue stream is
// refused (ErrWorkQueue): a consumer of its own would take messages from the API's consumers. It
// takes WithDialTimeout.
func ObserveJetStream(ctx context.Context, url, stream, subject string, handle func(Observed), opts ...Option) (*JetStreamObserver, error) {
	c := newConfig(opts)
	nc, js, err := connectJetStream(ctx, url, c.dialTimeout)
	if err != nil {
		return nil, err
	}
	o := &JetStreamObserver{nc: nc}
	if err := o.start(ctx, js, stream, subject, handle); err != nil {
		nc.Close()
		return nil, err
	}
	return o, nil
}

// start checks the stream and starts the ordered consumer.
func (o *JetStreamObserver) start(ctx context.Context, js jetstream.JetStream, stream, subject string, handle func(Observed)) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %q: %w", stream, err)
	}
	if s.CachedInfo().Config.Retention == jetstream.WorkQueuePolicy {
		return fmt.Errorf("stream %q: %w, and the harness's observer would take them from the API's consumers: "+
			"observe the events on a stream with the limits or interest retention policy", stream, ErrWorkQueue)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return fmt.Errorf("ordered consumer of %q on stream %q: %w", subject, stream, err)
	}
	o.cc, err = cons.Consume(func(m jetstream.Msg) {
		headers := map[string]string{}
		for k, v := range m.Headers() {
			if len(v) > 0 {
				headers[k] = v[0]
			}
		}
		handle(Observed{MessageID: m.Headers().Get(jetstream.MsgIDHeader), Body: m.Data(), Headers: headers, At: time.Now()})
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { o.consumeError(err) }))
	if err != nil {
		return fmt.Errorf("consume %q on stream %q: %w", subject, stream, err)
	}
	return nil
}

// consumeError notes an error that ends observation: the stream deleted, the connection closed.
// The ordered consumer recreates itself after the errors it can recover from.
func (o *JetStreamObserver) consumeError(err error) {
	if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrConnectionClosed) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.lost == nil {
			o.lost = fmt.Errorf("the observer stopped: %w", err)
		}
	}
}

// Lost says why the observer stopped before Close (nil while it observes).
func (o *JetStreamObserver) Lost() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lost
}

// Close stops the consumer and closes the connection.
func (o *JetStreamObserver) Close() error {
	o.close.Do(func() {
		o.mu.Lock()
		if o.lost == nil {
			o.lost = errors.New("closed")
		}
		o.mu.Unlock()
		o.cc.Stop()
		o.nc.Close()
	})
	return nil
}
