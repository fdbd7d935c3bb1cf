package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQPTopology is a run's exchange and queue on RabbitMQ: a durable direct exchange bound to a
// durable queue that is not auto-deleted, so that the messages a crashed consumer left
// unacknowledged stay on the queue and are redelivered.
type AMQPTopology struct {
	// Name is the run's name.
	Name string
	// URL is the broker the topology lives on.
	URL string
	// Exchange is "<name>.x", the exchange the harness publishes to.
	Exchange string
	// Queue is "<name>.q", the queue the consumer under test consumes.
	Queue string
	// RoutingKey is "<name>", which binds Queue to Exchange.
	RoutingKey string
	// ExchangeDurable and ExchangeAutoDelete are the settings Setup declares the exchange with
	// (NewAMQPTopology: durable, not auto-deleted).
	ExchangeDurable, ExchangeAutoDelete bool

	dialTimeout time.Duration
}

// QueueState is what RabbitMQ says about a queue.
type QueueState struct {
	// Ready counts the messages waiting for a consumer (unacknowledged ones are not counted).
	Ready int
	// Consumers counts the consumers attached to the queue.
	Consumers int
}

// NewAMQPTopology names a run's topology; nothing is created before Setup. It takes
// WithAMQPURL and WithDialTimeout.
func NewAMQPTopology(name string, opts ...Option) (*AMQPTopology, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	return &AMQPTopology{
		Name:            name,
		URL:             c.amqpURL,
		Exchange:        name + ".x",
		Queue:           name + ".q",
		RoutingKey:      name,
		ExchangeDurable: true,
		dialTimeout:     c.dialTimeout,
	}, nil
}

// Setup declares the exchange (direct, with its settings) and the queue and binds them; on the
// default exchange (Exchange "") it declares the queue alone, which the default exchange routes
// to by its name. Declaring what already exists with the same settings does nothing; an
// exchange that exists already as another type (the topic exchange an API publishes its events
// to, in a chain) is bound to as it is; one of this type with other settings is RabbitMQ's
// PRECONDITION_FAILED (ExchangeRefused).
func (t *AMQPTopology) Setup(ctx context.Context) error {
	if t.Exchange != "" {
		err := withChannel(ctx, t.URL, t.dialTimeout, func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare(t.Exchange, amqp.ExchangeDirect, t.ExchangeDurable, t.ExchangeAutoDelete, false, false, nil)
		})
		if err != nil && !isOtherType(err) {
			return fmt.Errorf("declare exchange %q: %w", t.Exchange, err)
		}
	}
	return withChannel(ctx, t.URL, t.dialTimeout, func(ch *amqp.Channel) error {
		if _, err := ch.QueueDeclare(t.Queue, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare queue %q: %w", t.Queue, err)
		}
		if t.Exchange == "" {
			return nil
		}
		if err := ch.QueueBind(t.Queue, t.RoutingKey, t.Exchange, false, nil); err != nil {
			return fmt.Errorf("bind queue %q to exchange %q with key %q: %w", t.Queue, t.Exchange, t.RoutingKey, err)
		}
		return nil
	})
}

// Teardown deletes the queue (with any message left on it) and the exchange (nothing on the
// default exchange). Deleting what is already gone does nothing, so Teardown can always run at
// the end.
func (t *AMQPTopology) Teardown(ctx context.Context) error {
	return withChannel(ctx, t.URL, t.dialTimeout, func(ch *amqp.Channel) error {
		if _, err := ch.QueueDelete(t.Queue, false, false, false); err != nil {
			return fmt.Errorf("delete queue %q: %w", t.Queue, err)
		}
		if t.Exchange == "" {
			return nil
		}
		if err := ch.ExchangeDelete(t.Exchange, false, false); err != nil {
			return fmt.Errorf("delete exchange %q: %w", t.Exchange, err)
		}
		return nil
	})
}

// Exists reports whether the queue exists (a passive declare).
func (t *AMQPTopology) Exists(ctx context.Context) (bool, error) {
	_, err := t.State(ctx)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// State returns the queue's ready messages and consumers (a passive declare).
func (t *AMQPTopology) State(ctx context.Context) (QueueState, error) {
	var s QueueState
	err := withChannel(ctx, t.URL, t.dialTimeout, func(ch *amqp.Channel) error {
		q, err := ch.QueueDeclarePassive(t.Queue, true, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("inspect queue %q: %w", t.Queue, err)
		}
		s = QueueState{Ready: q.Messages, Consumers: q.Consumers}
		return nil
	})
	return s, err
}

// Publisher opens a publisher to the topology's exchange and routing key.
func (t *AMQPTopology) Publisher(ctx context.Context) (*AMQPPublisher, error) {
	return NewAMQPPublisher(ctx, t.URL, t.Exchange, t.RoutingKey, WithDialTimeout(t.dialTimeout))
}

// dialAMQP connects to url within timeout and ctx.
func dialAMQP(ctx context.Context, url string, timeout time.Duration) (*amqp.Connection, error) {
	timeout, err := dialBudget(ctx, timeout)
	if err != nil {
		return nil, err
	}
	conn, err := amqp.DialConfig(url, amqp.Config{
		Dial:       amqp.DefaultDial(timeout),
		Properties: amqp.Table{"connection_name": "retrysafe harness"},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to RabbitMQ at %s: %w", redactURL(url), err)
	}
	return conn, nil
}

// dialBudget is timeout cut to what is left of ctx, or an error when nothing is left.
func dialBudget(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	if timeout <= 0 {
		return 0, context.DeadlineExceeded
	}
	return timeout, nil
}

// amqpCloseTimeout bounds the close handshake of a connection.
const amqpCloseTimeout = time.Second

// closeAMQP closes conn, waiting at most timeout for the broker's answer (0 = none).
func closeAMQP(conn *amqp.Connection, timeout time.Duration) {
	_ = conn.CloseDeadline(time.Now().Add(timeout))
}

// withChannel runs fn on a channel of a fresh connection and closes both. The AMQP calls are
// not context-aware: when ctx ends first, the connection is closed, which makes fn return.
func withChannel(ctx context.Context, url string, timeout time.Duration, fn func(*amqp.Channel) error) error {
	conn, err := dialAMQP(ctx, url, timeout)
	if err != nil {
		return err
	}
	defer closeAMQP(conn, amqpCloseTimeout)
	done := make(chan error, 1)
	go func() {
		ch, err := conn.Channel()
		if err != nil {
			done <- fmt.Errorf("open a channel on %s: %w", redactURL(url), err)
			return
		}
		err = fn(ch)
		if cerr := ch.Close(); err == nil && cerr != nil && !errors.Is(cerr, amqp.ErrClosed) {
			err = cerr
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		closeAMQP(conn, 0)
		<-done
		return ctx.Err()
	}
}
