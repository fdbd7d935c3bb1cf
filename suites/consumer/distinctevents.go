package consumer

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// distinct-events: two events with different ids and otherwise the same body (the same
// object, version, time and data), delivered one after the other.
//
// The consumer MUST acknowledge both and apply each exactly once: they are two events.
// Deduplicating on a hash of the payload instead of the event id silently drops the second
// (several deduplication middlewares do).
//
// Where events name their business operation (consumers[].event.operation), the second names
// an operation of its own: two events are two operations (same-operation-new-message checks two
// messages of one). Its body then differs from the first's beyond the id, so a payload hash
// tells them apart: payload-dedupe's row runs where events name no operation.
//
// Catches: payload-dedupe (the second event is acknowledged as a duplicate: a dropped event).
func init() {
	p := &Property{
		Name: "distinct-events",
		Must: `Two events with different ids and otherwise the same body MUST both be acknowledged and
MUST each take effect exactly once: a consumer deduplicates on the event id (or the business operation
an event names, each event its own), never on the payload.`,
		Catches:    []string{"payload-dedupe"},
		Needs:      []string{"consumers[].effects"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			return spec(p, c.Name+": two events with the same body and different ids both take effect", func(s *S) check.Result {
				first := s.NewEvent(c)
				second := first.Twin()
				a1 := first.Deliver(Delivery{Instance: 0})
				a2 := second.Deliver(Delivery{Instance: 1})
				return check.DistinctEvents(a1, a2, s.settle(first), s.settle(second))
			})
		})
	}
	register(p)
}
