package suites

import (
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// failed-then-redelivered: the consumer's first attempt at an event fails because its
// downstream fails (the harness's sink answers its call with a 503, injected through the
// nemesis), so the consumer answers a 5xx (a webhook) or does not acknowledge (a queue
// consumer); the provider redelivers (the harness for a webhook, the broker for a queue).
//
// The consumer MUST apply the redelivered event exactly once, not zero times: a failed attempt
// must not leave the event marked as seen.
//
// Catches: marks-seen-on-failure (the redelivery is acknowledged as a duplicate, nothing ever
// happens).
func init() {
	p := &Property{
		Name: "failed-then-redelivered",
		Must: `When a consumer's first attempt at an event fails because its downstream failed (it answers
a 5xx or does not acknowledge), the redelivery MUST be acknowledged and the event MUST take effect
exactly once: a failed attempt never marks the event as seen.`,
		Catches:    []string{"marks-seen-on-failure"},
		Needs:      []string{"consumers[].effects", "downstream (the consumer calls the harness's sink for its effect)"},
		Labels:     []string{"fault:downstream"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
		applies: func(e *Env) string {
			if e.Faults.Sink == nil {
				return "the target declares no downstream: the harness cannot make the consumer's effect fail"
			}
			return ""
		},
	}
	p.specs = func(e *Env) []*Spec {
		return p.consumerSpecs(e, func(c *targets.Consumer) *Spec {
			return p.spec(c.Name+": an event whose first attempt failed downstream takes effect once when redelivered", func(s *S) check.Result {
				ev := s.NewEvent(c)
				fail := s.Faults.Sink.FailFault(1, http.StatusServiceUnavailable)
				before := len(s.Faults.Sink.Calls())
				if err := s.inject(fail); err != nil {
					return unknownf("%v", err)
				}
				first := ev.Deliver(Delivery{Instance: 0})
				failed := s.waitFailedCalls(ev, before, brokerSettle)
				if err := s.heal(fail); err != nil {
					return unknownf("%v", err)
				}
				var again check.Eventually
				if c.Transport == targets.TransportWebhook && !succeeded(first) && failed > 0 {
					again = ev.redeliver(consumerLockWait(c), 1)
				}
				return check.FailedThenRedelivered(first, failed, again, s.settle(ev))
			})
		})
	}
	register(p)
}

// waitFailedCalls waits until the sink failed a call made after its first before calls (at
// once for a webhook, whose answer came after its call; up to d for a queue consumer) and
// returns how many it failed.
func (s *S) waitFailedCalls(ev *Event, before int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := 0
		for _, c := range s.Faults.Sink.Calls()[before:] {
			if c.Status == http.StatusServiceUnavailable {
				n++
			}
		}
		if n > 0 || ev.C.Transport == targets.TransportWebhook || time.Now().After(deadline) || s.ctx.Err() != nil {
			s.notef("downstream: %d calls failed with 503 while event %s was delivered", n, ev.ID)
			return n
		}
		s.sleepUntil(time.Now().Add(20 * time.Millisecond))
	}
}
