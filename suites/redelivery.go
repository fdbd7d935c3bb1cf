package suites

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// redelivery: one event delivered several times in sequence, as a provider redelivers when it
// did not read the consumer's answer (a webhook POSTed again; a message published again, past
// JetStream's own duplicates window so that the consumer's deduplication is what is tested).
//
// The consumer MUST acknowledge every delivery and apply the event exactly once.
//
// Catches: no-dedupe (every delivery takes effect).
func init() {
	p := &Property{
		Name: "redelivery",
		Must: `One event delivered several times in sequence (the same event id) MUST be acknowledged every
time and MUST take effect exactly once.`,
		Catches:    []string{"no-dedupe"},
		Needs:      []string{"consumers[].effects"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.specs = func(e *Env) []*Spec {
		return p.consumerSpecs(e, func(c *targets.Consumer) *Spec {
			n := redeliveries
			return p.spec(sprintf("%s: one event delivered %d times in sequence takes effect once", c.Name, n), func(s *S) check.Result {
				ev := s.NewEvent(c)
				var atts []history.Attempt
				for i := range n {
					if i > 0 {
						s.waitOutBrokerWindow(c)
					}
					atts = append(atts, ev.Deliver(Delivery{Instance: i}))
				}
				return check.Redelivery(atts, s.settle(ev))
			})
		})
	}
	register(p)
}

// redeliveries is how many times the redelivery property delivers one event.
const redeliveries = 3

// waitOutBrokerWindow waits until JetStream's own duplicates window has passed, so that a
// message published again reaches the consumer (the broker's dedupe must not be what makes a
// test pass). Other transports have no such window.
func (s *S) waitOutBrokerWindow(c *targets.Consumer) {
	if c.Transport != targets.TransportNATS {
		return
	}
	s.sleepUntil(time.Now().Add(brokerDuplicatesWindow + 100*time.Millisecond))
}

// brokerDuplicatesWindow is the duplicates window of the streams the harness creates (the
// broker package's default).
const brokerDuplicatesWindow = 200 * time.Millisecond
