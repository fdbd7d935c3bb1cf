package suites

import (
	"context"
	"errors"
	"fmt"
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
	publisher broker.Publisher
	proxy     *faults.Proxy // the consumer's broker link (nil: not proxied)
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
		if err := k.setUpTopology(ctx); err != nil {
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
// consumer), when the target file asks the harness to.
func (k *consumerKit) setUpTopology(ctx context.Context) error {
	c := k.c
	switch {
	case c.AMQP != nil && c.AMQP.Create:
		t, err := broker.NewAMQPTopology(c.AMQP.Queue, broker.WithAMQPURL(c.AMQP.URL))
		if err != nil {
			return fmt.Errorf("consumer %s: %w", c.Name, err)
		}
		t.Exchange, t.Queue, t.RoutingKey = c.AMQP.Exchange, c.AMQP.Queue, c.AMQP.RoutingKey
		k.topology = t
	case c.NATS != nil && c.NATS.Create:
		opts := []broker.Option{broker.WithNATSURL(c.NATS.URL)}
		if c.NATS.Durable != "" {
			opts = append(opts, broker.WithDurable(c.NATS.Durable))
		}
		t, err := broker.NewJetStreamTopology(c.NATS.Stream, opts...)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", c.Name, err)
		}
		t.Subject = c.NATS.Subject
		k.topology = t
	default:
		return nil
	}
	if err := k.topology.Setup(ctx); err != nil {
		return fmt.Errorf("consumer %s: set up the broker topology: %w", c.Name, err)
	}
	if js, ok := k.topology.(*broker.JetStreamTopology); ok && c.NATS.Durable != "" {
		if err := js.CreateConsumer(ctx); err != nil {
			return fmt.Errorf("consumer %s: create the durable consumer: %w", c.Name, err)
		}
	}
	return nil
}

// openPublishers opens the publisher of every queue consumer.
func (f *Faults) openPublishers(ctx context.Context) error {
	for _, k := range f.consumers {
		c := k.c
		var err error
		switch {
		case c.AMQP != nil:
			k.publisher, err = broker.NewAMQPPublisher(ctx, c.AMQP.URL, c.AMQP.Exchange, c.AMQP.RoutingKey)
		case c.NATS != nil:
			k.publisher, err = broker.NewJetStreamPublisher(ctx, c.NATS.URL, c.NATS.Subject, c.NATS.Stream)
		}
		if err != nil {
			return fmt.Errorf("consumer %s: publisher: %w", c.Name, err)
		}
	}
	return nil
}

// closeConsumers closes the publishers and deletes what the harness created on the brokers.
func (f *Faults) closeConsumers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var errs []error
	for _, k := range f.consumers {
		if k.publisher != nil {
			errs = append(errs, k.publisher.Close())
		}
		if k.topology != nil {
			errs = append(errs, k.topology.Teardown(ctx))
		}
	}
	f.consumers = nil
	return errors.Join(errs...)
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
