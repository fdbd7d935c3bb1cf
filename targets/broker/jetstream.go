package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamTopology is a run's stream on NATS JetStream: one subject, a short duplicates
// window, and the durable consumer the consumer under test binds to.
type JetStreamTopology struct {
	// Name is the run's name.
	Name string
	// URL is the NATS server the stream lives on.
	URL string
	// Stream is the stream's name, the run's name.
	Stream string
	// Subject is "<name>.events", the stream's only subject.
	Subject string
	// Durable is the durable consumer's name ("<name>-consumer" unless WithDurable).
	Durable string
	// Duplicates is the stream's duplicates window: a message whose Nats-Msg-Id was seen
	// within it is dropped by the broker.
	Duplicates time.Duration
	// AckWait is how long the broker waits for the consumer's ack before redelivering.
	AckWait time.Duration
	// MaxAge is how long the stream keeps messages.
	MaxAge time.Duration
	// Storage is where the stream keeps them.
	Storage jetstream.StorageType

	dialTimeout time.Duration
}

// ConsumerState is what JetStream says about a durable consumer.
type ConsumerState struct {
	// Pending counts the messages not delivered yet.
	Pending uint64
	// AckPending counts the messages delivered and not acknowledged yet.
	AckPending int
	// Redelivered counts the messages delivered more than once and not acknowledged yet.
	Redelivered int
	// Delivered is the consumer's last delivered consumer sequence.
	Delivered uint64
	// Push says the durable consumer pushes to a deliver subject (else its consumers pull).
	Push bool
	// Waiting counts the pull requests waiting for messages (pull consumers), and Bound says
	// a push consumer has a subscriber on its deliver subject: how JetStream tells that
	// consumers are attached. A killed process's pull requests wait until they expire.
	Waiting int
	Bound   bool
	// AckWait is how long JetStream waits for an ack before it redelivers.
	AckWait time.Duration
	// BackOff, when the durable declares one, replaces AckWait as the wait before each
	// redelivery: the n-th redelivery of a message comes BackOff[n-1] after the delivery before
	// it (the last step repeats). Nil: every redelivery waits AckWait.
	BackOff []time.Duration
}

// NewJetStreamTopology names a run's stream and durable consumer; nothing is created before
// Setup. It takes WithNATSURL, WithDuplicatesWindow, WithAckWait, WithStreamMaxAge,
// WithStorage, WithDurable and WithDialTimeout.
func NewJetStreamTopology(name string, opts ...Option) (*JetStreamTopology, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	t := &JetStreamTopology{
		Name:        name,
		URL:         c.natsURL,
		Stream:      name,
		Subject:     name + ".events",
		Durable:     c.durable,
		Duplicates:  c.duplicates,
		AckWait:     c.ackWait,
		MaxAge:      c.maxAge,
		Storage:     c.storage,
		dialTimeout: c.dialTimeout,
	}
	if t.Durable == "" {
		t.Durable = name + "-consumer"
	}
	if err := checkName(t.Durable); err != nil {
		return nil, fmt.Errorf("durable consumer: %w", err)
	}
	if t.Duplicates < MinDuplicatesWindow || t.Duplicates > MaxDuplicatesWindow {
		return nil, fmt.Errorf("duplicates window %v: must be within %v-%v (JetStream cannot turn it off; a long one drops the harness's redeliveries)",
			t.Duplicates, MinDuplicatesWindow, MaxDuplicatesWindow)
	}
	if t.AckWait <= 0 {
		return nil, fmt.Errorf("ack wait %v: must be positive", t.AckWait)
	}
	if t.MaxAge < t.Duplicates {
		return nil, fmt.Errorf("stream max age %v: must not be shorter than the duplicates window %v", t.MaxAge, t.Duplicates)
	}
	return t, nil
}

// StreamConfig returns the configuration Setup creates the stream with.
func (t *JetStreamTopology) StreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       t.Stream,
		Subjects:   []string{t.Subject},
		Retention:  jetstream.LimitsPolicy,
		Storage:    t.Storage,
		Duplicates: t.Duplicates,
		MaxAge:     t.MaxAge,
		Discard:    jetstream.DiscardOld,
		Replicas:   1,
	}
}

// ConsumerConfig returns the durable consumer the consumer under test binds to: explicit
// acks, AckWait, every message from the start of the stream, redelivered without limit.
func (t *JetStreamTopology) ConsumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       t.Durable,
		FilterSubject: t.Subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       t.AckWait,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	}
}

// Setup creates the stream, and checks that the server kept its duplicates window. Creating
// a stream that exists with the same configuration does nothing.
func (t *JetStreamTopology) Setup(ctx context.Context) error {
	return withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		s, err := js.CreateStream(ctx, t.StreamConfig())
		if err != nil {
			return fmt.Errorf("create stream %q on subject %q: %w", t.Stream, t.Subject, err)
		}
		if got := s.CachedInfo().Config.Duplicates; got != t.Duplicates {
			return fmt.Errorf("stream %q: the server set a duplicates window of %v, not %v", t.Stream, got, t.Duplicates)
		}
		return nil
	})
}

// CreateConsumer creates the durable pull consumer of ConsumerConfig; one that exists with
// the same configuration is left as it is.
func (t *JetStreamTopology) CreateConsumer(ctx context.Context) error {
	return withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		if _, err := js.CreateConsumer(ctx, t.Stream, t.ConsumerConfig()); err != nil {
			return fmt.Errorf("create durable consumer %q on stream %q: %w", t.Durable, t.Stream, err)
		}
		return nil
	})
}

// PushConfig returns the durable push consumer the harness creates for consumers that
// subscribe to a deliver subject: ConsumerConfig, delivered to DeliverSubject for the queue
// group DeliverGroup (the durable's name), so that several instances share its messages.
func (t *JetStreamTopology) PushConfig() jetstream.ConsumerConfig {
	c := t.ConsumerConfig()
	c.DeliverSubject, c.DeliverGroup = t.DeliverSubject(), t.Durable
	return c
}

// DeliverSubject is the subject a durable push consumer the harness creates delivers to:
// "<stream>.deliver.<durable>" (outside the stream's own subject).
func (t *JetStreamTopology) DeliverSubject() string { return t.Stream + ".deliver." + t.Durable }

// CreatePushConsumer creates the durable push consumer of PushConfig; one that exists with
// the same configuration is left as it is.
func (t *JetStreamTopology) CreatePushConsumer(ctx context.Context) error {
	return withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		if _, err := js.CreatePushConsumer(ctx, t.Stream, t.PushConfig()); err != nil {
			return fmt.Errorf("create durable push consumer %q on stream %q: %w", t.Durable, t.Stream, err)
		}
		return nil
	})
}

// ConsumerState returns the durable consumer's counts, for a pull or a push consumer.
func (t *JetStreamTopology) ConsumerState(ctx context.Context) (ConsumerState, error) {
	var s ConsumerState
	err := withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		i, err := consumerInfo(ctx, js, t.Stream, t.Durable)
		if err != nil {
			return fmt.Errorf("durable consumer %q on stream %q: %w", t.Durable, t.Stream, err)
		}
		s = ConsumerState{
			Pending:     i.NumPending,
			AckPending:  i.NumAckPending,
			Redelivered: i.NumRedelivered,
			Delivered:   i.Delivered.Consumer,
			Push:        i.Config.DeliverSubject != "",
			Waiting:     i.NumWaiting,
			Bound:       i.PushBound,
			AckWait:     i.Config.AckWait,
			BackOff:     i.Config.BackOff,
		}
		return nil
	})
	return s, err
}

// consumerInfo returns the info of a durable consumer, pull or push (js.Consumer binds only to
// pull consumers).
func consumerInfo(ctx context.Context, js jetstream.JetStream, stream, durable string) (*jetstream.ConsumerInfo, error) {
	c, err := js.Consumer(ctx, stream, durable)
	if err == nil {
		return c.CachedInfo(), nil
	}
	if !errors.Is(err, jetstream.ErrNotPullConsumer) {
		return nil, err
	}
	p, err := js.PushConsumer(ctx, stream, durable)
	if err != nil {
		return nil, err
	}
	return p.CachedInfo(), nil
}

// StreamDuplicates returns the duplicates window of the stream as it exists on the server
// (whoever created it): a message whose Nats-Msg-Id was seen within it is dropped.
func (t *JetStreamTopology) StreamDuplicates(ctx context.Context) (time.Duration, error) {
	var d time.Duration
	err := withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		s, err := js.Stream(ctx, t.Stream)
		if err != nil {
			return fmt.Errorf("stream %q: %w", t.Stream, err)
		}
		d = s.CachedInfo().Config.Duplicates
		return nil
	})
	return d, err
}

// Exists reports whether the stream exists (and, with a durable named, its durable consumer).
func (t *JetStreamTopology) Exists(ctx context.Context) (bool, error) {
	found := false
	err := withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		_, err := js.Stream(ctx, t.Stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("stream %q: %w", t.Stream, err)
		}
		if t.Durable == "" {
			found = true
			return nil
		}
		_, err = consumerInfo(ctx, js, t.Stream, t.Durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	return found, err
}

// Teardown deletes the stream, its messages and its consumers. Deleting a stream that is
// already gone does nothing, so Teardown can always run at the end.
func (t *JetStreamTopology) Teardown(ctx context.Context) error {
	return withJetStream(ctx, t.URL, t.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		err := js.DeleteStream(ctx, t.Stream)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("delete stream %q: %w", t.Stream, err)
		}
		return nil
	})
}

// WaitOutDuplicates sleeps past the duplicates window of t (twice the window, as the server
// forgets ids on a timer, not at the exact instant), or until ctx ends: a message published
// again after it reaches the consumer.
func (t *JetStreamTopology) WaitOutDuplicates(ctx context.Context) error {
	timer := time.NewTimer(2 * t.Duplicates)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Publisher opens a publisher to the topology's subject that expects the topology's stream.
func (t *JetStreamTopology) Publisher(ctx context.Context) (*JetStreamPublisher, error) {
	return NewJetStreamPublisher(ctx, t.URL, t.Subject, t.Stream, WithDialTimeout(t.dialTimeout))
}

// connectNATS connects to url within timeout and ctx. A publish while the link is down fails
// at once instead of being buffered.
func connectNATS(ctx context.Context, url string, timeout time.Duration) (*nats.Conn, error) {
	timeout, err := dialBudget(ctx, timeout)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(url, nats.Name("retrysafe harness"), nats.Timeout(timeout), nats.ReconnectBufSize(-1))
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactURL(url), err)
	}
	return nc, nil
}

// connectJetStream connects as connectNATS does and opens the connection's JetStream context.
func connectJetStream(ctx context.Context, url string, timeout time.Duration) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := connectNATS(ctx, url, timeout)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("JetStream on %s: %w", redactURL(url), err)
	}
	return nc, js, nil
}

// withJetStream runs fn on the JetStream context of a fresh connection and closes it.
func withJetStream(ctx context.Context, url string, timeout time.Duration, fn func(context.Context, jetstream.JetStream) error) error {
	nc, js, err := connectJetStream(ctx, url, timeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The JetStream calls are bounded by its default API timeout when ctx has no deadline.
	return fn(ctx, js)
}
