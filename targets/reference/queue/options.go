package queue

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultAMQPURL is the local RabbitMQ with its default account.
	DefaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
	// DefaultNATSURL is the local NATS server.
	DefaultNATSURL = "nats://127.0.0.1:4222"
	// DefaultPrefetch is how many messages are delivered and handled at a time.
	DefaultPrefetch = 8
	// DefaultRetryDelay is how long a message given back by Retry waits before redelivery,
	// so that a handler that keeps retrying does not spin.
	DefaultRetryDelay = 100 * time.Millisecond
	// DefaultAckWait is the AckWait of a JetStream durable consumer Run creates.
	DefaultAckWait = time.Second
	// DefaultHeartbeat is the interval of the link's keep-alives (AMQP heartbeats, NATS
	// pings), by which a silent link is found dead (after about 3 intervals).
	DefaultHeartbeat = 2 * time.Second
	// DefaultDialTimeout bounds one connection attempt.
	DefaultDialTimeout = 5 * time.Second
	// DefaultReconnectMin and DefaultReconnectMax bound the backoff between connection
	// attempts, which doubles from the first to the second.
	DefaultReconnectMin = 50 * time.Millisecond
	// DefaultReconnectMax is the longest wait between connection attempts.
	DefaultReconnectMax = time.Second
	// DefaultDrainTimeout bounds how long Run waits, once its context has ended, for the
	// in-flight handlers to return.
	DefaultDrainTimeout = 2 * time.Second
	// DefaultName is the connection name the broker shows.
	DefaultName = "retrysafe reference consumer"
)

// ackTimeout bounds waiting for JetStream to confirm an ack.
const ackTimeout = 2 * time.Second

// Options configures Run. The zero value of a field means its default.
type Options struct {
	// Broker is AMQP or NATS.
	Broker Broker
	// URL is the broker's (or a proxy's in front of it); DefaultAMQPURL or DefaultNATSURL.
	URL string
	// Queue is the RabbitMQ queue to consume (AMQP, required).
	Queue string
	// Stream is the JetStream stream (NATS, required).
	Stream string
	// Subject is the durable consumer's filter subject (NATS, required).
	Subject string
	// Durable is the durable consumer's name (NATS; default "<Stream>-consumer"). Run binds to
	// it, or creates it (explicit ack, AckWait, unlimited redeliveries) when it does not exist.
	Durable string
	// AckWait is the AckWait of a durable consumer Run creates (NATS; DefaultAckWait).
	AckWait time.Duration
	// Prefetch is how many unacknowledged messages the broker may hand out at a time, and how
	// many handlers run at a time (DefaultPrefetch).
	Prefetch int
	// RetryDelay is the wait before a Retry is redelivered (DefaultRetryDelay).
	RetryDelay time.Duration
	// Heartbeat is the keep-alive interval of the link (DefaultHeartbeat).
	Heartbeat time.Duration
	// DialTimeout bounds one connection attempt (DefaultDialTimeout).
	DialTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the backoff between connection attempts
	// (DefaultReconnectMin, DefaultReconnectMax).
	ReconnectMin, ReconnectMax time.Duration
	// DrainTimeout bounds the wait for in-flight handlers once ctx has ended
	// (DefaultDrainTimeout).
	DrainTimeout time.Duration
	// Push consumes a durable push consumer (NATS): the server pushes to its deliver subject,
	// which the processes of one durable share as a queue group. Run binds to it, or creates it
	// (delivered to "<Stream>.deliver.<Durable>", queue group Durable) when it does not exist.
	Push bool
	// Declare makes Run create what it consumes when it does not exist, as many queue libraries
	// do at start-up: the durable queue (AMQP, reached through the default exchange), or the
	// stream on Subject with the server's default duplicates window (NATS).
	Declare bool
	// DeleteOnExit makes Run delete the queue (AMQP) or the stream (NATS) when its context
	// ends, over a fresh connection, before it returns: a consumer that cleans up after itself.
	DeleteOnExit bool
	// AckFirst is the ack-before-effect mutant: each message is acknowledged before the
	// handler is called, whatever it then decides, so a crash during the handler loses it.
	AckFirst bool
	// Ready, when set, is called once, when consuming has first started.
	Ready func()
	// Settled, when set, is called after each decision was carried out, from the handler's
	// goroutine (so concurrently with other calls). err is nil when the settlement left: a
	// JetStream ack was confirmed by the server, an AMQP ack, nack or reject was written to the
	// link (which may still lose it). Under AckFirst it is called after the early ack, with
	// Ack. It is not called for a decision made after ctx ended, which is not carried out.
	Settled func(m Message, d Decision, err error)
	// Logf, when set, receives a line for each connection, lost link, reconnection and lost
	// settlement; it may be called concurrently.
	Logf func(format string, args ...any)
	// Name is the connection name the broker shows (DefaultName).
	Name string
}

// withDefaults fills in the defaults and reports every invalid field at once.
func (o Options) withDefaults() (Options, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch o.Broker {
	case AMQP:
		o.URL = or(o.URL, DefaultAMQPURL)
		if o.Queue == "" {
			bad("Queue is empty (the RabbitMQ queue to consume)")
		}
	case NATS:
		o.URL = or(o.URL, DefaultNATSURL)
		if o.Push && o.AckFirst {
			bad("AckFirst is not supported with Push")
		}
		if o.Stream == "" {
			bad("Stream is empty (the JetStream stream)")
		}
		if o.Subject == "" {
			bad("Subject is empty (the durable consumer's filter subject)")
		}
		o.Durable = or(o.Durable, o.Stream+"-consumer")
	default:
		bad("Broker %q: want %q or %q", o.Broker, AMQP, NATS)
	}
	o.AckWait = orDuration(o.AckWait, DefaultAckWait)
	o.RetryDelay = orDuration(o.RetryDelay, DefaultRetryDelay)
	o.Heartbeat = orDuration(o.Heartbeat, DefaultHeartbeat)
	o.DialTimeout = orDuration(o.DialTimeout, DefaultDialTimeout)
	o.ReconnectMin = orDuration(o.ReconnectMin, DefaultReconnectMin)
	o.ReconnectMax = orDuration(o.ReconnectMax, DefaultReconnectMax)
	o.DrainTimeout = orDuration(o.DrainTimeout, DefaultDrainTimeout)
	o.Name = or(o.Name, DefaultName)
	if o.Prefetch == 0 {
		o.Prefetch = DefaultPrefetch
	}
	if o.Prefetch < 0 || o.Prefetch > 65535 {
		bad("Prefetch %d: want 1-65535", o.Prefetch)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"AckWait", o.AckWait}, {"RetryDelay", o.RetryDelay}, {"Heartbeat", o.Heartbeat},
		{"DialTimeout", o.DialTimeout}, {"ReconnectMin", o.ReconnectMin}, {"ReconnectMax", o.ReconnectMax},
		{"DrainTimeout", o.DrainTimeout},
	} {
		if f.d < 0 {
			bad("%s %v: must not be negative", f.name, f.d)
		}
	}
	if o.ReconnectMax < o.ReconnectMin {
		bad("ReconnectMax %v is shorter than ReconnectMin %v", o.ReconnectMax, o.ReconnectMin)
	}
	if o.Settled == nil {
		o.Settled = func(Message, Decision, error) {}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if len(problems) > 0 {
		return o, errors.New("queue.Options: " + strings.Join(problems, "; "))
	}
	return o, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
