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
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/history"
)

// This file holds what the fault properties of queue consumers share (lost-ack on a broker,
// crash-before-ack, crash-after-ack): asking the broker what it still holds of the consumer's
// messages, cutting the consumer's broker link, killing and restarting every instance, and
// recording in the history what the broker redelivered.

// brokerHeld is what a broker still holds of a queue consumer's messages.
type brokerHeld struct {
	// Ready are the messages waiting for a consumer: on RabbitMQ the queue's ready messages
	// (those a closed channel left unacknowledged among them), on JetStream those not delivered
	// yet.
	Ready int
	// Unacked are the messages delivered and not acknowledged yet (JetStream's ack pending,
	// also those due for redelivery after AckWait). RabbitMQ does not tell without its
	// management API: -1, unless no consumer is attached (then 0: a closed channel's
	// unacknowledged messages are ready again).
	Unacked int
	// Consumers are the consumers RabbitMQ counts on the queue (-1 on JetStream).
	Consumers int
}

// Total is every message the broker will deliver (again), or -1 when it cannot be told.
func (h brokerHeld) Total() int {
	if h.Unacked < 0 {
		return -1
	}
	return h.Ready + h.Unacked
}

// String says what the broker holds, such as "2 ready, 1 unacknowledged".
func (h brokerHeld) String() string {
	if h.Unacked < 0 {
		return fmt.Sprintf("%d ready (unacknowledged ones not told) with %d consumers", h.Ready, h.Consumers)
	}
	return fmt.Sprintf("%d ready, %d unacknowledged", h.Ready, h.Unacked)
}

// Bounds of the waits on a broker.
const (
	// brokerPoll is the pause between two questions to a broker.
	brokerPoll = 50 * time.Millisecond
	// brokerGone bounds the wait until RabbitMQ has noticed that cut or killed consumers are
	// gone.
	brokerGone = 5 * time.Second
	// brokerQuiet bounds the wait, before a broker fault, for the messages of earlier specs.
	brokerQuiet = 10 * time.Second
)

// brokerState asks the broker what it holds of c's messages: RabbitMQ through a passive
// declare of the queue, JetStream through the durable consumer's info.
func (s *S) brokerState(c *targets.Consumer) (brokerHeld, error) {
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	switch {
	case c.AMQP != nil:
		t, err := broker.NewAMQPTopology("state", broker.WithAMQPURL(c.AMQP.URL))
		if err != nil {
			return brokerHeld{}, err
		}
		t.Queue = c.AMQP.Queue
		st, err := t.State(ctx)
		if err != nil {
			return brokerHeld{}, err
		}
		h := brokerHeld{Ready: st.Ready, Unacked: -1, Consumers: st.Consumers}
		if st.Consumers == 0 {
			h.Unacked = 0
		}
		return h, nil
	case c.NATS != nil:
		t, err := broker.NewJetStreamTopology("state", broker.WithNATSURL(c.NATS.URL), broker.WithDurable(c.NATS.Durable))
		if err != nil {
			return brokerHeld{}, err
		}
		t.Stream = c.NATS.Stream
		st, err := t.ConsumerState(ctx)
		if err != nil {
			return brokerHeld{}, err
		}
		return brokerHeld{Ready: int(st.Pending), Unacked: st.AckPending, Consumers: -1}, nil
	}
	return brokerHeld{}, fmt.Errorf("consumer %s reads from no broker", c.Name)
}

// heldOnceGone returns what the broker holds of c's messages once the consumers it served
// are gone (cut off or killed): on RabbitMQ after it counts no consumer on the queue, when
// every message it still holds is ready again.
func (s *S) heldOnceGone(c *targets.Consumer) (brokerHeld, error) {
	deadline := time.Now().Add(brokerGone)
	for {
		h, err := s.brokerState(c)
		if err != nil || h.Consumers <= 0 {
			return h, err
		}
		if time.Now().After(deadline) || !s.SleepUntil(time.Now().Add(brokerPoll)) {
			return h, fmt.Errorf("RabbitMQ still counts %d consumers on queue %s %v after they were cut off", h.Consumers, c.AMQP.Queue, brokerGone)
		}
	}
}

// recordHeld asks the broker, once the consumers are gone, what it holds of c's messages, and
// records it in f (and in the evidence, with when: "after the kill").
func (s *S) recordHeld(c *targets.Consumer, f *check.BrokerFault, when string) {
	held, err := s.heldOnceGone(c)
	f.Held = held.Total()
	if err != nil {
		f.HeldErr = err.Error()
	} else {
		s.Notef("%s %s: %s", framework.BrokerTarget(c), when, held)
	}
}

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

// waitBrokerEmpty waits, at most d, until the broker holds none of c's messages: every
// message delivered and acknowledged. It returns the last state and whether it was empty (on
// RabbitMQ, which does not tell unacknowledged messages while consumers are attached, never
// "empty" then: nothing ready is all it can say).
func (s *S) waitBrokerEmpty(c *targets.Consumer, d time.Duration) (brokerHeld, bool, error) {
	deadline := time.Now().Add(d)
	for {
		h, err := s.brokerState(c)
		if err == nil && h.Ready == 0 && h.Unacked <= 0 {
			return h, h.Unacked == 0, nil
		}
		if time.Now().After(deadline) || !s.SleepUntil(time.Now().Add(brokerPoll)) {
			return h, false, err
		}
	}
}

// waitBrokerQuiet waits until the broker has delivered the messages of earlier specs, so that
// what it holds after a fault is this spec's; the error says what it still holds.
func (s *S) waitBrokerQuiet(c *targets.Consumer) error {
	h, _, err := s.waitBrokerEmpty(c, brokerQuiet)
	switch {
	case err != nil:
		return fmt.Errorf("cannot ask the broker what it holds: %v", err)
	case h.Ready > 0 || h.Unacked > 0:
		return fmt.Errorf("the broker still holds messages of earlier specs %v later (%s)", brokerQuiet, h)
	}
	return nil
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

// The action and kind of the history event that records a broker's redelivery.
const (
	actionObserve        = "observe"
	kindBrokerRedelivery = "broker-redelivery"
)

// noteRedelivery records in the history (and so on the report's timeline, beside the fault)
// that the broker redelivered the messages a fault left it holding.
func (s *S) noteRedelivery(c *targets.Consumer, held int, after string, now brokerHeld) {
	what := fmt.Sprintf("the broker redelivered the %d messages it held after %s (now %s)", held, after, now)
	s.History.AddEvent(history.Event{At: time.Now(), Action: actionObserve, Kind: kindBrokerRedelivery,
		Target: framework.BrokerTarget(c), Fault: what})
	s.Notef("%s: %s", framework.BrokerTarget(c), what)
}

// awaitRedelivery waits, at most d, until the broker has handed out again the held messages a
// fault left it, records the redelivery in the history, and reports whether the broker then
// held nothing at all (every redelivery acknowledged, where the broker tells).
func (s *S) awaitRedelivery(c *targets.Consumer, held int, after string, d time.Duration) bool {
	now, empty, err := s.waitBrokerEmpty(c, d)
	switch {
	case err != nil:
		s.Notef("%s: cannot ask the broker about the redelivery: %v", framework.BrokerTarget(c), err)
	case held > 0 && now.Ready == 0:
		s.noteRedelivery(c, held, after, now)
	case held > 0:
		s.Notef("%s: the broker still holds %s %v after %s", framework.BrokerTarget(c), now, d, after)
	}
	return empty
}

// brokerNeed is what a broker fault property needs of the target besides a queue consumer.
type brokerNeed int

// The needs of the broker fault properties.
const (
	// needLink: the lifecycle reaches the broker through {{.Broker}}, the proxy the harness cuts.
	needLink brokerNeed = iota
	// needSink: a downstream binding, held to keep the consumer in the middle of its effect.
	needSink
	// needCrash: instances to kill and restart, on a durable store, with a lock timeout the
	// run can wait out.
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
		case n == needCrash && c.LockTimeout+framework.CrashMargin > e.Settings.MaxWait:
			return fmt.Sprintf("the lock timeout %v plus %v is longer than --max-wait %v", c.LockTimeout, framework.CrashMargin, e.Settings.MaxWait)
		}
	}
	if c.NATS != nil && c.NATS.Durable == "" {
		return "nats.durable is not declared: the harness cannot ask JetStream what the consumer left unacknowledged"
	}
	return ""
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
