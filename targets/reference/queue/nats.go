package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsOpen connects, on a fresh connection, to JetStream and declares the stream (when asked to);
// the caller closes the connection.
func (c *consumer) natsOpen(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := c.natsConnect()
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("JetStream: %w", err)
	}
	if err := c.natsDeclare(ctx, js); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// natsSession binds to the durable consumer on a fresh connection and consumes until the
// consumer is gone or ctx ends. The client reconnects a lost link by itself (with the same
// bounded backoff) and the pull resumes; an ack sent while the link is down fails at once, as
// nothing is buffered for a reconnection.
func (c *consumer) natsSession(ctx context.Context) (bool, error) {
	nc, js, err := c.natsOpen(ctx)
	if err != nil {
		return false, err
	}
	defer nc.Close()
	cons, err := c.natsBind(ctx, js)
	if err != nil {
		return false, err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(c.opts.Prefetch))
	if err != nil {
		return false, fmt.Errorf("pull from durable consumer %q: %w", c.opts.Durable, err)
	}
	defer it.Stop()
	c.opts.Logf("nats %s: consuming durable consumer %q of stream %q", redactURL(c.opts.URL), c.opts.Durable, c.opts.Stream)
	c.consuming()
	slots := make(chan struct{}, c.opts.Prefetch)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return true, nil
		}
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return true, nil
			}
			return true, fmt.Errorf("pull from durable consumer %q: %w", c.opts.Durable, err)
		}
		c.spawn(ctx, slots, &natsDelivery{msg: msg, retryDelay: c.opts.RetryDelay})
	}
}

// natsConnect connects, reconnecting for ever with the options' backoff once connected.
func (c *consumer) natsConnect() (*nats.Conn, error) {
	return nats.Connect(c.opts.URL,
		nats.Name(c.opts.Name),
		nats.Timeout(c.opts.DialTimeout),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			return backoffDelay(c.opts.ReconnectMin, c.opts.ReconnectMax, attempts)
		}),
		nats.ReconnectBufSize(-1),
		nats.PingInterval(c.opts.Heartbeat),
		nats.MaxPingsOutstanding(3),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err == nil {
				return // closed on purpose
			}
			c.opts.Logf("nats %s: link lost: %v; reconnecting", redactURL(c.opts.URL), err)
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			c.opts.Logf("nats %s: reconnected", redactURL(c.opts.URL))
		}),
	)
}

// natsBind binds to the durable consumer, creating it when it does not exist (another
// process may create it at the same time). A consumer that filters another subject, or does
// not take explicit acks, is a permanent error.
func (c *consumer) natsBind(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	cons, err := js.Consumer(ctx, c.opts.Stream, c.opts.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cons, err = js.CreateConsumer(ctx, c.opts.Stream, c.natsConsumerConfig())
		if errors.Is(err, jetstream.ErrConsumerExists) {
			cons, err = js.Consumer(ctx, c.opts.Stream, c.opts.Durable)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bind to durable consumer %q of stream %q: %w", c.opts.Durable, c.opts.Stream, err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.FilterSubject != c.opts.Subject || cfg.AckPolicy != jetstream.AckExplicitPolicy {
		return nil, permanentError{fmt.Errorf("durable consumer %q of stream %q filters %q with ack policy %v; want %q with explicit acks",
			c.opts.Durable, c.opts.Stream, cfg.FilterSubject, cfg.AckPolicy, c.opts.Subject)}
	}
	return cons, nil
}

// natsConsumerConfig is the durable consumer Run creates.
func (c *consumer) natsConsumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       c.opts.Durable,
		FilterSubject: c.opts.Subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.opts.AckWait,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
}

// natsDelivery settles one JetStream message.
type natsDelivery struct {
	msg        jetstream.Msg
	retryDelay time.Duration
}

func (n *natsDelivery) message() Message {
	m := Message{ID: n.msg.Headers().Get(jetstream.MsgIDHeader), Body: n.msg.Data()}
	if h := n.msg.Headers(); len(h) > 0 {
		m.Headers = make(map[string]string, len(h))
		for k := range h {
			m.Headers[k] = h.Get(k)
		}
	}
	if meta, err := n.msg.Metadata(); err == nil {
		m.Attempt = int(meta.NumDelivered)
		m.Redelivered = meta.NumDelivered > 1
	}
	return m
}

// ack waits for the server to confirm the ack, so that an ack lost on the way is known.
func (n *natsDelivery) ack() error {
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	return n.msg.DoubleAck(ctx)
}

// retry asks the server to redeliver after the retry delay.
func (n *natsDelivery) retry(context.Context) error { return n.msg.NakWithDelay(n.retryDelay) }

func (n *natsDelivery) drop() error { return n.msg.Term() }
