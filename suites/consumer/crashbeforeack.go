package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// crash-before-ack: queue consumers SIGKILLed holding messages they have applied and not yet
// acknowledged. The harness silences the consumers' broker link on its way to the broker (a
// timeout toxic upstream: deliveries still arrive, but nothing the consumers send, their acks
// included, reaches the broker), publishes several events, waits until their effects show, kills
// every instance (the broker sees their connections close, with every message unacknowledged),
// heals the link and restarts the instances: the broker redelivers every message it held, after
// its redelivery clock (JetStream's AckWait, at once on RabbitMQ). The harness waits for the
// effects before the kill until those that can land did: a consumer that takes one message at a
// time (RabbitMQ prefetch 1, a synchronous JetStream handler) applies one, whose ack is lost,
// and gets no other; the evidence says how many took effect.
//
// The acks are dropped rather than delayed: Toxiproxy delivers what a latency toxic holds even
// after the client died, and flushes it at once when another toxic is added, so a late ack could
// still reach the broker after the kill.
//
// The consumer MUST leave exactly one effect per event: a redelivered message whose effect was
// applied is a duplicate to acknowledge, not an event to apply again.
//
// Catches: no-dedupe (each redelivery takes effect again).
func init() {
	p := &Property{
		Name: "crash-before-ack",
		Must: `A queue consumer SIGKILLed after applying messages and before its acknowledgements reached
the broker MUST, once restarted and redelivered those messages, leave exactly one effect per event:
a redelivery of an applied event is a duplicate.`,
		Catches:    []string{"no-dedupe"},
		Needs:      []string{"consumers[].effects", "lifecycle (durable: true) reaching the broker through {{.Broker}}", "consumers[].lock_timeout", "nats.durable (nats)"},
		Labels:     []string{"fault:process", "fault:network"},
		Transports: []targets.Transport{targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			sp := spec(p, fmt.Sprintf("%s: %d events published with their acks dropped, every consumer SIGKILLed once those that could took effect, and restarted: the broker redelivers them and each takes effect once",
				c.Name, crashBeforeAckEvents), func(s *S) check.Result { return s.crashBeforeAck(c) })
			sp.Skip = brokerFaultSkip(e, c, needLink, needCrash)
			return sp
		})
	}
	register(p)
}

// crashBeforeAckEvents is how many events are published before the kill.
const crashBeforeAckEvents = 4

// crashBeforeAck publishes events while nothing the consumers send reaches the broker, waits
// until those that can take effect did (awaitEffectsSilenced), kills every instance, heals and
// restarts, and counts the effects once the broker has redelivered what it held.
func (s *S) crashBeforeAck(c *targets.Consumer) check.Result {
	silence, err := s.silenceBrokerLink(c)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	defer s.healLeft(silence)
	start := time.Now()
	evs := make([]*Event, crashBeforeAckEvents)
	f := check.BrokerFault{Events: make([]check.BrokerEvent, len(evs))}
	for i := range evs {
		evs[i] = s.NewEvent(c)
		f.Events[i].Publish = evs[i].Deliver(Delivery{})
	}
	before := s.awaitEffectsSilenced(c, evs, start)
	for i, n := range before.Counts {
		f.Events[i].Before = n
	}
	f.Waited = before.Why
	kills := s.killAll()
	defer s.healLeft(kills...)
	if err := s.injectAll(kills); err != nil {
		return check.Unknownf("%v", err)
	}
	s.Notef("every instance killed %v after the first publication, their acks dropped on the way: %d of %d events had taken effect (%s)",
		time.Since(start).Round(time.Millisecond), before.Landed, len(evs), before.Why)
	s.recordHeld(c, &f, "after the kill")
	if err := s.Heal(silence); err != nil {
		return check.Unknownf("%v", err)
	}
	if err := s.healAll(kills); err != nil {
		return check.Unknownf("cannot restart the consumer: %v", err)
	}
	f.Settled = s.awaitRedelivery(c, f.Held, "the kill", true)
	for i, n := range s.settleAll(evs) {
		f.Events[i].After = n
	}
	return check.CrashBeforeAck(f)
}
