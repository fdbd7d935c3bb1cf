package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("broker: publisher closed")

// AMQPPublisher publishes persistent messages to one exchange with one routing key, with
// publisher confirms on, and mandatory set so that a message no queue is bound for is an
// error rather than silently dropped. Publish calls are serialised; a connection lost between
// two calls is dialled again by the next one.
type AMQPPublisher struct {
	url, exchange, key string
	dialTimeout        time.Duration
	perPublish         bool // a channel per message (WithChannelPerPublish)

	mu      sync.Mutex
	conn    *amqp.Connection
	ch      *amqp.Channel
	returns chan amqp.Return
	closes  chan *amqp.Error
	closed  bool
}

var _ Publisher = (*AMQPPublisher)(nil)

// NewAMQPPublisher connects to url for publishing to exchange with routing key key. It takes
// WithDialTimeout and WithChannelPerPublish.
func NewAMQPPublisher(ctx context.Context, url, exchange, key string, opts ...Option) (*AMQPPublisher, error) {
	c := newConfig(opts)
	p := &AMQPPublisher{url: url, exchange: exchange, key: key, dialTimeout: c.dialTimeout, perPublish: c.perPublish}
	if err := p.open(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// open dials a connection and a channel in confirm mode; p.mu is held or p is not shared yet.
func (p *AMQPPublisher) open(ctx context.Context) error {
	conn, err := dialAMQP(ctx, p.url, p.dialTimeout)
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err != nil {
		closeAMQP(conn, amqpCloseTimeout)
		return fmt.Errorf("open a confirming channel on %s: %w", redactURL(p.url), err)
	}
	p.conn, p.ch = conn, ch
	p.returns = ch.NotifyReturn(make(chan amqp.Return, 16))
	p.closes = ch.NotifyClose(make(chan *amqp.Error, 1))
	return nil
}

// Publish sends m as a persistent message with message_id m.ID and waits for the broker's
// confirm. A nack, an unroutable message or a missing exchange wrap ErrNotPublished; a
// connection lost or ctx ending before the confirm leave the outcome unknown.
func (p *AMQPPublisher) Publish(ctx context.Context, m Message) (Receipt, error) {
	if m.ID == "" {
		return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, errEmptyID)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, ErrClosed)
	}
	if p.conn == nil || p.conn.IsClosed() || !p.perPublish && p.ch.IsClosed() {
		p.drop()
		if err := p.open(ctx); err != nil {
			return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, err)
		}
	}
	if p.perPublish {
		if err := p.freshChannel(ctx); err != nil {
			p.drop()
			return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, err)
		}
		defer p.closeChannel()
	}
	seq := p.ch.GetNextPublishSeqNo()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.exchange, p.key, true, false, amqpPublishing(m))
	if err != nil {
		// The broker enqueues a message only once it has its last frame, which was not written.
		return Receipt{}, fmt.Errorf("%w: message %s: %w", ErrNotPublished, m.ID, err)
	}
	acked, err := dc.WaitContext(ctx)
	if err != nil {
		p.drop() // a late confirm must not be taken for the next message's
		return Receipt{}, fmt.Errorf("message %s: no confirm from the broker: %w", m.ID, err)
	}
	if !acked {
		return Receipt{}, p.nacked(m.ID)
	}
	if p.returned(m.ID) {
		return Receipt{}, fmt.Errorf("%w: message %s: unroutable: no queue is bound to exchange %q with routing key %q",
			ErrNotPublished, m.ID, p.exchange, p.key)
	}
	return Receipt{Sequence: seq}, nil
}

// freshChannel replaces the channel by a new one in confirm mode (WithChannelPerPublish): it
// waits for the broker's answers, until ctx ends (the connection is then dropped).
func (p *AMQPPublisher) freshChannel(ctx context.Context) error {
	type opened struct {
		ch  *amqp.Channel
		err error
	}
	conn, done := p.conn, make(chan opened, 1)
	go func() {
		ch, err := conn.Channel()
		if err == nil {
			err = ch.Confirm(false)
		}
		done <- opened{ch, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return fmt.Errorf("open a confirming channel on %s: %w", redactURL(p.url), o.err)
		}
		p.ch = o.ch
		p.returns = o.ch.NotifyReturn(make(chan amqp.Return, 16))
		p.closes = o.ch.NotifyClose(make(chan *amqp.Error, 1))
		return nil
	case <-ctx.Done():
		return fmt.Errorf("open a channel on %s: no answer from the broker: %w", redactURL(p.url), ctx.Err())
	}
}

// closeChannel closes the channel of one message (WithChannelPerPublish), unless it is gone.
func (p *AMQPPublisher) closeChannel() {
	if p.ch != nil && !p.ch.IsClosed() {
		_ = p.ch.Close()
	}
}

// nacked explains a negative confirm: amqp091 also nacks every pending confirm when the
// channel closes, which leaves the outcome unknown unless the broker closed the channel for a
// missing exchange.
func (p *AMQPPublisher) nacked(id string) error {
	if !p.ch.IsClosed() {
		return fmt.Errorf("%w: message %s: the broker nacked it", ErrNotPublished, id)
	}
	var cause *amqp.Error
	select {
	case cause = <-p.closes:
	default:
	}
	p.drop()
	if cause != nil && cause.Code == amqp.NotFound {
		return fmt.Errorf("%w: message %s: %s", ErrNotPublished, id, cause.Reason)
	}
	return fmt.Errorf("message %s: channel closed before the broker's confirm (%v)", id, cause)
}

// returned reports whether the broker returned the message with id as unroutable. A return
// comes before the confirm of the same message, so it is already queued when the confirm is.
func (p *AMQPPublisher) returned(id string) bool {
	found := false
	for {
		select {
		case r, ok := <-p.returns:
			if !ok { // the channel closed: amqp091 closes its notify channels
				return found
			}
			found = found || r.MessageId == id
		default:
			return found
		}
	}
}

// drop closes the connection, if any; the next Publish dials again.
func (p *AMQPPublisher) drop() {
	if p.conn != nil {
		closeAMQP(p.conn, amqpCloseTimeout)
	}
	p.conn, p.ch = nil, nil
}

// Close closes the connection. Calling Close again does nothing.
func (p *AMQPPublisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.drop()
	return nil
}

func amqpPublishing(m Message) amqp.Publishing {
	var headers amqp.Table
	if len(m.Headers) > 0 {
		headers = make(amqp.Table, len(m.Headers))
		for k, v := range m.Headers {
			headers[k] = v
		}
	}
	return amqp.Publishing{
		MessageId:    m.ID,
		DeliveryMode: amqp.Persistent,
		Timestamp:    time.Now(),
		Headers:      headers,
		Body:         m.Body,
	}
}
