package consumer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
		Needs: []string{"consumers[].effects", "consumers[].lock_timeout (with the redelivery clock, bounds the redeliveries)",
			"on JetStream: event.id in a header or the body (copies), or a downstream binding or hooks.slow (a handler held past the AckWait)"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
		SpecLabels: []string{"fault:downstream"}, // on the sink path
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
					sp.Skip = e.RedeliverySkip(c, true) // held one and a half AckWaits, then settled
					if path == natsHeldSink {
						sp.Extra = append(sp.Extra, "fault:downstream")
					}
					return sp
				}
				return &Spec{Property: p, Text: c.Name + ": two deliveries of one event in flight at once take effect once", Skip: skip}
			}
			return spec(p, text, func(s *S) check.Result {
				ev := s.NewEvent(c)
				burst, overlaps := s.racedBurst(copies(ev, k))
				var again check.Eventually
				if c.Transport == targets.TransportWebhook && !allSucceeded(burst) {
					again = ev.redeliver(s.claimWait(c), k) // what was not acknowledged comes again
				}
				res := check.ConcurrentRedelivery(burst, again, s.settle(ev))
				overlaps.Judge(&res, "deliveries of one event")
				return res
			})
		})
	}
	register(p)
}

// concurrentDeliveries is how many deliveries of one event concurrent-redelivery releases
// together.
const concurrentDeliveries = 8

// racedBurst delivers the events at once, delivery i the i-th (deliverTogether; k = len(evs),
// copies of one event, or messages of one operation) and makes their handlings
// race for certain where the harness holds the consumer's downstream: every downstream call is
// held until each delivery has either reached the downstream or been answered (a webhook), or,
// on a broker, until two handlings reached it or, once brokerHoldGrace passed after the last copy
// was published and the broker holds none of them ready (each handed to a handler; a loaded
// consumer takes them late), brokerHoldGrace more passed; each handling that passed the
// consumer's dedupe check is then in flight at
// once, and a check-then-insert consumer applies the event once per handling. The hold lasts at
// most a quarter of the attempt timeout. It returns the deliveries and how many were in flight
// together: the deliveries' own overlap (webhooks), or the copies published while a handling
// was held (a broker: they were the consumer's to take while it held the event).
func (s *S) racedBurst(evs []*Event) ([]history.Attempt, check.Overlaps) {
	ev, k := evs[0], len(evs)
	overlaps := check.Overlaps{K: k}
	switch {
	case s.Faults.Sink != nil:
	case !ev.C.IsQueue():
		burst := s.deliverTogether(evs, 0)
		overlaps.Add(burst)
		return burst, overlaps
	case ev.C.Hooks.CanSlow():
		// Each handling lasts the slow hook's window: the copies published within it overlap.
		if err := s.slowFor(ev.C, concurrentSlowMs); err != nil {
			s.Notef("cannot slow the handlings (%v): the copies race unslowed", err)
		}
		burst := s.deliverTogether(evs, concurrentSlowMs)
		overlaps.AddCount(publishedWithin(burst, concurrentSlowMs*time.Millisecond))
		return burst, overlaps
	default:
		overlaps.Unseen = "the copies were published at once, but nothing shows whether the consumer handled two at the same time " +
			"(declare a downstream binding, or hooks.slow, so that its handlings can be held or stretched)"
		return s.deliverTogether(evs, 0), overlaps
	}
	f := s.Faults.Sink.HoldFault()
	if err := s.Inject(f); err != nil {
		s.Notef("cannot hold the downstream (%v): the deliveries race unheld", err)
		burst := s.deliverTogether(evs, 0)
		overlaps.Add(burst)
		return burst, overlaps
	}
	defer s.Heal(f)
	var answered atomic.Int32
	done := make(chan []history.Attempt, 1)
	go func() { done <- s.deliverCounting(evs, 0, &answered) }()
	start := time.Now()
	deadline := start.Add(s.Settings.AttemptTimeout / 4)
	var burst []history.Attempt
	var publishedAt time.Time
	held := 0
	var handedOut, asked time.Time // when the broker first held none of the copies ready (each with a handler), when it was last asked
	for time.Now().Before(deadline) {
		held = len(s.Faults.Sink.Held())
		if ev.C.IsQueue() {
			if held >= 2 {
				break
			}
			if burst != nil && handedOut.IsZero() && time.Since(publishedAt) >= brokerHoldGrace && time.Since(asked) >= brokerPoll {
				asked = time.Now()
				if h, err := s.brokerState(ev.C); err != nil || h.Ready == 0 {
					handedOut = time.Now()
				}
			}
			if !handedOut.IsZero() && time.Since(handedOut) >= brokerHoldGrace {
				break
			}
		} else if held+int(answered.Load()) >= k {
			break
		}
		select {
		case burst = <-done:
			publishedAt = time.Now()
		case <-time.After(5 * time.Millisecond):
		}
	}
	released := time.Now()
	s.Notef("%d handlings held at the downstream together, released after %v", held, released.Sub(start).Round(time.Millisecond))
	if err := s.Heal(f); err != nil {
		s.Notef("cannot release the downstream: %v", err)
	}
	if burst == nil {
		burst = <-done
	}
	if ev.C.IsQueue() {
		n := 0
		for _, a := range burst {
			if !a.End.IsZero() && a.End.Before(released) {
				n++
			}
		}
		overlaps.AddCount(max(n, held))
	} else {
		overlaps.Add(burst)
	}
	return burst, overlaps
}

// publishedWithin counts the copies whose publication was confirmed within window of the first
// confirmation.
func publishedWithin(burst []history.Attempt, window time.Duration) int {
	var first time.Time
	for _, a := range burst {
		if a.Outcome == history.OK && !a.End.IsZero() && (first.IsZero() || a.End.Before(first)) {
			first = a.End
		}
	}
	n := 0
	for _, a := range burst {
		if a.Outcome == history.OK && !a.End.IsZero() && a.End.Sub(first) < window {
			n++
		}
	}
	return n
}

// brokerHoldGrace is how long racedBurst keeps a broker consumer's first handling held after
// the last copy was published, for the broker to hand the other copies to the consumer's other
// handlers (it pushes them within milliseconds).
const brokerHoldGrace = time.Second

// copies returns k copies of one event (its deliveries).
func copies(ev *Event, k int) []*Event {
	out := make([]*Event, k)
	for i := range out {
		out[i] = ev
	}
	return out
}

// deliverTogether delivers the events at once: one goroutine per event parked on a barrier and
// released together by closing a channel, webhook delivery i to instance i (over warm
// connections), broker messages published at once; each slowed by the slow hook when slowMs > 0.
func (s *S) deliverTogether(evs []*Event, slowMs int64) []history.Attempt {
	return s.deliverCounting(evs, slowMs, nil)
}

// deliverCounting is deliverTogether that counts in answered the deliveries answered so far
// (nil: not counted).
func (s *S) deliverCounting(evs []*Event, slowMs int64, answered *atomic.Int32) []history.Attempt {
	k := len(evs)
	if evs[0].C.Transport == targets.TransportWebhook {
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
			out[i] = evs[i].Deliver(Delivery{Instance: i, SlowMs: slowMs})
			if answered != nil {
				answered.Add(1)
			}
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
