package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The paths of concurrent-redelivery on JetStream, which drops copies of a message within its
// duplicates window: what puts two deliveries of one event in flight at once.
const (
	// natsCopies: the event id travels outside the Nats-Msg-Id, so K copies published at once
	// are K messages the broker delivers (to several instances, at once).
	natsCopies = iota + 1
	// natsHeldSink: the sink holds the handler's downstream call past the durable's AckWait.
	natsHeldSink
	// natsSlowed: the slow hook makes the handler outlast the AckWait.
	natsSlowed
)

// natsConcurrentPath picks how concurrent-redelivery puts two deliveries of one event in flight
// on JetStream, or says why nothing can.
func natsConcurrentPath(e *Env, c *targets.Consumer) (int, string) {
	switch {
	case c.Event.ID.In != targets.IDInTransport:
		return natsCopies, ""
	case e.Faults.Sink != nil:
		return natsHeldSink, ""
	case c.Hooks.CanSlow():
		return natsSlowed, ""
	}
	return 0, "the event id travels in the Nats-Msg-Id (JetStream drops copies within its duplicates window), the target declares no downstream " +
		"and the consumer no hooks.slow: nothing can put two deliveries of one event in flight at once (declare event.id {header: NAME}, a downstream, or hooks.slow)"
}

// concurrentNATSCopies publishes K copies of one event at once, each its own message (the event
// id travels in a header or the body), their handlings held at the downstream or slowed by the
// slow hook so that they overlap (racedBurst): the event MUST take effect once.
func (s *S) concurrentNATSCopies(c *targets.Consumer, k int) check.Result {
	ev := s.NewEvent(c)
	burst, overlaps := s.racedBurst(copies(ev, k))
	res := check.ConcurrentRedelivery(burst, check.Eventually{}, s.settle(ev))
	overlaps.Judge(&res, "copies of one event")
	return res
}

// concurrentSlowMs is how long the slow hook makes each handling of a burst of copies take.
const concurrentSlowMs = 300

// concurrentNATS is concurrent-redelivery on JetStream when the event id travels in the
// Nats-Msg-Id, so that no burst of one event can reach a consumer (the broker drops copies
// within its duplicates window): the concurrency a JetStream consumer meets is then its own
// redelivery. The harness holds the consumer's downstream call (or, without a sink, slows the
// handling through the slow hook) so that its handler outlasts the durable consumer's AckWait;
// JetStream then redelivers the message, to another instance sharing the durable consumer or the
// same one, while the first handler still holds the event. The consumer MUST NOT apply it a
// second time (it answers the in-flight claim by a NAK); released, the event takes effect once.
func (s *S) concurrentNATS(c *targets.Consumer, path int) check.Result {
	ackWait := s.Redelivery(c).Step // the durable's AckWait (or BackOff), as the server reports it
	hold := ackWait + ackWait/2     // one redelivery at the AckWait, while the handler holds the event
	if c.LockTimeout > 0 && c.LockTimeout <= hold {
		return check.Skipf("the consumer's lock_timeout %v is not longer than one and a half AckWaits (AckWait %v): the redelivery would take the claim over", c.LockTimeout, ackWait)
	}
	ev := s.NewEvent(c)
	if path == natsSlowed {
		if err := s.slowFor(c, hold.Milliseconds()); err != nil {
			return check.Unknownf("cannot slow the handlings: %v", err)
		}
		published := ev.Deliver(Delivery{SlowMs: hold.Milliseconds()})
		s.WaitUntil(fmt.Sprintf("the handling held past the AckWait (%s)", framework.Seconds(hold)), time.Now().Add(hold)) // JetStream redelivers after each AckWait meanwhile
		return check.ConcurrentRedelivery([]history.Attempt{published}, check.Eventually{}, s.settle(ev))
	}
	f := s.Faults.Sink.HoldFault()
	if err := s.Inject(f); err != nil {
		return check.Unknownf("%v", err)
	}
	defer s.Heal(f)
	published := ev.Deliver(Delivery{})
	if err := s.WaitHeld(1); err != nil {
		return check.Unknownf("the consumer never called its downstream for event %s: %v", ev.ID, err)
	}
	overlaps := s.awaitHeldRedelivery(c, ackWait)
	if err := s.Heal(f); err != nil {
		return check.Unknownf("%v", err)
	}
	res := check.ConcurrentRedelivery([]history.Attempt{published}, check.Eventually{}, s.settle(ev))
	overlaps.Judge(&res, "handlings of one message")
	return res
}

// awaitHeldRedelivery waits, while the downstream holds the first handling of a message, until
// JetStream has redelivered it and its second handling had time to decide (redeliveryDecide
// after the broker counts the redelivery), or that handling reached the downstream too (a
// consumer that applies it again), at most three AckWaits. It returns how many handlings of
// the message met the held one: 2 when the redelivery came while it was held, 1 when it did not
// come (nothing raced: the spec is then unknown, never a pass).
func (s *S) awaitHeldRedelivery(c *targets.Consumer, ackWait time.Duration) check.Overlaps {
	start := time.Now()
	deadline := start.Add(3 * ackWait)
	var seen time.Time // when the broker first counted the redelivery
	held := 1
	for time.Now().Before(deadline) {
		if held = len(s.Faults.Sink.Held()); held >= 2 {
			break
		}
		if h, err := s.brokerState(c); err == nil && h.Redelivered > 0 && seen.IsZero() {
			seen = time.Now()
		}
		if !seen.IsZero() && time.Since(seen) >= redeliveryDecide(ackWait) || !s.SleepUntil(time.Now().Add(brokerPoll)) {
			break
		}
	}
	overlaps := check.Overlaps{K: 2}
	switch {
	case held >= 2:
		s.Notef("%d downstream calls of one event held together %v after the first (AckWait %v)", held, time.Since(start).Round(time.Millisecond), ackWait)
		overlaps.AddCount(held)
	case !seen.IsZero():
		s.Notef("JetStream redelivered the message %v after the first handling was held (AckWait %v); %v later its second handling had not reached the downstream",
			seen.Sub(start).Round(time.Millisecond), ackWait, time.Since(seen).Round(time.Millisecond))
		overlaps.AddCount(2)
	default:
		s.Notef("JetStream did not redeliver the message within %v of the first handling being held (AckWait %v)", time.Since(start).Round(time.Millisecond), ackWait)
		overlaps.AddCount(1)
	}
	return overlaps
}

// redeliveryDecide is how long a redelivered message's handling is given, once the broker counts
// the redelivery, to reach its dedupe decision: half the AckWait, at least a second.
func redeliveryDecide(ackWait time.Duration) time.Duration { return max(time.Second, ackWait/2) }
