package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// redelivery: one event delivered several times in sequence, as a provider redelivers when it
// did not read the consumer's answer (a webhook POSTed again; a message published again, past
// JetStream's own duplicates window or with another message id, so that the consumer's
// deduplication is what is tested); and one event redelivered re-encoded, as an outbox relay or
// a provider that re-serialises its events sends it: the same id and content, other bytes.
//
// The consumer MUST acknowledge every delivery and apply the event exactly once.
//
// Catches: no-dedupe (every delivery takes effect), raw-bytes-dedupe (the re-encoded one does).
func init() {
	p := &Property{
		Name: "redelivery",
		Must: `One event delivered several times in sequence (the same event id) MUST be acknowledged every
time and MUST take effect exactly once, also when a redelivery carries the same content in other bytes
(JSON members reordered, other whitespace).`,
		Catches:    []string{"no-dedupe", "raw-bytes-dedupe"},
		Needs:      []string{"consumers[].effects"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, c := range e.Consumers(p.Transports...) {
			n := redeliveries
			seq := spec(p, fmt.Sprintf("%s: one event delivered %d times in sequence takes effect once", c.Name, n), func(s *S) check.Result {
				return s.redeliver(c, make([]Delivery, n))
			})
			reenc := spec(p, c.Name+": one event redelivered re-encoded (the same content, JSON members reordered, other whitespace) takes effect once",
				func(s *S) check.Result { return s.redeliver(c, []Delivery{{}, {Reencode: true}}) })
			for _, sp := range []*Spec{seq, reenc} {
				sp.Skip = e.RepublishSkip(c)
				sp.Extra = append(sp.Extra, "consumer:"+string(c.Transport))
				out = append(out, sp)
			}
		}
		return out
	}
	register(p)
}

// redeliver delivers one event once per delivery given, in sequence (delivery i to instance i),
// and judges it: every delivery acknowledged, one effect.
func (s *S) redeliver(c *targets.Consumer, ds []Delivery) check.Result {
	ev := s.NewEvent(c)
	var atts []history.Attempt
	for i, d := range ds {
		if i > 0 {
			s.waitOutBrokerWindow(c)
		}
		d.Instance = i
		atts = append(atts, ev.Deliver(d))
	}
	return check.Redelivery(atts, s.settle(ev))
}

// redeliveries is how many times the redelivery property delivers one event.
const redeliveries = 3

// waitOutBrokerWindow waits until JetStream's own duplicates window has passed, so that a
// message published again with the same message id reaches the consumer (the broker's dedupe
// must not be what makes a test pass). Other transports, and events whose id travels outside the
// message id, have no such window.
func (s *S) waitOutBrokerWindow(c *targets.Consumer) {
	if w := s.BrokerWindow(c); w > 0 {
		s.WaitUntil(fmt.Sprintf("JetStream's duplicates window (%s) to pass", framework.Seconds(w)), time.Now().Add(w+100*time.Millisecond))
	}
}
