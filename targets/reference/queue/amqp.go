package queue

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqpCloseTimeout bounds the close handshake of a connection.
const amqpCloseTimeout = time.Second

// amqpSession consumes opts.Queue on a fresh connection until the link is lost or ctx ends.
func (c *consumer) amqpSession(ctx context.Context) (bool, error) {
	conn, err := amqp.DialConfig(c.opts.URL, amqp.Config{
		Heartbeat:  c.opts.Heartbeat,
		Dial:       amqp.DefaultDial(c.opts.DialTimeout),
		Properties: amqp.Table{"connection_name": c.opts.Name},
	})
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.CloseDeadline(time.Now().Add(amqpCloseTimeout)) }()
	lost := conn.NotifyClose(make(chan *amqp.Error, 1))
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("open a channel: %w", err)
	}
	if c.opts.Declare {
		if _, err := ch.QueueDeclare(c.opts.Queue, true, false, false, false, nil); err != nil {
			return false, permanentError{fmt.Errorf("declare queue %q: %w", c.opts.Queue, err)}
		}
	}
	if err := ch.Qos(c.opts.Prefetch, 0, false); err != nil {
		return false, fmt.Errorf("set prefetch %d: %w", c.opts.Prefetch, err)
	}
	deliveries, err := ch.Consume(c.opts.Queue, "", false, false, false, false, nil)
	if err != nil {
		return false, fmt.Errorf("consume queue %q: %w", c.opts.Queue, err)
	}
	c.opts.Logf("amqp %s: consuming queue %q", redactURL(c.opts.URL), c.opts.Queue)
	c.consuming()
	slots := make(chan struct{}, c.opts.Prefetch)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return true, nil
		}
		select {
		case d, ok := <-deliveries:
			if !ok {
				<-slots
				return true, amqpLost(lost, c.opts.Queue)
			}
			c.spawn(ctx, slots, &amqpDelivery{d: d, retryDelay: c.opts.RetryDelay})
		case <-ctx.Done():
			return true, nil
		}
	}
}

// amqpLost says why the deliveries stopped: the connection's close reason, or a consumer
// cancelled by the broker (its queue deleted) on a connection still open.
func amqpLost(lost <-chan *amqp.Error, queue string) error {
	select {
	case err, ok := <-lost:
		if ok && err != nil {
			return fmt.Errorf("link lost: %w", err)
		}
		return fmt.Errorf("link lost")
	case <-time.After(100 * time.Millisecond):
		return fmt.Errorf("the broker cancelled the consumer of queue %q (deleted?)", queue)
	}
}

// amqpDelivery settles one AMQP delivery on the channel it came on.
type amqpDelivery struct {
	d          amqp.Delivery
	retryDelay time.Duration
}

func (a *amqpDelivery) message() Message {
	m := Message{ID: a.d.MessageId, Body: a.d.Body, Redelivered: a.d.Redelivered, Attempt: amqpAttempt(a.d)}
	if len(a.d.Headers) > 0 {
		m.Headers = make(map[string]string, len(a.d.Headers))
		for k, v := range a.d.Headers {
			m.Headers[k] = amqpText(v)
		}
	}
	return m
}

// amqpText is an AMQP table value as text: a string as it is, bytes as a string, else its
// default formatting.
func amqpText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

func (a *amqpDelivery) ack() error { return a.d.Ack(false) }

// retry waits the retry delay on the client (AMQP has no delayed requeue), then requeues.
func (a *amqpDelivery) retry(ctx context.Context) error {
	if !sleep(ctx, a.retryDelay) {
		return ctx.Err()
	}
	return a.d.Nack(false, true)
}

func (a *amqpDelivery) drop() error { return a.d.Reject(false) }

// amqpAttempt is the delivery count: from x-delivery-count (quorum queues count the earlier
// deliveries), else 1 for a first delivery and 0 (unknown) for a redelivery.
func amqpAttempt(d amqp.Delivery) int {
	switch n := d.Headers["x-delivery-count"].(type) {
	case int64:
		return int(n) + 1
	case int32:
		return int(n) + 1
	case int:
		return n + 1
	}
	if !d.Redelivered {
		return 1
	}
	return 0
}
