package suites

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// lost-ack on a broker (amqp, nats): the consumer's link to its broker is cut after it
// received a message and before its acknowledgement arrived. The harness holds the downstream
// sink, so that the consumer is in the middle of its effect, cuts the broker link (the proxy
// drops what the consumer sends and closes its connections), releases the sink (the consumer
// commits its effect and acknowledges on a dead link: the ack is lost), checks that the broker
// still holds the message, and heals the link: the consumer reconnects and the broker
// redelivers.
//
// The consumer MUST apply the event exactly once: the redelivery is a duplicate to acknowledge.
//
// Catches: no-dedupe (the redelivery takes effect again).
//
// The lost-ack property (suites/lostack.go) runs it for its amqp and nats consumers. Its MUST:
// when a queue consumer's link to its broker is cut after it received a message and before its
// acknowledgement reached the broker, the broker redelivers the message once the consumer has
// reconnected, and the event MUST take effect exactly once.

// lostAckBroker cuts c's broker link while its consumer is in the middle of an event's effect,
// lets the effect commit on the dead link, heals, and counts the effects once the broker has
// redelivered the message.
func (s *S) lostAckBroker(c *targets.Consumer) check.Result {
	if skip := brokerFaultSkip(s.Env, c, needLink, needSink); skip != "" {
		return check.Skipf("%s", skip)
	}
	h, r, done := s.publishHeld(c, check.BrokerLostAck)
	if h.hold != nil {
		defer s.healLeft(h.hold)
	}
	if done {
		return r
	}
	ev, f, hold := h.ev, h.f, h.hold
	cut := s.cutBrokerLink(c)
	defer s.healLeft(cut)
	if err := s.inject(cut); err != nil {
		return unknownf("%v", err)
	}
	if err := s.heal(hold); err != nil { // the effect commits; its ack goes to a dead link
		return unknownf("%v", err)
	}
	f.Events[0].Before = ev.waitEffects(1, brokerSettle)
	s.recordHeld(c, &f, "with the link cut, after the effect")
	if err := s.heal(cut); err != nil {
		return unknownf("%v", err)
	}
	f.Settled = s.awaitRedelivery(c, f.Held, "the cut", brokerRedelivery)
	f.Events[0].After = s.settle(ev)
	return check.BrokerLostAck(f)
}
