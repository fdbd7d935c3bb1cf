package framework

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// RedeliveryMargin is what every wait for a redelivery, a drain or a settle adds to the
// redelivery clock: the consumer's reconnection after a restart or a healed link (a backoff of up
// to a second in most queue libraries), a few polls of the broker and the observers, and a loaded
// machine's scheduling.
const RedeliveryMargin = 3 * time.Second

// DefaultMaxRedeliveryWait bounds the waits of the redelivery clock by default
// (--max-redelivery-wait): long enough for a JetStream durable at the server's default AckWait
// (30 s) with a lock timeout to be judged by a default run.
const DefaultMaxRedeliveryWait = 90 * time.Second

// jetStreamDefaultAckWait is the AckWait a JetStream server gives a durable that declares none:
// the clock of a JetStream consumer whose durable the harness cannot read.
const jetStreamDefaultAckWait = 30 * time.Second

// ServerRedelivery is what a broker reports of a consumer's redeliveries: a JetStream durable's
// AckWait and BackOff, as the server has them (zero: not read).
type ServerRedelivery struct {
	AckWait time.Duration
	BackOff []time.Duration
}

// RedeliveryClock says, for one consumer, how long its provider takes to deliver again what was
// not acknowledged, from what the target declares or the server reports: JetStream after the
// durable's AckWait (or its BackOff's steps), RabbitMQ at once (a closed channel or a requeue)
// or after the declared redelivery_after, a webhook on the harness's own schedule. A claim that
// a handling left (killed, or held at the sink) delays the redelivery that can take effect by the
// consumer's lock_timeout. Every wait for a redelivery, a drain or a settle on the consumer side
// derives from it, plus RedeliveryMargin, bounded by --max-redelivery-wait.
type RedeliveryClock struct {
	// Step is how long after a delivery that was not acknowledged the next one comes.
	Step time.Duration
	// Source says where Step comes from, e.g. "JetStream AckWait 30s, as the server reports it".
	Source string
	// Lock is the consumer's lock_timeout (0: not declared).
	Lock time.Duration
}

// NewRedeliveryClock derives the redelivery clock of c from what it declares and what its
// broker reports (server; zero when it could not be read).
func NewRedeliveryClock(c *targets.Consumer, server ServerRedelivery) RedeliveryClock {
	r := RedeliveryClock{Lock: c.LockTimeout}
	switch {
	case c.Transport == targets.TransportWebhook:
		r.Step, r.Source = RetryInterval, fmt.Sprintf("the harness redelivers a webhook every %v", RetryInterval)
	case c.AMQP != nil && c.RedeliveryAfter > 0:
		r.Step, r.Source = c.RedeliveryAfter, fmt.Sprintf("RabbitMQ redelivers after the declared redelivery_after %v", c.RedeliveryAfter)
	case c.AMQP != nil:
		r.Source = "RabbitMQ redelivers at once what a closed channel or a requeue gives back"
	case len(server.BackOff) > 0:
		steps := server.BackOff[:min(2, len(server.BackOff))]
		r.Step = max(steps[0], steps[len(steps)-1])
		r.Source = fmt.Sprintf("JetStream BackOff %s, as the server reports it (the longer of its first two steps: a redelivery that finds the event still claimed waits the second)",
			durations(server.BackOff))
	case server.AckWait > 0:
		r.Step, r.Source = server.AckWait, fmt.Sprintf("JetStream AckWait %v, as the server reports it", server.AckWait)
	case c.RedeliveryAfter > 0:
		r.Step, r.Source = c.RedeliveryAfter, fmt.Sprintf("JetStream redelivers after the declared redelivery_after %v", c.RedeliveryAfter)
	default:
		r.Step, r.Source = jetStreamDefaultAckWait, fmt.Sprintf("JetStream's default AckWait %v (the durable's could not be read)", jetStreamDefaultAckWait)
	}
	return r
}

// durations formats a list of durations as [1s 5s].
func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Wait is how long a redelivery may take: the step and the margin, and the lock timeout before
// them when a handling left a claim on the event (claim).
func (r RedeliveryClock) Wait(claim bool) time.Duration {
	d := r.Step + RedeliveryMargin
	if claim {
		d += r.Lock
	}
	return d
}

// Explain says how Wait(claim) is made, such as "33s: JetStream AckWait 30s, as the server
// reports it, plus a 3s margin".
func (r RedeliveryClock) Explain(claim bool) string {
	lock := ""
	if claim && r.Lock > 0 {
		lock = fmt.Sprintf("the lock timeout %v (a killed or held handling's claim holds the event), then ", r.Lock)
	}
	return fmt.Sprintf("%v: %s%s, plus a %v margin", r.Wait(claim), lock, r.Source, RedeliveryMargin)
}

// Redelivery returns the redelivery clock of one of the target's consumers, from what its
// broker reported when the run opened.
func (e *Env) Redelivery(c *targets.Consumer) RedeliveryClock {
	var server ServerRedelivery
	if k := e.Faults.kit(c); k != nil {
		server = ServerRedelivery{AckWait: k.ackWait, BackOff: k.backOff}
	}
	return NewRedeliveryClock(c, server)
}

// RedeliveryWait is how long a spec waits for a redelivery of c's (claim: after a claim a
// handling left), bounded by --max-redelivery-wait.
func (e *Env) RedeliveryWait(c *targets.Consumer, claim bool) time.Duration {
	return min(e.Redelivery(c).Wait(claim), e.Settings.MaxRedeliveryWait)
}

// RedeliverySkip says why a spec that rests on a redelivery of c's (claim: after a claim a
// handling left) cannot run within --max-redelivery-wait, or "".
func (e *Env) RedeliverySkip(c *targets.Consumer, claim bool) string {
	r := e.Redelivery(c)
	if r.Wait(claim) <= e.Settings.MaxRedeliveryWait {
		return ""
	}
	return fmt.Sprintf("a redelivery of consumer %s's events can take %s, longer than --max-redelivery-wait %v: raise --max-redelivery-wait to judge it",
		c.Name, r.Explain(claim), e.Settings.MaxRedeliveryWait)
}
