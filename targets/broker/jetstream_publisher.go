package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamPublisher publishes to one subject, with the message id in the Nats-Msg-Id header,
// and waits for the stream's ack. The Receipt says whether the stream dropped the message as a
// duplicate of one published within its duplicates window.
type JetStreamPublisher struct {
	subject     string
	publishOpts []jetstream.PublishOpt // expect the stream, when one was named

	mu     sync.Mutex
	nc     *nats.Conn
	js     jetstream.JetStream
	closed bool
	// down is closed when the connection is lost (and replaced by a fresh one): a publication
	// waiting for its ack stops waiting, as no ack can come on a lost link.
	down chan struct{}
}

var _ Publisher = (*JetStreamPublisher)(nil)

// NewJetStreamPublisher connects to url for publishing to subject. A non-empty stream makes
// every publish expect that stream (a message stored elsewhere is refused). It takes
// WithDialTimeout.
func NewJetStreamPublisher(ctx context.Context, url, subject, stream string, opts ...Option) (*JetStreamPublisher, error) {
	c := newConfig(opts)
	nc, js, err := connectJetStream(ctx, url, c.dialTimeout)
	if err != nil {
		return nil, err
	}
	p := &JetStreamPublisher{subject: subject, nc: nc, js: js, down: make(chan struct{})}
	if stream != "" {
		p.publishOpts = []jetstream.PublishOpt{jetstream.WithExpectStream(stream)}
	}
	nc.SetDisconnectErrHandler(func(*nats.Conn, error) { p.lost() })
	return p, nil
}

// lost tells the publications waiting for an ack that the link they were sent on is gone.
func (p *JetStreamPublisher) lost() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.down)
	p.down = make(chan struct{})
}

// Publish sends m and waits for the stream's ack. A refusal by the stream, no stream on the
// subject, or a link down at the time of sending wrap ErrNotPublished; a timeout, or the link
// lost while it waits (it stops waiting then: no ack can come), leaves the outcome unknown.
func (p *JetStreamPublisher) Publish(ctx context.Context, m Message) (Receipt, error) {
	if m.ID == "" {
		return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, errEmptyID)
	}
	p.mu.Lock()
	closed, down := p.closed, p.down
	p.mu.Unlock()
	if closed {
		return Receipt{}, fmt.Errorf("%w: %w", ErrNotPublished, ErrClosed)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil) // ends the watcher below
	go func() {
		select {
		case <-down:
			cancel(errLinkLost)
		case <-ctx.Done():
		}
	}()
	msg := nats.NewMsg(p.subject)
	for k, v := range m.Headers {
		msg.Header.Set(k, v)
	}
	msg.Header.Set(jetstream.MsgIDHeader, m.ID)
	msg.Data = m.Body
	ack, err := p.js.PublishMsg(ctx, msg, p.publishOpts...)
	if err != nil {
		if errors.Is(context.Cause(ctx), errLinkLost) {
			err = errLinkLost
		}
		return Receipt{}, publishError(m.ID, p.subject, err)
	}
	return Receipt{Duplicate: ack.Duplicate, Sequence: ack.Sequence}, nil
}

// errLinkLost is why a publication stopped waiting for its ack: the connection it was sent on
// was lost (the outcome is unknown: the stream may have stored it).
var errLinkLost = errors.New("the link to NATS was lost before the stream's ack")

// publishError classifies err: refused and never-sent are certain, the rest unknown.
func publishError(id, subject string, err error) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: message %s: no stream stores subject %q: %w", ErrNotPublished, id, subject, err)
	case errors.As(err, &apiErr):
		return fmt.Errorf("%w: message %s: the stream refused it: %w", ErrNotPublished, id, err)
	case errors.Is(err, nats.ErrReconnectBufExceeded): // only returned before sending
		return fmt.Errorf("%w: message %s: not sent, the link to NATS is down: %w", ErrNotPublished, id, err)
	}
	return fmt.Errorf("message %s: no ack from the stream: %w", id, err)
}

// Close closes the connection. Calling Close again does nothing.
func (p *JetStreamPublisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.nc.Close()
	}
	return nil
}
