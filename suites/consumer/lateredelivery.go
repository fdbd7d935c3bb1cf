package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// late-redelivery: one event redelivered at growing delays after its first delivery, as
// providers back off (Stripe retries for up to 3 days), all within the consumer's declared
// dedupe retention. A retention longer than the run may wait is checked from below, as expiry
// does: the redeliveries grow up to --max-wait.
//
// The consumer MUST acknowledge every redelivery and MUST NOT apply the event again: it
// remembers the event id for as long as it declares.
//
// Catches: dedupe-forgets-early (dedupe records are forgotten after about a second).
func init() {
	p := &Property{
		Name: "late-redelivery",
		Must: `Redeliveries of an event at growing delays within the consumer's declared dedupe retention
MUST be acknowledged and MUST NOT take effect again (checked up to --max-wait when the retention is
longer).`,
		Catches:    []string{"dedupe-forgets-early"},
		Needs:      []string{"consumers[].dedupe_retention", "consumers[].effects"},
		Labels:     []string{"wait:retention"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			r := c.DedupeRetention
			if r <= 0 {
				return &Spec{Property: p, Text: c.Name + ": redeliveries within the dedupe retention take no effect again",
					Skip: "the consumer declares no dedupe_retention"}
			}
			if skip := e.RepublishSkip(c); skip != "" {
				return &Spec{Property: p, Text: c.Name + ": redeliveries within the dedupe retention take no effect again", Skip: skip}
			}
			delays := lateDelays(r, e.Settings.MaxWait, e.BrokerWindow(c))
			if len(delays) == 0 {
				return &Spec{Property: p, Text: c.Name + ": redeliveries within the dedupe retention take no effect again",
					Skip: fmt.Sprintf("the dedupe retention %v is too short to redeliver within it", r)}
			}
			text := fmt.Sprintf("%s: redeliveries %v after the first delivery, within the dedupe retention (%v), take no effect again", c.Name, delays, r)
			if r > e.Settings.MaxWait {
				text += fmt.Sprintf(" (checked from below: the retention is longer than --max-wait %v)", e.Settings.MaxWait)
			}
			return spec(p, text, func(s *S) check.Result {
				ev := s.NewEvent(c)
				first := ev.Deliver(Delivery{Instance: 0})
				firstEffects := s.settle(ev)
				var late []check.LateDelivery
				for i, d := range delays {
					if !s.WaitUntil(fmt.Sprintf("the redelivery %s after the first delivery (the dedupe retention is %s)", framework.Seconds(d), framework.Seconds(r)), first.Start.Add(d)) {
						break
					}
					a := ev.Deliver(Delivery{Instance: i + 1})
					n := s.settle(ev)
					late = append(late, check.LateDelivery{After: a.Start.Sub(first.Start), Counted: time.Since(first.Start), Delivery: a, Effects: n})
				}
				return check.LateRedelivery(first, firstEffects, late, r)
			})
		})
	}
	register(p)
}

// lateDelays are the delays after the first delivery at which late-redelivery redelivers: four
// doubling delays up to nine tenths of the retention, or up to maxWait when the retention is
// longer (the lower bound), and one between the last two (three quarters of that limit), none
// shorter than the broker's duplicates window (JetStream's, when the event id travels in the
// message id: the broker's own dedupe must not be what is tested). None when the retention is
// shorter than that floor. The point between the last two catches a consumer that forgets early
// but late in its retention (a slow store marks the first delivery late), with time to count
// its effect before the retention ends: past it a re-effect is only observed.
func lateDelays(retention, maxWait, window time.Duration) []time.Duration {
	limit := min(retention*9/10, maxWait)
	floor := 100 * time.Millisecond
	if window > 0 {
		floor = window + 100*time.Millisecond
	}
	var out []time.Duration
	for _, d := range []time.Duration{limit >> 3, limit >> 2, limit >> 1, limit * 3 / 4, limit} {
		d = d.Round(time.Millisecond)
		if d < floor || len(out) > 0 && d <= out[len(out)-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}
