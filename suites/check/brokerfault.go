package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// BrokerEvent is one event of a broker fault property (lost-ack on a broker, crash-before-ack,
// crash-after-ack): its publication, and its effects counted before the fault (Before; not
// taken when the property does not count then) and at the end (After).
type BrokerEvent struct {
	Publish       history.Attempt
	Before, After Count
}

// BrokerFault is what a broker fault property observed: its events, what the broker still held
// of the consumer's messages once the fault had cut the consumers off (the messages it would
// deliver again), and whether it held nothing at the end.
type BrokerFault struct {
	Events []BrokerEvent
	// Held counts the messages the broker held, ready or unacknowledged, right after the fault;
	// HeldErr says why it could not be told (Held is then not read).
	Held    int
	HeldErr string
	// Settled says the broker held nothing at the end: every message delivered and
	// acknowledged. Not told (false) where the broker cannot say, such as RabbitMQ's
	// unacknowledged messages while consumers are attached.
	Settled bool
	// Waited says why the harness stopped waiting for the events' effects before the fault
	// ("" = not told).
	Waited string
}

// BrokerLostAck judges an event whose consumer lost its broker link after it received the
// message and before its acknowledgement arrived, and reconnected (lost-ack on amqp and nats):
// the broker MUST have kept the message (the ack was lost) and redelivered it, and the event
// MUST take effect exactly once.
func BrokerLostAck(f BrokerFault) Result {
	return redeliveredOnce(f, "the broker link was cut", true)
}

// CrashBeforeAck judges events whose consumers were SIGKILLed after applying them and before
// their acknowledgements reached the broker, and restarted (crash-before-ack): the broker MUST
// have held their messages and redelivered them, and each event MUST take effect exactly once.
// A redelivery that takes effect again is a duplicate record.
func CrashBeforeAck(f BrokerFault) Result {
	return redeliveredOnce(f, "the consumers were killed", false)
}

// redeliveredOnce judges events whose messages the broker held after a fault and redelivered:
// exactly one effect each. A fault after which the broker held nothing, or that came before any
// event had taken effect, tested nothing: unknown, unless an event took effect twice anyway.
// eachBefore says every event must have taken effect before the fault.
func redeliveredOnce(f BrokerFault, fault string, eachBefore bool) Result {
	j := newJudge(consumerProfile)
	if len(f.Events) == 0 {
		return Unknownf("no event was published")
	}
	applied := 0
	for i, ev := range f.Events {
		ok := j.acked(ev.Publish, fmt.Sprintf("the publication of event %d of %d", i+1, len(f.Events)))
		switch {
		case !ok || !ev.Before.known():
		case ev.Before.N > 0:
			applied++
		case eachBefore:
			j.unknownf("event %s had not taken effect when %s: the fault may have come before the consumer received it", ev.Publish.Key, fault)
		}
		j.eventEffects(ev.After, 1, ok && f.Settled, ev.Publish.Seq)
	}
	switch {
	case len(j.r.Anomalies) > 0:
	case f.HeldErr != "":
		j.unknownf("what the broker held after %s could not be told: %s", fault, f.HeldErr)
	case f.Held == 0:
		j.unknownf("the broker held no message after %s: every acknowledgement had reached it, so nothing was redelivered", fault)
	case applied == 0 && !eachBefore:
		j.unknownf("no event had taken effect when %s%s: the broker's redeliveries were first deliveries", fault, waited(f.Waited))
	}
	if !eachBefore {
		j.r.Observef("%d of %d events had taken effect when %s%s", applied, len(f.Events), fault, waited(f.Waited))
	}
	return j.result()
}

// CrashAfterAck judges an event whose consumer was SIGKILLed in the middle of its effect
// (after receiving the message, before committing the effect) and restarted (crash-after-ack).
// The event MUST take effect exactly once: a consumer that acknowledges only after its effect
// left the message with the broker, which redelivers it. A message the broker considers
// delivered (nothing ready or unacknowledged once the consumers were gone) that never took
// effect is a dropped event: it was acknowledged before its effect committed.
func CrashAfterAck(f BrokerFault) Result {
	j := newJudge(consumerProfile)
	if len(f.Events) != 1 {
		return Unknownf("crash-after-ack judges one event, got %d", len(f.Events))
	}
	ev := f.Events[0]
	if !j.acked(ev.Publish, "the publication of the event") || !j.counted(ev.After) {
		return j.result()
	}
	key, seq := ev.Publish.Key, ev.Publish.Seq
	switch {
	case ev.After.N != 0:
		j.eventEffects(ev.After, 1, true, seq)
	case f.HeldErr != "":
		j.unknownf("event %s took no effect, and what the broker held after the kill could not be told: %s", key, f.HeldErr)
	case f.Held == 0:
		j.add(countAnomaly(reports.KindDroppedEvent, ev.After, fmt.Sprintf(
			"event %s never took effect, and the broker considers its message delivered (nothing ready or unacknowledged once its consumers were killed): it was acknowledged before its effect committed, and the kill lost it",
			key), seq))
	case f.Settled:
		j.add(countAnomaly(reports.KindDroppedEvent, ev.After, fmt.Sprintf(
			"event %s never took effect, although the broker redelivered its message and it was acknowledged: the redelivery was taken for a duplicate", key), seq))
	default:
		j.unknownf("event %s has not taken effect yet and the broker still holds messages (%d after the kill): it may yet be applied", key, f.Held)
	}
	return j.result()
}

// waited is why the harness stopped waiting for effects before a fault, in parentheses.
func waited(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}
