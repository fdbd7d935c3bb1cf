package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQPExchange is an exchange an API publishes its events to, without a queue of its own: the
// harness creates it (a durable topic exchange) when the target file asks it to, binds its
// observer's queue to it, and deletes it at the end.
type AMQPExchange struct {
	// URL is the broker.
	URL string
	// Name is the exchange's name (never "", the default exchange).
	Name string

	dialTimeout time.Duration
}

var _ Topology = (*AMQPExchange)(nil)

// NewAMQPExchange names an exchange on url; nothing is created before Setup. It takes
// WithDialTimeout.
func NewAMQPExchange(url, name string, opts ...Option) (*AMQPExchange, error) {
	if name == "" {
		return nil, fmt.Errorf("the default exchange cannot be bound: name an exchange")
	}
	return &AMQPExchange{URL: url, Name: name, dialTimeout: newConfig(opts).dialTimeout}, nil
}

// Setup declares the exchange: durable, of type topic. Declaring one that exists with the same
// settings does nothing.
func (e *AMQPExchange) Setup(ctx context.Context) error {
	return withChannel(ctx, e.URL, e.dialTimeout, func(ch *amqp.Channel) error {
		if err := ch.ExchangeDeclare(e.Name, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %q: %w", e.Name, err)
		}
		return nil
	})
}

// Exists reports whether the exchange exists (a passive declare).
func (e *AMQPExchange) Exists(ctx context.Context) (bool, error) {
	err := withChannel(ctx, e.URL, e.dialTimeout, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclarePassive(e.Name, amqp.ExchangeTopic, true, false, false, false, nil)
	})
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// Teardown deletes the exchange; deleting one that is gone does nothing.
func (e *AMQPExchange) Teardown(ctx context.Context) error {
	return withChannel(ctx, e.URL, e.dialTimeout, func(ch *amqp.Channel) error {
		if err := ch.ExchangeDelete(e.Name, false, false); err != nil {
			return fmt.Errorf("delete exchange %q: %w", e.Name, err)
		}
		return nil
	})
}

// isNotFound reports RabbitMQ's 404 (no such queue or exchange).
func isNotFound(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.NotFound
}
