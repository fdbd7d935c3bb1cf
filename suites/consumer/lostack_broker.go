package consumer

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// lost-ack on a broker (amqp, nats): the consumer's link to its broker is cut after it
// received a message and before its acknowledgement arrived. With a downstream sink the harness
// holds it, so that the consumer is in the middle of its effect, cuts the broker link (the proxy
// drops what the consumer sends and closes its connections), releases the sink (the consumer
// commits its effect and acknowledges on a dead link: the ack is lost), checks that the broker
// still holds the message, and heals the link: the consumer reconnects and the broker
// redelivers. Without one (lostAckSilenced) the link is silenced on its way to the broker
// before the publication, so that the ack of the effect is lost, then cut and healed.
//
// The consumer MUST apply the event exactly once: the redelivery is a duplicate to acknowledge.
//
// Catches: no-dedupe (the redelivery takes effect again).
//
// The lost-ack property (lostack.go) runs it for its amqp and nats consumers. Its MUST:
// when a queue consumer's link to its broker is cut after it received a message and before its
// acknowledgement reached the broker, the broker redelivers the message once the consumer has
// reconnected, and the event MUST take effect exactly once.

// lostAckBroker cuts c's broker link while its consumer is in the middle of an event's effect,
// lets the effect commit on the dead link, heals, and counts the effects once the broker has
// redelivered the message.
func (s *S) lostAckBroker(c *targets.Consumer) check.Result {
	if skip := brokerFaultSkip(s.Env, c, needLink); skip != "" {
		return check.Skipf("%s", skip)
	}
	if s.Faults.Sink == nil {
		return s.lostAckSilenced(c)
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
	if err := s.Inject(cut); err != nil {
		return check.Unknownf("%v", err)
	}
	if err := s.Heal(hold); err != nil { // the effect commits; its ack goes to a dead link
		return check.Unknownf("%v", err)
	}
	f.Events[0].Before = ev.waitEffects(1, s.settleWait(c))
	s.recordHeld(c, &f, "with the link cut, after the effect")
	if err := s.Heal(cut); err != nil {
		return check.Unknownf("%v", err)
	}
	f.Settled = s.awaitRedelivery(c, f.Held, "the cut", false)
	f.Events[0].After = s.settle(ev)
	return check.BrokerLostAck(f)
}

// lostAckSilenced is lost-ack on a broker for a consumer that calls nothing of the harness's: the
// consumer's broker link is silenced on its way to the broker (deliveries still arrive; its ack
// cannot), the event is published and takes effect, then the link is cut (its connections
// closed: the broker sees the consumer gone with the message unacknowledged) and healed: the
// consumer reconnects and the broker redelivers.
func (s *S) lostAckSilenced(c *targets.Consumer) check.Result {
	silence, err := s.silenceBrokerLink(c)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	defer s.healLeft(silence)
	ev := s.NewEvent(c)
	f := check.BrokerFault{Events: []check.BrokerEvent{{Publish: ev.Deliver(Delivery{})}}}
	if !allPublished(f.Events[0].Publish) {
		return check.BrokerLostAck(f)
	}
	before := s.awaitEffectsSilenced(c, []*Event{ev}, f.Events[0].Publish.Start) // its ack, on the silenced link, is lost
	f.Events[0].Before, f.Waited = before.Counts[0], before.Why
	cut := s.cutBrokerLink(c)
	defer s.healLeft(cut)
	if err := s.Inject(cut); err != nil {
		return check.Unknownf("%v", err)
	}
	s.recordHeld(c, &f, "with the link cut, after the effect")
	if err := s.Heal(silence); err != nil {
		return check.Unknownf("%v", err)
	}
	if err := s.Heal(cut); err != nil {
		return check.Unknownf("%v", err)
	}
	f.Settled = s.awaitRedelivery(c, f.Held, "the cut", false)
	f.Events[0].After = s.settle(ev)
	return check.BrokerLostAck(f)
}
