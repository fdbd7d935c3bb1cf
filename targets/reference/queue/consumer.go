package queue

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"
)

// consumer is one Run: the options, the handler and the deliveries in flight across sessions.
type consumer struct {
	opts     Options
	h        Handler
	ready    sync.Once
	inflight sync.WaitGroup
}

func newConsumer(opts Options, h Handler) *consumer {
	return &consumer{opts: opts, h: h}
}

// session connects, consumes until the link is lost or ctx ends, and closes the link. started
// reports whether consuming began.
type session func(ctx context.Context) (started bool, err error)

// permanentError is a session error that reconnecting cannot cure, such as a durable consumer
// whose configuration contradicts the options: Run returns it.
type permanentError struct{ err error }

// Error returns the cause's text.
func (e permanentError) Error() string { return e.err.Error() }

// Unwrap returns the cause.
func (e permanentError) Unwrap() error { return e.err }

// loop runs sessions until ctx ends, waiting a bounded backoff between them.
func (c *consumer) loop(ctx context.Context, s session) error {
	b := backoff{min: c.opts.ReconnectMin, max: c.opts.ReconnectMax}
	for {
		started, err := s(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return err
		}
		if started {
			b.reset()
		}
		wait := b.next()
		c.opts.Logf("%s %s: %v; reconnecting in %v", c.opts.Broker, redactURL(c.opts.URL), err, wait)
		if !sleep(ctx, wait) {
			return nil
		}
	}
}

// consuming records that a session has started consuming, and says so once through Ready.
func (c *consumer) consuming() {
	c.ready.Do(func() {
		if c.opts.Ready != nil {
			c.opts.Ready()
		}
	})
}

// drain waits for the handlers in flight, at most DrainTimeout.
func (c *consumer) drain() {
	done := make(chan struct{})
	go func() {
		c.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(c.opts.DrainTimeout):
		c.opts.Logf("%s: handlers still running %v after the end; leaving them", c.opts.Broker, c.opts.DrainTimeout)
	}
}

// backoff doubles from min to max, attempt after attempt.
type backoff struct {
	min, max time.Duration
	attempt  int
}

func (b *backoff) next() time.Duration {
	b.attempt++
	return backoffDelay(b.min, b.max, b.attempt)
}

func (b *backoff) reset() { b.attempt = 0 }

// backoffDelay is the wait before attempt n (from 1) of a backoff doubling from lo to hi.
func backoffDelay(lo, hi time.Duration, n int) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// sleep waits d, or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// redactURL returns u with its password replaced, for logs and errors.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
