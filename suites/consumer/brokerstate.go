package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/history"
)

// This file reads what a broker holds of a queue consumer's messages, and says it as the broker
// shows it: "redelivered" only when the broker shows a redelivery (JetStream counts
// num_redelivered; RabbitMQ hands out again, flagged redelivered, the messages a closed channel
// gave back), otherwise the counts it shows.

// brokerHeld is what a broker still holds of a queue consumer's messages.
type brokerHeld struct {
	// Ready are the messages waiting for a consumer: on RabbitMQ the queue's ready messages
	// (those a closed channel left unacknowledged among them), on JetStream those not delivered
	// yet (num_pending).
	Ready int
	// Unacked are the messages delivered and not acknowledged yet (JetStream's num_ack_pending,
	// also those due for redelivery after AckWait). RabbitMQ does not tell without its
	// management API: -1, unless no consumer is attached (then 0: a closed channel's
	// unacknowledged messages are ready again).
	Unacked int
	// Redelivered are JetStream's messages delivered more than once and not acknowledged yet
	// (num_redelivered); -1 on RabbitMQ, which flags each redelivery instead of counting them.
	Redelivered int
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

// String says what the broker shows, such as "0 pending, 4 ack pending, 0 redelivered" on
// JetStream or "2 ready, 0 unacknowledged, no consumer" on RabbitMQ.
func (h brokerHeld) String() string {
	if h.Consumers < 0 {
		return fmt.Sprintf("%d pending, %d ack pending, %d redelivered", h.Ready, h.Unacked, h.Redelivered)
	}
	if h.Unacked < 0 {
		return fmt.Sprintf("%d ready with %d consumers (unacknowledged ones not told while consumers are attached)", h.Ready, h.Consumers)
	}
	return fmt.Sprintf("%d ready, %d unacknowledged, no consumer", h.Ready, h.Unacked)
}

// Bounds of the waits on a broker that are not redeliveries.
const (
	// brokerPoll is the pause between two questions to a broker.
	brokerPoll = 50 * time.Millisecond
	// brokerGone bounds the wait until RabbitMQ has noticed that cut or killed consumers are
	// gone (it notices a closed connection at once; a loaded machine delays it).
	brokerGone = 5 * time.Second
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
		h := brokerHeld{Ready: st.Ready, Unacked: -1, Redelivered: -1, Consumers: st.Consumers}
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
		return brokerHeld{Ready: int(st.Pending), Unacked: st.AckPending, Redelivered: st.Redelivered, Consumers: -1}, nil
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

// waitBrokerEmpty waits, at most d, until the broker holds none of c's messages: every
// message delivered and acknowledged. It returns the last state and whether it was empty (on
// RabbitMQ, which does not tell unacknowledged messages while consumers are attached, never
// "empty" then: nothing ready is all it can say).
func (s *S) waitBrokerEmpty(c *targets.Consumer, d time.Duration) (brokerHeld, bool, error) {
	deadline := time.Now().Add(d)
	defer s.Waiting(fmt.Sprintf("%s to drain (every message acknowledged; the redelivery clock allows %s)", framework.BrokerTarget(c), framework.Seconds(d)), deadline)()
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

// The action and kind of the history event that records a broker's redelivery.
const (
	actionObserve        = "observe"
	kindBrokerRedelivery = "broker-redelivery"
)

// redelivered says what the broker shows of the held messages a fault left it: a redelivery
// (and whether it says so), or what it shows instead.
func redelivered(held int, now brokerHeld, sawRedelivery bool) (string, bool) {
	switch {
	case now.Ready == 0 && now.Unacked == 0: // JetStream, or RabbitMQ with no consumer left
		return fmt.Sprintf("the broker redelivered the %d messages it held and every one was acknowledged (now %s)", held, now), true
	case now.Consumers < 0 && (now.Redelivered > 0 || sawRedelivery):
		return fmt.Sprintf("the broker redelivered messages of the %d it held, not all acknowledged yet (now %s)", held, now), true
	case now.Consumers < 0:
		return fmt.Sprintf("the broker has not redelivered the %d messages it held (now %s)", held, now), false
	case now.Ready == 0 && now.Consumers > 0:
		return fmt.Sprintf("the broker redelivered the %d messages it held: it handed them out again, flagged redelivered (now %s)", held, now), true
	}
	return fmt.Sprintf("the broker has not handed out again the %d messages it held (now %s)", held, now), false
}

// noteRedelivery records in the history (and so on the report's timeline, beside the fault)
// what the broker shows of the messages a fault left it holding, once it shows a redelivery.
func (s *S) noteRedelivery(c *targets.Consumer, what string) {
	s.History.AddEvent(history.Event{At: time.Now(), Action: actionObserve, Kind: kindBrokerRedelivery,
		Target: framework.BrokerTarget(c), Fault: what})
	s.Notef("%s: %s", framework.BrokerTarget(c), what)
}

// awaitRedelivery waits, at most the redelivery clock's wait (claim: after a killed handling's
// claim), until the broker holds nothing of c's messages after a fault left it held of them,
// records in the history what the broker then shows of their redelivery, and reports whether
// it held nothing at all (every redelivery acknowledged, where the broker tells).
func (s *S) awaitRedelivery(c *targets.Consumer, held int, after string, claim bool) bool {
	deadline := time.Now().Add(s.RedeliveryWait(c, claim))
	defer s.Waiting(fmt.Sprintf("%s to redeliver the %d messages it held (the redelivery clock allows %s)", framework.BrokerTarget(c), held, framework.Seconds(s.RedeliveryWait(c, claim))), deadline)()
	seen := false
	for {
		now, err := s.brokerState(c)
		switch {
		case err != nil:
			s.Notef("%s: cannot ask the broker about the redelivery: %v", framework.BrokerTarget(c), err)
			return false
		case now.Redelivered > 0:
			seen = true
		}
		empty := now.Ready == 0 && now.Unacked <= 0
		if empty || time.Now().After(deadline) || !s.SleepUntil(time.Now().Add(brokerPoll)) {
			if held > 0 {
				what, shown := redelivered(held, now, seen)
				what = fmt.Sprintf("after %s, %s; its redelivery clock allows %s", after, what, s.Redelivery(c).Explain(claim))
				if shown {
					s.noteRedelivery(c, what)
				} else {
					s.Notef("%s: %s", framework.BrokerTarget(c), what)
				}
			}
			return empty && now.Unacked == 0
		}
	}
}
