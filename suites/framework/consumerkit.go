package framework

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// consumerKit is what the harness holds for one consumer: the signer of its deliveries, and for
// a queue consumer the topology it created, the publisher and the proxy in front of the broker
// through which the consumer reaches it ({{.Broker}}).
type consumerKit struct {
	c         *targets.Consumer
	signer    *webhook.Signer
	topology  broker.Topology // created by the harness (nil: the consumer's own)
	doomed    broker.Topology // deleted at the end: what the harness created, or what delete: true names
	publisher broker.Publisher
	proxy     *faults.Proxy // the consumer's broker link (nil: not proxied)
	// duplicates is the JetStream stream's duplicates window, as the server has it (0 on
	// AMQP); ackWait and backOff are the durable consumer's AckWait and BackOff where they
	// could be read (zero: not told).
	duplicates, ackWait time.Duration
	backOff             []time.Duration
}

// setUpConsumers prepares every consumer: signers, and for queue consumers the topology (when
// the target file asks the harness to create it) and the broker proxy the lifecycle's
// {{.Broker}} names. It returns the proxied broker address ("" when none). The publishers open
// later, once the consumer processes run (openPublishers).
func (f *Faults) setUpConsumers(ctx context.Context, t *targets.Target) (brokerAddr string, err error) {
	for _, c := range t.Consumers {
		k := &consumerKit{c: c}
		if k.signer, err = webhook.New(c.Signing); err != nil {
			return "", fmt.Errorf("consumer %s: signing: %w", c.Name, err)
		}
		f.consumers = append(f.consumers, k)
		if c.Transport == targets.TransportWebhook {
			continue
		}
		if err := k.setUpTopology(ctx, t); err != nil {
			return "", err
		}
		if brokerAddr == "" && t.Lifecycle.UsesBroker() {
			addr, err := hostPort(k.brokerURL(), c.Transport)
			if err != nil {
				return "", fmt.Errorf("consumer %s: %w", c.Name, err)
			}
			n, err := f.net()
			if err != nil {
				return "", err
			}
			if k.proxy, err = n.Proxy("broker-"+c.Name, addr); err != nil {
				return "", fmt.Errorf("consumer %s: broker proxy: %w", c.Name, err)
			}
			brokerAddr = k.proxy.Listen()
		}
	}
	return brokerAddr, nil
}

// setUpTopology creates the queue consumer's exchange and queue, or stream (and durable
// consumer, pull or push), when the target file asks the harness to, and names what the harness
// deletes at the end (what it created, or what delete: true names).
func (k *consumerKit) setUpTopology(ctx context.Context, tg *targets.Target) error {
	c := k.c
	t, err := k.named()
	if err != nil {
		return fmt.Errorf("consumer %s: %w", c.Name, err)
	}
	if c.AMQP != nil && c.AMQP.Delete || c.NATS != nil && c.NATS.Delete {
		k.doomed = t
	}
	if !(c.AMQP != nil && c.AMQP.Create || c.NATS != nil && c.NATS.Create) {
		return nil
	}
	k.topology, k.doomed = t, t
	if err := t.Setup(ctx); err != nil {
		if located := exchangeRefused(tg, c.AMQP, err); located != err {
			return located
		}
		return fmt.Errorf("consumer %s: set up the broker topology: %w", c.Name, err)
	}
	js, ok := t.(*broker.JetStreamTopology)
	switch {
	case !ok:
	case c.NATS.CreateDurable == targets.DurablePull:
		err = js.CreateConsumer(ctx)
	case c.NATS.CreateDurable == targets.DurablePush:
		err = js.CreatePushConsumer(ctx)
	}
	if err != nil {
		return fmt.Errorf("consumer %s: create the durable consumer: %w", c.Name, err)
	}
	return nil
}

// named is the topology the consumer's binding names (nothing is created).
func (k *consumerKit) named() (broker.Topology, error) {
	c := k.c
	if c.AMQP != nil {
		t, err := broker.NewAMQPTopology("named", broker.WithAMQPURL(c.AMQP.URL))
		if err != nil {
			return nil, err
		}
		t.Exchange, t.Queue, t.RoutingKey = c.AMQP.Exchange, c.AMQP.Queue, c.AMQP.RoutingKey
		t.ExchangeDurable, t.ExchangeAutoDelete = c.AMQP.ExchangeDurable, c.AMQP.ExchangeAutoDelete
		return t, nil
	}
	opts := []broker.Option{broker.WithNATSURL(c.NATS.URL)}
	if c.NATS.Durable != "" {
		opts = append(opts, broker.WithDurable(c.NATS.Durable))
	}
	t, err := broker.NewJetStreamTopology("named", opts...)
	if err != nil {
		return nil, err
	}
	t.Stream, t.Subject = c.NATS.Stream, c.NATS.Subject
	if c.NATS.Durable == "" {
		t.Durable = ""
	}
	return t, nil
}

// topologyWait bounds the wait, once the consumer's processes run, for a queue or stream the
// consumer creates itself.
const topologyWait = 15 * time.Second

// openPublishers waits for the topologies the consumers create themselves, reads what JetStream
// says of each stream (its duplicates window) and durable (its AckWait and BackOff: the
// redelivery clock), and opens the
// publisher of every queue consumer.
func (f *Faults) openPublishers(ctx context.Context) error {
	for _, k := range f.consumers {
		c := k.c
		if !c.IsQueue() {
			continue
		}
		if err := k.awaitTopology(ctx); err != nil {
			return fmt.Errorf("consumer %s: %w", c.Name, err)
		}
		var err error
		switch {
		case c.AMQP != nil:
			k.publisher, err = broker.NewAMQPPublisher(ctx, c.AMQP.URL, c.AMQP.Exchange, c.AMQP.PublishKey())
		case c.NATS != nil:
			k.publisher, err = broker.NewJetStreamPublisher(ctx, c.NATS.URL, c.NATS.Subject, c.NATS.Stream)
		}
		if err != nil {
			return fmt.Errorf("consumer %s: publisher: %w", c.Name, err)
		}
	}
	return nil
}

// awaitTopology waits, at most topologyWait, until the consumer's queue or stream (and named
// durable) exists, then reads the stream's duplicates window and the durable's AckWait and
// BackOff.
func (k *consumerKit) awaitTopology(ctx context.Context) error {
	t, err := k.named()
	if err != nil {
		return err
	}
	exists := func(ctx context.Context) (bool, error) {
		if a, ok := t.(*broker.AMQPTopology); ok {
			return a.Exists(ctx)
		}
		return t.(*broker.JetStreamTopology).Exists(ctx)
	}
	deadline := time.Now().Add(topologyWait)
	for {
		ok, err := exists(ctx)
		if ok {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("it was not there %v after the consumer started", topologyWait)
			}
			return fmt.Errorf("waiting for its %s: %w", BrokerTarget(k.c), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	js, ok := t.(*broker.JetStreamTopology)
	if !ok {
		return nil
	}
	if k.duplicates, err = js.StreamDuplicates(ctx); err != nil {
		return err
	}
	if js.Durable != "" {
		st, err := js.ConsumerState(ctx)
		if err != nil {
			return err
		}
		k.ackWait, k.backOff = st.AckWait, st.BackOff
	}
	return nil
}

// closeConsumers closes the publishers and deletes what the harness created on the brokers, and
// what delete: true names.
func (f *Faults) closeConsumers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var errs []error
	for _, k := range f.consumers {
		if k.publisher != nil {
			errs = append(errs, k.publisher.Close())
		}
		if k.doomed != nil {
			errs = append(errs, k.doomed.Teardown(ctx))
		}
	}
	f.consumers = nil
	return errors.Join(errs...)
}

// brokerCount counts, for the readiness probe ready.broker_consumers, the consumers attached to
// the target's queues: the lowest count over its queue consumers (RabbitMQ's consumers of the
// queue; JetStream's waiting pull requests of the durable, or any number once a push durable
// has a bound subscriber).
func (f *Faults) brokerCount(ctx context.Context) (int, error) {
	lowest := -1
	for _, k := range f.consumers {
		if !k.c.IsQueue() {
			continue
		}
		n, err := k.attached(ctx)
		if err != nil {
			return 0, err
		}
		if lowest < 0 || n < lowest {
			lowest = n
		}
	}
	return lowest, nil
}

// attached counts the consumers the broker tells attached to the consumer's queue or durable.
func (k *consumerKit) attached(ctx context.Context) (int, error) {
	t, err := k.named()
	if err != nil {
		return 0, err
	}
	if a, ok := t.(*broker.AMQPTopology); ok {
		st, err := a.State(ctx)
		return st.Consumers, err
	}
	js := t.(*broker.JetStreamTopology)
	if js.Durable == "" {
		return 0, errors.New("ready.broker_consumers on JetStream needs nats.durable: the durable consumer whose waiting pull requests are counted")
	}
	st, err := js.ConsumerState(ctx)
	if st.Push && st.Bound {
		return math.MaxInt, err // JetStream does not count a push consumer's subscribers
	}
	return st.Waiting, err
}

// kit returns the kit of a consumer.
func (f *Faults) kit(c *targets.Consumer) *consumerKit {
	for _, k := range f.consumers {
		if k.c == c {
			return k
		}
	}
	return nil
}

// Signer returns the signer of a consumer's webhook deliveries.
func (f *Faults) Signer(c *targets.Consumer) *webhook.Signer { return f.kit(c).signer }

// Publisher returns the publisher of a queue consumer's events (nil for a webhook).
func (f *Faults) Publisher(c *targets.Consumer) broker.Publisher { return f.kit(c).publisher }

// BrokerLink returns the proxy between a queue consumer and its broker (nil when its lifecycle
// does not reach the broker through {{.Broker}}).
func (f *Faults) BrokerLink(c *targets.Consumer) *faults.Proxy {
	if k := f.kit(c); k != nil {
		return k.proxy
	}
	return nil
}

func (k *consumerKit) brokerURL() string {
	switch {
	case k.c.AMQP != nil:
		return k.c.AMQP.URL
	case k.c.NATS != nil:
		return k.c.NATS.URL
	}
	return ""
}

// hostPort returns a broker URL's host:port, with the transport's default port.
func hostPort(raw string, tr targets.Transport) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("broker URL %q has no host", raw)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "5672"
	if tr == targets.TransportNATS {
		port = "4222"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// BrokerWindow is how long after a publication JetStream drops another with the same message
// id: the stream's duplicates window, for a NATS consumer whose event id travels in the message
// id (0 otherwise: AMQP has no window, and an event whose id travels elsewhere gets a new message
// id per publication).
func (e *Env) BrokerWindow(c *targets.Consumer) time.Duration {
	if c.NATS == nil || c.Event.ID.In != targets.IDInTransport {
		return 0
	}
	if k := e.Faults.kit(c); k != nil && k.duplicates > 0 {
		return k.duplicates
	}
	return broker.DefaultDuplicatesWindow
}

// maxWindowWait is the longest duplicates window a spec waits out between two publications of
// one event.
const maxWindowWait = 2 * time.Second

// RepublishSkip says why a spec that publishes an event again cannot run on c ("" = it can):
// JetStream would drop the republication for longer than a spec waits.
func (e *Env) RepublishSkip(c *targets.Consumer) string {
	if w := e.BrokerWindow(c); w > maxWindowWait {
		return fmt.Sprintf("JetStream drops a message published again with the same Nats-Msg-Id within the stream's duplicates window (%v), "+
			"and the event id travels in the Nats-Msg-Id: declare event.id {header: NAME} or {jsonpath: PATH} so that each redelivery is "+
			"a message the broker delivers, or give the stream a duplicates window of at most %v", w, maxWindowWait)
	}
	return ""
}

// BrokerTarget names a queue consumer's queue or durable consumer in the history.
func BrokerTarget(c *targets.Consumer) string {
	switch {
	case c.AMQP != nil:
		return "amqp queue " + c.AMQP.Queue
	case c.NATS != nil:
		return "nats durable " + c.NATS.Stream + "/" + c.NATS.Durable
	}
	return c.Name
}
