package broker

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of the options.
const (
	// DefaultAMQPURL is the local RabbitMQ with its default account.
	DefaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
	// DefaultNATSURL is the local NATS server.
	DefaultNATSURL = "nats://127.0.0.1:4222"
	// DefaultRabbitmqctl is the command Inventory lists RabbitMQ's queues and exchanges with
	// (the management HTTP API may be off).
	DefaultRabbitmqctl = "rabbitmqctl"
	// DefaultVHost is the RabbitMQ virtual host Inventory lists.
	DefaultVHost = "/"
	// DefaultDialTimeout bounds connecting to a broker.
	DefaultDialTimeout = 5 * time.Second
	// DefaultDuplicatesWindow is the JetStream duplicates window of a run's stream: short, so
	// that a redelivery the harness publishes again after it reaches the consumer.
	DefaultDuplicatesWindow = 200 * time.Millisecond
	// MinDuplicatesWindow and MaxDuplicatesWindow bound the duplicates window. JetStream
	// cannot turn the window off (0 means its default of 2 minutes).
	MinDuplicatesWindow = 100 * time.Millisecond
	// MaxDuplicatesWindow is the longest duplicates window allowed, see MinDuplicatesWindow.
	MaxDuplicatesWindow = time.Second
	// DefaultAckWait is how long JetStream waits for an ack before redelivering, on the durable
	// consumer of a run: short, so that redeliveries come fast.
	DefaultAckWait = time.Second
	// DefaultStreamMaxAge is how long a run's stream keeps messages, so that a stream left
	// behind by a crashed harness does not grow for ever.
	DefaultStreamMaxAge = time.Hour
	// DefaultStorage is where a run's stream keeps its messages.
	DefaultStorage = jetstream.FileStorage
)

// Option changes one setting of a topology, a publisher or an inventory. Each takes the
// settings that concern it and ignores the others.
type Option func(*config)

type config struct {
	amqpURL     string
	natsURL     string
	rabbitmqctl string
	vhost       string
	dialTimeout time.Duration
	duplicates  time.Duration
	ackWait     time.Duration
	maxAge      time.Duration
	storage     jetstream.StorageType
	durable     string
	kinds       []Kind
	perPublish  bool
}

func newConfig(opts []Option) config {
	c := config{
		amqpURL:     DefaultAMQPURL,
		natsURL:     DefaultNATSURL,
		rabbitmqctl: DefaultRabbitmqctl,
		vhost:       DefaultVHost,
		dialTimeout: DefaultDialTimeout,
		duplicates:  DefaultDuplicatesWindow,
		ackWait:     DefaultAckWait,
		maxAge:      DefaultStreamMaxAge,
		storage:     DefaultStorage,
		kinds:       []Kind{AMQP, NATS},
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithAMQPURL sets the RabbitMQ URL (default DefaultAMQPURL).
func WithAMQPURL(url string) Option { return func(c *config) { c.amqpURL = url } }

// WithNATSURL sets the NATS URL (default DefaultNATSURL).
func WithNATSURL(url string) Option { return func(c *config) { c.natsURL = url } }

// WithRabbitmqctl sets the rabbitmqctl command and the virtual host Inventory lists (defaults
// DefaultRabbitmqctl and DefaultVHost).
func WithRabbitmqctl(path, vhost string) Option {
	return func(c *config) { c.rabbitmqctl, c.vhost = path, vhost }
}

// WithDialTimeout bounds connecting to a broker (default DefaultDialTimeout).
func WithDialTimeout(d time.Duration) Option { return func(c *config) { c.dialTimeout = d } }

// WithDuplicatesWindow sets the JetStream duplicates window of a run's stream, between
// MinDuplicatesWindow and MaxDuplicatesWindow (default DefaultDuplicatesWindow).
func WithDuplicatesWindow(d time.Duration) Option { return func(c *config) { c.duplicates = d } }

// WithAckWait sets the AckWait of a run's durable JetStream consumer (default DefaultAckWait).
func WithAckWait(d time.Duration) Option { return func(c *config) { c.ackWait = d } }

// WithStreamMaxAge sets how long a run's stream keeps messages (default DefaultStreamMaxAge).
func WithStreamMaxAge(d time.Duration) Option { return func(c *config) { c.maxAge = d } }

// WithStorage sets where a run's stream keeps its messages (default DefaultStorage).
func WithStorage(s jetstream.StorageType) Option { return func(c *config) { c.storage = s } }

// WithDurable names a run's durable JetStream consumer (default "<run name>-consumer").
func WithDurable(name string) Option { return func(c *config) { c.durable = name } }

// WithKinds limits Inventory to the given brokers (default both).
func WithKinds(kinds ...Kind) Option { return func(c *config) { c.kinds = kinds } }

// WithChannelPerPublish makes an AMQP publisher open a channel (in confirm mode) for each
// message and close it once confirmed, as some libraries do by default: a publication then waits
// for the broker's answer (channel.open-ok) before it sends anything.
func WithChannelPerPublish() Option { return func(c *config) { c.perPublish = true } }
