package suites

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/history"
)

// concurrentNATS is concurrent-redelivery on JetStream, where no burst of one event can reach a
// consumer (the broker drops copies within its duplicates window): the concurrency a JetStream
// consumer meets is its own redelivery. The harness holds the consumer's downstream call so that
// its handler outlasts the durable consumer's AckWait; JetStream then redelivers the message,
// to another instance sharing the durable consumer or the same one, while the first handler
// still holds the event. The consumer MUST NOT apply it a second time (it answers the in-flight
// claim by a NAK); released, the event takes effect once.
func (s *S) concurrentNATS(c *targets.Consumer) check.Result {
	if s.Faults.Sink == nil {
		return check.Skipf("the consumer calls no downstream sink: nothing can hold a handler past the AckWait")
	}
	ackWait := broker.DefaultAckWait
	if k := s.Faults.kit(c); k != nil {
		if js, ok := k.topology.(*broker.JetStreamTopology); ok {
			ackWait = js.AckWait
		}
	}
	hold := ackWait + ackWait/2 // one redelivery at the AckWait, while the handler holds the event
	if c.LockTimeout > 0 && c.LockTimeout <= hold {
		return check.Skipf("the consumer's lock_timeout %v is not longer than one and a half AckWaits (AckWait %v): the redelivery would take the claim over", c.LockTimeout, ackWait)
	}
	ev := s.NewEvent(c)
	f := s.Faults.Sink.HoldFault()
	if err := s.inject(f); err != nil {
		return unknownf("%v", err)
	}
	defer s.heal(f)
	published := ev.Deliver(Delivery{})
	if err := s.waitHeld(1); err != nil {
		return unknownf("the consumer never called its downstream for event %s: %v", ev.ID, err)
	}
	s.sleepUntil(time.Now().Add(hold)) // JetStream redelivers after each AckWait meanwhile
	held := len(s.Faults.Sink.Held())
	s.notef("%d downstream calls held after %v (AckWait %v)", held, hold, ackWait)
	if err := s.heal(f); err != nil {
		return unknownf("%v", err)
	}
	return check.ConcurrentRedelivery([]history.Attempt{published}, check.Eventually{}, s.settle(ev))
}
