package consumer

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// crash-after-ack: a queue consumer SIGKILLed after it received a message and before its
// effect committed. The harness holds the downstream sink, so that the consumer stops in the
// middle of its effect, kills every instance, asks the broker what it still holds (with no
// consumer left, RabbitMQ has made every unacknowledged message ready again; JetStream counts
// it ack pending), restarts the instances and releases the sink.
//
// A consumer that acknowledges only after its effect has committed left the message with the
// broker, which redelivers it: the event MUST take effect exactly once. One that acknowledged
// first has lost it: the broker considers it delivered, and it never takes effect (a dropped
// event).
//
// Catches: ack-before-effect.
func init() {
	p := &Property{
		Name: "crash-after-ack",
		Must: `A queue consumer MUST NOT acknowledge a message before its effect has committed: SIGKILLed
between receiving a message and committing its effect, and restarted, it MUST still apply the event
exactly once (the broker redelivers what was not acknowledged). A message the broker considers
delivered that never takes effect is a dropped event.`,
		Catches:    []string{"ack-before-effect"},
		Needs:      []string{"consumers[].effects", "lifecycle (durable: true)", "downstream", "consumers[].lock_timeout", "nats.durable (nats)"},
		Labels:     []string{"fault:process", "fault:downstream"},
		Transports: []targets.Transport{targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			sp := spec(p, fmt.Sprintf("%s: every consumer SIGKILLed in the middle of an effect and restarted: the event still takes effect once", c.Name),
				func(s *S) check.Result { return s.crashAfterAck(c) })
			sp.Skip = brokerFaultSkip(e, c, needSink, needCrash)
			return sp
		})
	}
	register(p)
}

// crashAfterAck holds the downstream, publishes one event, kills every instance once the
// consumer is in the middle of its effect, asks the broker what it holds, restarts, releases,
// and waits for the effect as long as a takeover of the dead delivery's claim may take.
func (s *S) crashAfterAck(c *targets.Consumer) check.Result {
	h, r, done := s.publishHeld(c, check.CrashAfterAck)
	if h.hold != nil {
		defer s.healLeft(h.hold)
	}
	if done {
		return r
	}
	ev, f, hold := h.ev, h.f, h.hold
	kills := s.killAll()
	defer s.healLeft(kills...)
	if err := s.injectAll(kills); err != nil {
		return check.Unknownf("%v", err)
	}
	s.recordHeld(c, &f, "after the kill")
	if err := s.healAll(kills); err != nil {
		return check.Unknownf("cannot restart the consumer: %v", err)
	}
	if err := s.Heal(hold); err != nil {
		return check.Unknownf("%v", err)
	}
	// The redelivery waits for the dead delivery's claim to lapse (the lock timeout) before it
	// takes effect, and for the broker's redelivery clock.
	if after := ev.waitEffects(1, s.claimWait(c)); after.Err != "" || after.N == 0 {
		f.Events[0].After = after
	} else {
		f.Events[0].After = s.settle(ev)
	}
	f.Settled = s.awaitRedelivery(c, f.Held, "the kill", false)
	if after := f.Events[0].After; !f.Settled && after.Err == "" && after.N == 0 {
		f.Settled = s.settledOnceGone(c)
	}
	return check.CrashAfterAck(f)
}
