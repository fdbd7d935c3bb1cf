package consumer

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
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
// id travels in a header or the body), slowed by the slow hook where declared so that their
// handlings overlap: the event MUST take effect once.
func (s *S) concurrentNATSCopies(c *targets.Consumer, k int) check.Result {
	ev := s.NewEvent(c)
	var slowMs int64
	if c.Hooks.CanSlow() {
		slowMs = concurrentSlowMs
	}
	burst := s.deliverTogether(ev, k, slowMs)
	return check.ConcurrentRedelivery(burst, check.Eventually{}, s.settle(ev))
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
	ackWait := broker.DefaultAckWait
	if w := s.Faults.AckWait(c); w > 0 {
		ackWait = w
	}
	hold := ackWait + ackWait/2 // one redelivery at the AckWait, while the handler holds the event
	if c.LockTimeout > 0 && c.LockTimeout <= hold {
		return check.Skipf("the consumer's lock_timeout %v is not longer than one and a half AckWaits (AckWait %v): the redelivery would take the claim over", c.LockTimeout, ackWait)
	}
	ev := s.NewEvent(c)
	if path == natsSlowed {
		published := ev.Deliver(Delivery{SlowMs: hold.Milliseconds()})
		s.SleepUntil(time.Now().Add(hold)) // JetStream redelivers after each AckWait meanwhile
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
	s.SleepUntil(time.Now().Add(hold)) // JetStream redelivers after each AckWait meanwhile
	held := len(s.Faults.Sink.Held())
	s.Notef("%d downstream calls held after %v (AckWait %v)", held, hold, ackWait)
	if err := s.Heal(f); err != nil {
		return check.Unknownf("%v", err)
	}
	return check.ConcurrentRedelivery([]history.Attempt{published}, check.Eventually{}, s.settle(ev))
}
