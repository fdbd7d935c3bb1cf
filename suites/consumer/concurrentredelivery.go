package consumer

import (
	"fmt"
	"sync"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// concurrent-redelivery: K deliveries of one event released together (goroutines parked on a
// barrier; webhook deliveries spread over the instances on warm connections; RabbitMQ copies
// published together, which the publisher confirms one after another, so that they reach the
// queue within milliseconds and the consumer handles them at once, up to its prefetch), then the
// event redelivered until a delivery is acknowledged, as a provider does with what was not.
//
// The consumer MUST acknowledge each delivery or answer the in-flight status (409) while another
// holds the event's claim, MUST acknowledge a redelivery within its lock timeout plus a margin,
// and MUST apply the event exactly once.
//
// Catches: check-then-insert (the deliveries all look the event up before any records it: each
// takes effect).
func init() {
	p := &Property{
		Name: "concurrent-redelivery",
		Must: `K deliveries of one event released together MUST take effect exactly once: each is
acknowledged or answered with the in-flight status (409) while another holds the event's claim, and a
delivery not acknowledged is redelivered until one is, within the consumer's lock timeout plus a
margin. On RabbitMQ the K copies are published at once; on JetStream too when the event id travels
outside the Nats-Msg-Id (each copy is its own message). When it travels in the Nats-Msg-Id, which
JetStream deduplicates within its duplicates window, the concurrency is JetStream's own redelivery: a
handler held past the durable consumer's AckWait (by the downstream, or the slow hook) gets its
message redelivered (to another instance, or the same) while it still holds the event, and the event
MUST still take effect exactly once.`,
		Catches: []string{"check-then-insert"},
		Needs: []string{"consumers[].effects", "consumers[].lock_timeout (bounds the redeliveries; 10s when not declared)",
			"on JetStream: event.id in a header or the body (copies), or a downstream binding or hooks.slow (a handler held past the AckWait)"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			k := concurrentDeliveries
			text := fmt.Sprintf("%s: %d deliveries of one event released together take effect once", c.Name, k)
			if c.Transport == targets.TransportNATS {
				path, skip := natsConcurrentPath(e, c)
				switch path {
				case natsCopies:
					return spec(p, fmt.Sprintf("%s: %d copies of one event published at once (each its own message: the event id travels outside the Nats-Msg-Id) take effect once", c.Name, k),
						func(s *S) check.Result { return s.concurrentNATSCopies(c, k) })
				case natsHeldSink, natsSlowed:
					how := "the downstream holds"
					if path == natsSlowed {
						how = "the slow hook stretches"
					}
					sp := spec(p, fmt.Sprintf("%s: a message redelivered after its AckWait while %s its first handling takes effect once", c.Name, how),
						func(s *S) check.Result { return s.concurrentNATS(c, path) })
					if path == natsHeldSink {
						sp.Extra = append(sp.Extra, "fault:downstream")
					}
					return sp
				}
				return &Spec{Property: p, Text: c.Name + ": two deliveries of one event in flight at once take effect once", Skip: skip}
			}
			return spec(p, text, func(s *S) check.Result {
				ev := s.NewEvent(c)
				burst := s.deliverTogether(ev, k, 0)
				var again check.Eventually
				if c.Transport == targets.TransportWebhook && !allSucceeded(burst) {
					again = ev.redeliver(consumerLockWait(c), k) // what was not acknowledged comes again
				}
				return check.ConcurrentRedelivery(burst, again, s.settle(ev))
			})
		})
	}
	register(p)
}

// concurrentDeliveries is how many deliveries of one event concurrent-redelivery releases
// together.
const concurrentDeliveries = 8

// deliverTogether delivers the event k times at once: k goroutines parked on a barrier and
// released together by closing a channel, webhook delivery i to instance i (over warm
// connections), broker copies published at once; each slowed by the slow hook when slowMs > 0.
func (s *S) deliverTogether(ev *Event, k int, slowMs int64) []history.Attempt {
	if ev.C.Transport == targets.TransportWebhook {
		ctx, cancel := s.AttemptCtx(1)
		n := len(s.Target.Instances)
		for i := range s.Target.Instances {
			// A failed warm-up is not fatal: the deliveries then dial, and record what happens.
			_ = s.Client.Warm(ctx, s.Target.Instances[i].URL.String(), framework.WarmPath(s.Env), (k+n-1)/n)
		}
		cancel()
	}
	out := make([]history.Attempt, k)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := range k {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			out[i] = ev.Deliver(Delivery{Instance: i, SlowMs: slowMs})
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	return out
}

// allSucceeded reports whether every attempt got a 2xx.
func allSucceeded(as []history.Attempt) bool {
	for _, a := range as {
		if !framework.Succeeded(a) {
			return false
		}
	}
	return true
}
