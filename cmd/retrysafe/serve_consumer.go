package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/retrysafe/retrysafe/targets/reference/queue"
	"github.com/retrysafe/retrysafe/targets/webhook"
	"github.com/spf13/cobra"
)

// EnvWebhookSecret names the environment variable that holds the reference consumer's signing
// secret when --secret is not given.
const EnvWebhookSecret = "RETRYSAFE_WEBHOOK_SECRET"

// consumerFlags are the flags of `retrysafe serve --consumer`.
type consumerFlags struct {
	transport       string
	signing         string
	secret          string
	tolerance       time.Duration
	dedupeRetention time.Duration
	brokerURL       string
	queue           string
	stream, subject string
	durable         string
	ackWait         time.Duration
	prefetch        int
	idFrom          string
	operationHeader string
	push            bool
	declare         bool
	deleteOnExit    bool
}

// addConsumerFlags adds the consumer's flags to serve.
func addConsumerFlags(cmd *cobra.Command) *consumerFlags {
	c := &consumerFlags{}
	f := cmd.Flags()
	f.StringVar(&c.transport, "consumer", "", "serve the reference event consumer instead of the API: webhook (POST /webhooks), amqp or nats")
	f.StringVar(&c.signing, "signing", "none", "webhook signature scheme: none, standard-webhooks, stripe, github, hmac")
	f.StringVar(&c.secret, "secret", "", "signing secret (default $"+EnvWebhookSecret+")")
	f.DurationVar(&c.tolerance, "tolerance", webhook.DefaultTolerance, "how old (or how far ahead) a signed timestamp may be")
	f.DurationVar(&c.dedupeRetention, "dedupe-retention", consumer.DefaultDedupeRetention, "how long an event id is remembered")
	f.StringVar(&c.brokerURL, "broker-url", "", "the broker to consume from (amqp://guest:guest@127.0.0.1:5672/, nats://127.0.0.1:4222)")
	f.StringVar(&c.queue, "queue", "", "the RabbitMQ queue to consume (amqp)")
	f.StringVar(&c.stream, "stream", "", "the JetStream stream (nats)")
	f.StringVar(&c.subject, "subject", "", "the JetStream subject (nats)")
	f.StringVar(&c.durable, "durable", "", "the JetStream durable consumer (nats; default <stream>-consumer)")
	f.DurationVar(&c.ackWait, "ack-wait", queue.DefaultAckWait, "AckWait of the durable consumer (nats)")
	f.IntVar(&c.prefetch, "prefetch", queue.DefaultPrefetch, "unacknowledged messages handled at a time (amqp, nats)")
	f.StringVar(&c.idFrom, "id-from", "", "where a delivery carries the event id: transport (the message id; the default on queues), body (the default on webhooks) or header:NAME")
	f.StringVar(&c.operationHeader, "operation-header", "", "the header (of a webhook request or a message) that names the business operation an event applies (default: the body's data.operation, or its data.operations list)")
	f.BoolVar(&c.push, "nats-push", false, "consume a durable push consumer (nats; created with a deliver subject and a queue group when missing) instead of pulling")
	f.BoolVar(&c.declare, "declare", false, "create the queue (amqp, on the default exchange) or the stream (nats, the server's default duplicates window) when missing")
	f.BoolVar(&c.deleteOnExit, "delete-on-exit", false, "delete the queue (amqp) or the stream (nats) on SIGTERM, through the broker link, before exiting")
	return c
}

// serveConsumer runs the reference consumer with serve's common flags (addr, store, dsn,
// mutant, lock timeout, downstream, work delay).
func serveConsumer(ctx context.Context, cmd *cobra.Command, c *consumerFlags, common serveCommon) error {
	m, err := consumer.ParseMutant(common.mutant)
	if err != nil {
		return usageErr("--mutant: %v", err)
	}
	scheme, err := webhook.ParseScheme(c.signing)
	if err != nil {
		return usageErr("--signing: %v", err)
	}
	secret := c.secret
	if secret == "" {
		secret = os.Getenv(EnvWebhookSecret)
	}
	idFrom, err := consumer.ParseIDFrom(c.idFrom)
	if err != nil {
		return usageErr("--id-from: %v", err)
	}
	if idFrom.In == consumer.IDInTransport && c.transport == consumer.TransportWebhook {
		return usageErr("--id-from transport: a webhook delivery has no transport id (use body or header:NAME)")
	}
	var effectDelay time.Duration
	if common.hooks {
		if effectDelay, err = consumer.EffectDelayFromEnv(); err != nil {
			return usageErr("--hooks: %v", err)
		}
	}
	opts := consumer.ServeOptions{
		Addr: common.addr, Store: common.store, DSN: common.dsn, Out: cmd.OutOrStdout(), ReusePort: common.reusePort,
		Log: log.New(os.Stderr, "retrysafe serve --consumer: ", log.LstdFlags),
		Config: consumer.Config{
			Signing: webhook.Config{Scheme: scheme, Secret: secret}, Tolerance: c.tolerance,
			DedupeRetention: c.dedupeRetention, LockTimeout: common.lockTimeout, Downstream: common.downstream,
			DownstreamTimeout: common.downstreamTimeout, WorkDelay: common.workDelay, Mutant: m,
			Hooks: common.hooks, IDFrom: idFrom, EffectDelay: effectDelay, OperationHeader: c.operationHeader,
		},
	}
	switch c.transport {
	case consumer.TransportWebhook:
	case consumer.TransportAMQP, consumer.TransportNATS:
		if scheme != webhook.SchemeNone {
			return usageErr("--signing: only webhook deliveries are signed")
		}
		qopts, err := c.queueOptions(m)
		if err != nil {
			return err
		}
		opts.Also = func(ctx context.Context, cs *consumer.Consumer) error {
			return queue.Run(ctx, qopts, cs.QueueHandler())
		}
	default:
		return usageErr("--consumer: unknown transport %q (known: webhook, amqp, nats)", c.transport)
	}
	if err := consumer.Serve(ctx, opts); err != nil {
		return usageErr("serve --consumer: %v", err)
	}
	return nil
}

// queueOptions are the transport's options from the flags.
func (c *consumerFlags) queueOptions(m consumer.Mutant) (queue.Options, error) {
	o := queue.Options{URL: c.brokerURL, Queue: c.queue, Stream: c.stream, Subject: c.subject, Durable: c.durable,
		AckWait: c.ackWait, Prefetch: c.prefetch, AckFirst: m == consumer.MutantAckBeforeEffect,
		Push: c.push, Declare: c.declare, DeleteOnExit: c.deleteOnExit,
		Logf: log.New(os.Stderr, "retrysafe serve --consumer "+c.transport+": ", log.LstdFlags).Printf}
	switch c.transport {
	case consumer.TransportAMQP:
		o.Broker = queue.AMQP
		if c.queue == "" {
			return o, usageErr("--queue is required with --consumer amqp")
		}
	default:
		o.Broker = queue.NATS
		if c.stream == "" || c.subject == "" {
			return o, usageErr("--stream and --subject are required with --consumer nats")
		}
	}
	if c.push && o.Broker != queue.NATS {
		return o, usageErr("--nats-push is for --consumer nats")
	}
	if c.brokerURL == "" {
		return o, usageErr("--broker-url is required with --consumer %s", c.transport)
	}
	return o, nil
}

// serveCommon are serve's flags that the API and the consumer share.
type serveCommon struct {
	addr, store, dsn, mutant, downstream string
	lockTimeout, downstreamTimeout       time.Duration
	workDelay                            time.Duration
	hooks, reusePort                     bool
}
