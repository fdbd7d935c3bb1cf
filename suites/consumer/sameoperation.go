package consumer

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// same-operation-new-message: two messages with different event ids naming one business
// operation, with the same content otherwise (object, version, time, data), as a relay that
// lost its state publishes an approved payment again under a new id, or a person replays it:
// delivered one after the other, and, for another operation, released together (held at the
// sink where one is declared, as concurrent-redelivery holds its copies).
//
// A consumer that declares operation_dedupe MUST acknowledge both and apply the operation
// exactly once: it deduplicates on the operation the event names (consumers[].event.operation),
// not on the message's id. Without operation_dedupe nothing is promised: the specs are skipped,
// saying how many times the operation took effect.
//
// Catches: message-id-dedupe (the second message takes effect again).
func init() {
	p := &Property{
		Name: "same-operation-new-message",
		Must: `Two messages with different event ids naming one business operation (consumers[].event.operation)
and the same content otherwise (a relay's re-publication, a replay under a new id), delivered one after
the other and, for another operation, released together, MUST both be acknowledged and MUST apply the
operation exactly once where the consumer declares operation_dedupe. Without operation_dedupe nothing is
promised: the specs are skipped, with how many times the operation took effect.`,
		Catches: []string{"message-id-dedupe"},
		Needs: []string{"consumers[].event.operation or event.operations (where an event names its business operation)",
			"consumers[].effects asked with {{.Operation}}", "consumers[].operation_dedupe: true (otherwise skipped, with the counts)"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
		SpecLabels: []string{"fault:downstream"}, // the pair released together, held at the sink where one is declared
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecsEach(e, func(c *targets.Consumer) []*Spec {
			if !c.NamesOperation() {
				return []*Spec{{Property: p, Text: c.Name + ": two messages of one business operation take effect once",
					Skip: "the consumer's events name no business operation (declare consumers[].event.operation, such as {jsonpath: $.data.payment_id})"}}
			}
			seq := spec(p, c.Name+": two messages of one operation (two event ids, the same content) delivered one after the other take effect once",
				func(s *S) check.Result { return s.sameOperationInSequence(c) })
			together := spec(p, c.Name+": two messages of one operation released together take effect once",
				func(s *S) check.Result { return s.sameOperationTogether(c) })
			if e.Faults.Sink != nil {
				together.Extra = append(together.Extra, "fault:downstream")
			}
			return []*Spec{seq, together}
		})
	}
	register(p)
}

// sameOperationInSequence delivers a message, waits until its operation took effect, then
// delivers another message of the operation (to another instance).
func (s *S) sameOperationInSequence(c *targets.Consumer) check.Result {
	first := s.NewEvent(c)
	second := first.SameOperation()
	m1 := check.Message{Delivery: first.Deliver(Delivery{Instance: 0})}
	if c.IsQueue() {
		first.waitEffects(1, s.settleWait(c)) // one after the other: the first handled before the second is published
	}
	m2 := check.Message{Delivery: second.Deliver(Delivery{Instance: 1})}
	return check.SameOperationNewMessage(m1, m2, s.operationSettled(second), c.OperationDedupe)
}

// sameOperationTogether releases two messages of one operation together (racedBurst: held at
// the downstream until each has reached it or been answered, where a sink is declared), then
// redelivers a webhook message answered with the in-flight status until it is acknowledged, as
// a provider does.
func (s *S) sameOperationTogether(c *targets.Consumer) check.Result {
	first := s.NewEvent(c)
	evs := []*Event{first, first.SameOperation()}
	burst, overlaps := s.racedBurst(evs)
	msgs := make([]check.Message, len(evs))
	for i, a := range burst {
		msgs[i].Delivery = a
		if c.Transport == targets.TransportWebhook && a.Outcome == history.OK && check.InFlight(a.Status) {
			msgs[i].Again = evs[i].redeliver(s.claimWait(c), i+1)
		}
	}
	res := check.SameOperationNewMessage(msgs[0], msgs[1], s.operationSettled(first), c.OperationDedupe)
	if res.Skip == "" {
		overlaps.Judge(&res, "messages of one operation")
	}
	return res
}

// operationSettled counts the effects of the event's operation once they can be counted (as
// settle does), as a count of the operation.
func (s *S) operationSettled(ev *Event) check.Count {
	c := s.settle(ev)
	c.Ref = ev.Operation
	return c
}
