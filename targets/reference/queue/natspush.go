package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// natsPushSession binds to (or creates) the durable push consumer on a fresh connection and
// handles what the server pushes to its deliver subject, sharing it with the other processes
// of the durable through its queue group, until the consumer is gone or ctx ends. Handlers run
// on their own goroutines, at most Prefetch at a time (the subscription waits for a slot).
func (c *consumer) natsPushSession(ctx context.Context) (bool, error) {
	nc, js, err := c.natsOpen(ctx)
	if err != nil {
		return false, err
	}
	defer nc.Close()
	cons, err := c.natsBindPush(ctx, js)
	if err != nil {
		return false, err
	}
	slots := make(chan struct{}, c.opts.Prefetch)
	lost := make(chan error, 1)
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return // left unacknowledged: redelivered after AckWait
		}
		c.spawn(ctx, slots, &natsDelivery{msg: msg, retryDelay: c.opts.RetryDelay})
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrConsumerDeleted) {
			select {
			case lost <- err:
			default:
			}
		}
	}))
	if err != nil {
		return false, fmt.Errorf("subscribe to durable push consumer %q: %w", c.opts.Durable, err)
	}
	defer cc.Stop()
	c.opts.Logf("nats %s: consuming durable push consumer %q of stream %q", redactURL(c.opts.URL), c.opts.Durable, c.opts.Stream)
	c.consuming()
	select {
	case <-ctx.Done():
		return true, nil
	case err := <-lost:
		return true, fmt.Errorf("durable push consumer %q: %w", c.opts.Durable, err)
	case <-cc.Closed():
		return true, fmt.Errorf("durable push consumer %q: the subscription closed", c.opts.Durable)
	}
}

// natsBindPush binds to the durable push consumer, creating it when it does not exist.
func (c *consumer) natsBindPush(ctx context.Context, js jetstream.JetStream) (jetstream.PushConsumer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	cons, err := js.PushConsumer(ctx, c.opts.Stream, c.opts.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cfg := c.natsConsumerConfig()
		cfg.DeliverSubject, cfg.DeliverGroup = c.opts.Stream+".deliver."+c.opts.Durable, c.opts.Durable
		cons, err = js.CreatePushConsumer(ctx, c.opts.Stream, cfg)
		if errors.Is(err, jetstream.ErrConsumerExists) {
			cons, err = js.PushConsumer(ctx, c.opts.Stream, c.opts.Durable)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bind to durable push consumer %q of stream %q: %w", c.opts.Durable, c.opts.Stream, err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.FilterSubject != c.opts.Subject || cfg.AckPolicy != jetstream.AckExplicitPolicy {
		return nil, permanentError{fmt.Errorf("durable push consumer %q of stream %q filters %q with ack policy %v; want %q with explicit acks",
			c.opts.Durable, c.opts.Stream, cfg.FilterSubject, cfg.AckPolicy, c.opts.Subject)}
	}
	return cons, nil
}

// natsDeclare creates the stream on Subject when Declare is set and it does not exist (with
// the server's default duplicates window: two minutes).
func (c *consumer) natsDeclare(ctx context.Context, js jetstream.JetStream) error {
	if !c.opts.Declare {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	_, err := js.Stream(ctx, c.opts.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: c.opts.Stream, Subjects: []string{c.opts.Subject},
			Storage: jetstream.FileStorage, MaxAge: time.Hour})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			err = nil // another process created it meanwhile
		}
	}
	if err != nil {
		return fmt.Errorf("declare stream %q on subject %q: %w", c.opts.Stream, c.opts.Subject, err)
	}
	return nil
}
