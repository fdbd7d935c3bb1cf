package consumer

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// lost-ack: the consumer's acknowledgement is lost on its way back after the consumer processed
// the delivery. On a webhook: Toxiproxy limit_data on the answer's stream of a proxy in front of
// the consumer, then the provider redelivers until a delivery is acknowledged. On a broker: the
// consumer's link to the broker is cut before its ack arrives (lostack_broker.go), and the broker
// redelivers once it reconnects. Every fault goes through the nemesis.
//
// The consumer MUST acknowledge the redelivery and apply the event exactly once.
//
// Catches: no-dedupe (the redelivery takes effect again).
func init() {
	p := &Property{
		Name: "lost-ack",
		Must: `When a consumer's acknowledgement of a processed delivery is lost on the way back (its 2xx
to a webhook, or its ack to the broker when its broker link is cut), the redelivery of the event MUST
be acknowledged and the event MUST take effect exactly once.`,
		Catches: []string{"no-dedupe"},
		Needs: []string{"consumers[].effects", "toxiproxy (optional; embedded by default)",
			"on a broker: a lifecycle reaching it through {{.Broker}} (and nats.durable), with a downstream binding (it holds the effect) or without one (the link is silenced before the ack)"},
		Labels:     []string{"fault:network"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
		SpecLabels: []string{"fault:downstream"}, // on the sink path
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			if c.IsQueue() {
				text := c.Name + ": the broker link cut while the downstream holds the effect, then healed: the broker's redelivery takes no effect again"
				if e.Faults.Sink == nil {
					text = c.Name + ": the broker link silenced before the acknowledgement, then cut and healed: the broker's redelivery takes no effect again"
				}
				sp := spec(p, text, func(s *S) check.Result { return s.lostAckBroker(c) })
				if e.Faults.Sink != nil {
					sp.Extra = append(sp.Extra, "fault:downstream")
				}
				return sp
			}
			sp := spec(p, c.Name+": a redelivery after the 2xx was cut by Toxiproxy takes no effect again", func(s *S) check.Result {
				ev := s.NewEvent(c)
				proxy, via, err := s.Faults.ProxyFor(0)
				if err != nil {
					return check.Unknownf("cannot put a fault proxy in front of the consumer: %v", err)
				}
				cut := proxy.CutResponse(0)
				if err := s.Inject(cut); err != nil {
					return check.Unknownf("%v", err)
				}
				lost := ev.Deliver(Delivery{Via: via})
				if err := s.Heal(cut); err != nil {
					return check.Unknownf("%v", err)
				}
				processed := ev.waitEffects(1, s.settleWait(c))
				again := ev.redeliver(s.claimWait(c), 0)
				return check.LostAck(lost, processed, again, ev.Effects())
			})
			sp.Skip = e.RedeliverySkip(c, true)
			return sp
		})
	}
	register(p)
}
