package consumer

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// This file holds what the fault properties of queue consumers share (lost-ack on a broker,
// crash-before-ack, crash-after-ack): asking the broker what it still holds of the consumer's
// messages, cutting the consumer's broker link, killing and restarting every instance, and
// recording in the history what the broker redelivered.

// heldEvent is one event published to a queue consumer whose downstream the harness holds:
// the consumer is in the middle of its effect once publishHeld returns.
type heldEvent struct {
	ev   *Event
	f    check.BrokerFault
	hold faults.Fault
}

// publishHeld waits until the broker holds nothing of earlier specs, holds the downstream,
// publishes one event and waits until the consumer has called its downstream for it. When the
// spec cannot go on, done is true and r is its result: an unknown, or judge's on a publication
// the broker did not confirm. The caller heals h.hold (healLeft) when it is set.
func (s *S) publishHeld(c *targets.Consumer, judge func(check.BrokerFault) check.Result) (h heldEvent, r check.Result, done bool) {
	if err := s.waitBrokerQuiet(c); err != nil {
		return h, check.Unknownf("%v", err), true
	}
	hold := s.Faults.Sink.HoldFault()
	if err := s.Inject(hold); err != nil {
		return h, check.Unknownf("%v", err), true
	}
	h.hold, h.ev = hold, s.NewEvent(c)
	h.f = check.BrokerFault{Events: []check.BrokerEvent{{Publish: h.ev.Deliver(Delivery{})}}}
	if !allPublished(h.f.Events[0].Publish) {
		return h, judge(h.f), true
	}
	if err := s.waitHeldEvent(h.ev); err != nil {
		return h, check.Unknownf("the consumer never called its downstream for event %s: %v", h.ev.ID, err), true
	}
	return h, check.Result{}, false
}

// settledOnceGone tells, on RabbitMQ, which does not count unacknowledged messages while
// consumers are attached, whether the broker holds nothing of c's messages: it kills every
// instance again, asks once the broker counts no consumer (a dead consumer's unacknowledged
// messages are then ready), and restarts them. Elsewhere, or when it cannot be told, false.
func (s *S) settledOnceGone(c *targets.Consumer) bool {
	if c.AMQP == nil || s.Faults.Cluster == nil {
		return false
	}
	kills := s.killAll()
	defer s.healLeft(kills...)
	if err := s.injectAll(kills); err != nil {
		s.Notef("%s: cannot kill the consumers to count what the broker holds: %v", framework.BrokerTarget(c), err)
		return false
	}
	h, err := s.heldOnceGone(c)
	if err != nil {
		s.Notef("%s: %v", framework.BrokerTarget(c), err)
		return false
	}
	s.Notef("%s once the consumers were killed again to count what it holds: %s", framework.BrokerTarget(c), h)
	if err := s.healAll(kills); err != nil {
		s.Notef("%s: cannot restart the consumers: %v", framework.BrokerTarget(c), err)
	}
	return h.Total() == 0
}

// cutBrokerLink returns the fault that cuts c's link to its broker: the proxy in front of the
// broker drops everything the consumer sends from then on (an ack on its way is lost) and closes
// each connection a millisecond after it fell silent, so that the broker sees the consumer gone;
// a reconnection is accepted and closed at once, until healed. The proxy keeps listening: taking
// it down (Proxy.Disable) frees its port, which any outgoing connection on the machine may take
// as its own meanwhile, and the proxy could not listen again.
func (s *S) cutBrokerLink(c *targets.Consumer) faults.Fault {
	p := s.Faults.BrokerLink(c)
	drop := p.Timeout(time.Millisecond, faults.Upstream)
	return faults.Func(faults.KindCutBrokerLink, p.Name(),
		p.Name()+": cut the broker link (what the consumer sends dropped, its connections closed)", drop.Inject, drop.Heal)
}

// killAll returns the faults that SIGKILL every instance (healed by restarts).
func (s *S) killAll() []faults.Fault {
	kills := make([]faults.Fault, s.Faults.Cluster.Size())
	for i := range kills {
		kills[i] = s.Faults.Cluster.KillFault(i)
	}
	return kills
}

// injectAll injects the faults in order; the first error stops it.
func (s *S) injectAll(fs []faults.Fault) error {
	for _, f := range fs {
		if err := s.Inject(f); err != nil {
			return err
		}
	}
	return nil
}

// healAll heals the faults in order and returns every error. Healing kills restarts the
// instances; the observers' connections to the dead processes are dropped.
func (s *S) healAll(fs []faults.Fault) error {
	var errs []error
	for _, f := range fs {
		errs = append(errs, s.Heal(f))
	}
	s.Observer.CloseIdleConnections()
	return errors.Join(errs...)
}

// silenceBrokerLink waits until the broker holds nothing of the consumer's, then silences the
// consumer's broker link on its way to the broker: deliveries still arrive, acknowledgements are
// lost. The caller heals the fault it returns.
func (s *S) silenceBrokerLink(c *targets.Consumer) (faults.Fault, error) {
	if err := s.waitBrokerQuiet(c); err != nil {
		return nil, err
	}
	silence := s.Faults.BrokerLink(c).Timeout(0, faults.Upstream)
	if err := s.Inject(silence); err != nil {
		return nil, err
	}
	return silence, nil
}

// healLeft heals, the latest first, those of fs that are still injected: the clean-up of a
// spec that returned early, deferred without doubling the heals of one that did not on the
// report's timeline.
func (s *S) healLeft(fs ...faults.Fault) {
	left := s.Faults.Nemesis.Injected()
	for _, f := range slices.Backward(fs) {
		if slices.ContainsFunc(left, func(g faults.Fault) bool { return sameFault(f, g) }) {
			s.Heal(f)
		}
	}
	s.Observer.CloseIdleConnections()
}

// sameFault reports whether a and b are the same fault value (as the nemesis tells them apart).
func sameFault(a, b faults.Fault) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// brokerNeed is what a broker fault property needs of the target besides a queue consumer.
type brokerNeed int

// The needs of the broker fault properties.
const (
	// needLink: the lifecycle reaches the broker through {{.Broker}}, the proxy the harness cuts.
	needLink brokerNeed = iota
	// needSink: a downstream binding, held to keep the consumer in the middle of its effect.
	needSink
	// needCrash: instances to kill and restart, on a durable store, with a lock timeout (the
	// redelivery after a kill waits it out within --max-redelivery-wait).
	needCrash
)

// brokerFaultSkip says why a broker fault property cannot run on c, or "". Every one asks the
// broker what it holds of c's messages, which on JetStream takes the durable consumer's name.
func brokerFaultSkip(e *Env, c *targets.Consumer, needs ...brokerNeed) string {
	for _, n := range needs {
		switch {
		case n == needLink && e.Faults.BrokerLink(c) == nil:
			return "the lifecycle does not reach the broker through {{.Broker}}: the harness cannot cut the consumer's broker link"
		case n == needSink && e.Faults.Sink == nil:
			return "the target declares no downstream binding: nothing can hold the consumer in the middle of its effect (crash-under-delivery kills it in the middle of its handlings black-box)"
		case n == needCrash && e.Faults.Cluster == nil:
			return "the target declares no lifecycle: the harness cannot kill and restart the consumer"
		case n == needCrash && !e.Target.Lifecycle.Durable:
			return "the target's store is not durable (lifecycle.durable is false): a killed consumer loses its effects"
		case n == needCrash && c.LockTimeout <= 0:
			return "the consumer declares no lock_timeout: how long a killed delivery's claim holds the event cannot be told"
		}
	}
	if c.NATS != nil && c.NATS.Durable == "" {
		return "nats.durable is not declared: the harness cannot ask JetStream what the consumer left unacknowledged"
	}
	// Each rests on the broker's redelivery; after a kill, of what a dead handling claimed.
	return e.RedeliverySkip(c, slices.Contains(needs, needCrash))
}

// waitHeldEvent waits until the sink holds the downstream call of ev: its consumer is in the
// middle of its effect.
func (s *S) waitHeldEvent(ev *Event) error {
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	for n := 1; ; n++ {
		calls, err := s.Faults.Sink.WaitHeld(ctx, n)
		if err != nil {
			return err
		}
		for _, call := range calls {
			if call.Ref == ev.ID {
				return nil
			}
		}
	}
}

// allPublished reports whether the broker confirmed every publication.
func allPublished(as ...history.Attempt) bool {
	for _, a := range as {
		if a.Outcome != history.OK {
			return false
		}
	}
	return true
}

// waitBrokerQuiet waits until the broker has delivered the messages of earlier specs, so that
// what it holds after a fault is this spec's: at most the redelivery clock's wait after a claim
// (an earlier spec may have left a message unacknowledged, or claimed by a handling it killed).
// The error says what it still holds.
func (s *S) waitBrokerQuiet(c *targets.Consumer) error {
	d := s.RedeliveryWait(c, true)
	h, _, err := s.waitBrokerEmpty(c, d)
	switch {
	case err != nil:
		return fmt.Errorf("cannot ask the broker what it holds: %v", err)
	case h.Ready > 0 || h.Unacked > 0:
		return fmt.Errorf("the broker still holds messages of earlier specs %v later (%s; the redelivery clock allows %s)", d, h, s.Redelivery(c).Explain(true))
	}
	return nil
}

// effectsIdleMin is the shortest pause without a new effect after which awaitEffectsSilenced
// stops: twice the time the first effect took to land, at least this.
const effectsIdleMin = 500 * time.Millisecond

// silencedEffects is what took effect of events published while the consumer's acks were
// dropped, when the harness stopped waiting.
type silencedEffects struct {
	// Counts are each event's effects then.
	Counts []check.Count
	// Landed counts the events that took effect.
	Landed int
	// Why says why the wait stopped.
	Why string
}

// awaitEffectsSilenced polls the effects of evs, published from start while c's broker link is
// silenced on its way to the broker (deliveries arrive, acknowledgements are lost), until every
// one took effect, or none more for an idle interval (twice the time the first one took, at least
// effectsIdleMin; a consumer that takes one message at a time gets no other while its ack is
// lost), or the broker shows that the silence is over: JetStream counts a redelivery (its AckWait
// passed; it never waits past the AckWait from start), RabbitMQ counts fewer consumers (it closed
// the silent connections after their missed heartbeats). Nothing landed: at most the settle wait.
func (s *S) awaitEffectsSilenced(c *targets.Consumer, evs []*Event, start time.Time) silencedEffects {
	out := silencedEffects{Counts: make([]check.Count, len(evs))}
	clock := s.Redelivery(c)
	deadline := start.Add(s.settleWait(c))
	if c.NATS != nil {
		deadline = start.Add(min(clock.Step, s.settleWait(c)))
	}
	consumers := -1
	var first, last time.Time
	for {
		for i, ev := range evs {
			if out.Counts[i].N == 0 || out.Counts[i].Err != "" {
				out.Counts[i] = ev.Effects()
			}
		}
		landed := 0
		for _, n := range out.Counts {
			if n.Err == "" && n.N > 0 {
				landed++
			}
		}
		now := time.Now()
		if landed > out.Landed {
			if out.Landed == 0 {
				first = now
			}
			out.Landed, last = landed, now
		}
		if out.Landed == len(evs) { // the kill comes at once, before the broker's clock runs out
			out.Why = fmt.Sprintf("all took effect within %v", last.Sub(start).Round(time.Millisecond))
			return out
		}
		held, err := s.brokerState(c)
		if consumers < 0 && err == nil {
			consumers = held.Consumers
		}
		idle := max(effectsIdleMin, 2*first.Sub(start))
		switch {
		case err == nil && held.Redelivered > 0:
			out.Why = fmt.Sprintf("JetStream redelivered while the acks were dropped (its AckWait %v passed) after %v", clock.Step, now.Sub(start).Round(time.Millisecond))
		case err == nil && held.Consumers >= 0 && held.Consumers < consumers:
			out.Why = fmt.Sprintf("RabbitMQ counted %d consumers instead of %d after %v: it closed the silent links (missed heartbeats)", held.Consumers, consumers, now.Sub(start).Round(time.Millisecond))
		case out.Landed > 0 && now.Sub(last) >= idle:
			out.Why = fmt.Sprintf("no more took effect for %v after the last one, %v after the first publication (the consumer may take one message at a time: the next waits for an ack the broker never gets)",
				idle.Round(time.Millisecond), last.Sub(start).Round(time.Millisecond))
		case now.After(deadline):
			out.Why = fmt.Sprintf("%v passed since the first publication", now.Sub(start).Round(time.Millisecond))
		case !s.SleepUntil(now.Add(brokerPoll)):
			out.Why = "interrupted"
		default:
			continue
		}
		return out
	}
}
