package queue

import "context"

// delivery is one delivered message as a transport settles it.
type delivery interface {
	message() Message
	// ack acknowledges the message.
	ack() error
	// retry gives it back for redelivery after Options.RetryDelay (waiting at most until ctx
	// ends when the delay is the client's to wait).
	retry(ctx context.Context) error
	// drop discards it.
	drop() error
}

// spawn handles d on its own goroutine, holding one of the session's slots until it is done.
func (c *consumer) spawn(ctx context.Context, slots chan struct{}, d delivery) {
	c.inflight.Add(1)
	go func() {
		defer c.inflight.Done()
		defer func() { <-slots }()
		c.handle(ctx, d)
	}()
}

// handle calls the handler and settles d as it decides, or acknowledges d first under
// AckFirst. Once ctx has ended nothing more is settled: the link closes with d unacknowledged,
// as after a crash.
func (c *consumer) handle(ctx context.Context, d delivery) {
	m := d.message()
	if c.opts.AckFirst {
		err := d.ack()
		if err != nil {
			c.opts.Logf("%s: ack (before the handler) of message %q lost: %v", c.opts.Broker, m.ID, err)
		}
		c.opts.Settled(m, Ack, err)
	}
	dec := c.call(ctx, m)
	if ctx.Err() != nil || c.opts.AckFirst {
		return
	}
	var err error
	switch dec {
	case Ack:
		err = d.ack()
	case Drop:
		err = d.drop()
	case Retry:
		err = d.retry(ctx)
	default:
		c.opts.Logf("%s: message %q: the handler returned %v; retrying it", c.opts.Broker, m.ID, dec)
		err = d.retry(ctx)
	}
	if err != nil && ctx.Err() != nil {
		return // cut short by the end, as after a crash
	}
	if err != nil {
		c.opts.Logf("%s: %v of message %q lost: %v (the broker will deliver it again)", c.opts.Broker, dec, m.ID, err)
	}
	c.opts.Settled(m, dec, err)
}

// call runs the handler; a panic is logged and taken as Retry, so that one bad message does
// not stop the consumer.
func (c *consumer) call(ctx context.Context, m Message) (dec Decision) {
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logf("%s: the handler panicked on message %q: %v; retrying it", c.opts.Broker, m.ID, p)
			dec = Retry
		}
	}()
	return c.h(ctx, m)
}
