package consumer

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// one-message-many-operations: one message naming several business operations
// (consumers[].event.operations: an order's items, a batch of payouts), delivered, then
// redelivered under its id; then, where the consumer declares operation_dedupe, another message
// naming one of them again.
//
// The consumer MUST acknowledge the message and apply each operation it names exactly once; its
// redelivery MUST apply none again; the later message MUST apply nothing (with operation_dedupe).
//
// Catches: first-operation-only (an event naming several operations applies the first).
func init() {
	p := &Property{
		Name: "one-message-many-operations",
		Must: `A message naming several business operations (consumers[].event.operations) MUST be acknowledged
and MUST apply each operation exactly once; its redelivery (the same event id) MUST apply none of them
again; with operation_dedupe, a later message naming one of them again MUST apply nothing.`,
		Catches: []string{"first-operation-only"},
		Needs: []string{"consumers[].event.operations (where an event names several operations, such as {jsonpath: $.data.items[*].id})",
			"consumers[].effects asked with {{.Operation}}"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			text := c.Name + ": one message naming 3 operations applies each once, and its redelivery none"
			if c.OperationDedupe {
				text += "; a later message naming one of them again applies nothing"
			}
			if !c.NamesOperations() {
				return &Spec{Property: p, Text: text,
					Skip: "the consumer's events name no list of operations (declare consumers[].event.operations, such as {jsonpath: $.data.items[*].id})"}
			}
			sp := spec(p, text, func(s *S) check.Result { return s.manyOperations(c) })
			sp.Skip = e.RepublishSkip(c)
			return sp
		})
	}
	register(p)
}

// manyOperationsNamed is how many operations the message of one-message-many-operations names.
const manyOperationsNamed = 3

// manyOperations delivers a message naming several operations, counts each, redelivers it,
// counts again, and (with operation_dedupe) delivers a later message naming the second again.
func (s *S) manyOperations(c *targets.Consumer) check.Result {
	ev := s.ManyOperations(c, manyOperationsNamed)
	o := check.ManyOperations{First: ev.Deliver(Delivery{Instance: 0})}
	o.AfterFirst = s.operationsSettled(ev, ev.Operations, true)
	s.waitOutBrokerWindow(c)
	o.Again = ev.Deliver(Delivery{Instance: 1})
	o.AfterAgain = s.operationsSettled(ev, ev.Operations, false) // what the first left unapplied is already judged
	if !c.OperationDedupe {
		s.Notef("the consumer declares no operation_dedupe: a later message naming one of the operations again is not sent")
		return check.OneMessageManyOperations(o)
	}
	later := ev.NamingAgain(ev.Operations[1])
	o.Later = later.Deliver(Delivery{Instance: 2})
	o.AfterLater = s.operationsSettled(later, later.Operations, false)[0]
	return check.OneMessageManyOperations(o)
}

// operationsSettled counts the effects of each of ops once they can be counted: at once for a
// webhook (its 2xx came after its effects), on a broker once each took effect (or, awaiting
// their first effects, the settle wait passed) and a moment more, in which a duplicate effect
// would have come.
func (s *S) operationsSettled(ev *Event, ops []string, awaitFirst bool) []check.Count {
	counts := make([]check.Count, len(ops))
	if ev.C.IsQueue() {
		if awaitFirst {
			deadline := time.Now().Add(s.settleWait(ev.C))
			for _, op := range ops {
				for n, err := ev.operationEffects(op); (err != nil || n == 0) && time.Now().Before(deadline) && s.Ctx().Err() == nil; n, err = ev.operationEffects(op) {
					s.SleepUntil(time.Now().Add(50 * time.Millisecond))
				}
			}
		}
		s.SleepUntil(time.Now().Add(duplicateGrace))
	}
	for i, op := range ops {
		counts[i] = ev.OperationEffects(op)
	}
	return counts
}
