package suites

import (
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
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
	p.specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, c := range e.consumers(p.Transports...) {
			n := redeliveries
			seq := p.spec(sprintf("%s: one event delivered %d times in sequence takes effect once", c.Name, n), func(s *S) check.Result {
				return s.redeliver(c, make([]Delivery, n))
			})
			reenc := p.spec(c.Name+": one event redelivered re-encoded (the same content, JSON members reordered, other whitespace) takes effect once",
				func(s *S) check.Result { return s.redeliver(c, []Delivery{{}, {Reencode: true}}) })
			for _, sp := range []*Spec{seq, reenc} {
				sp.Skip = e.republishSkip(c)
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
	if w := s.brokerWindow(c); w > 0 {
		s.sleepUntil(time.Now().Add(w + 100*time.Millisecond))
	}
}

// brokerWindow is how long after a publication JetStream drops another with the same message
// id: the stream's duplicates window, for a NATS consumer whose event id travels in the message
// id (0 otherwise: AMQP has no window, and an event whose id travels elsewhere gets a new message
// id per publication).
func (e *Env) brokerWindow(c *targets.Consumer) time.Duration {
	if c.NATS == nil || c.Event.ID.In != targets.IDInTransport {
		return 0
	}
	if k := e.Faults.kit(c); k != nil && k.duplicates > 0 {
		return k.duplicates
	}
	return broker.DefaultDuplicatesWindow
}

// maxWindowWait is the longest duplicates window a spec waits out between two publications of
// one event.
const maxWindowWait = 2 * time.Second

// republishSkip says why a spec that publishes an event again cannot run on c ("" = it can):
// JetStream would drop the republication for longer than a spec waits.
func (e *Env) republishSkip(c *targets.Consumer) string {
	if w := e.brokerWindow(c); w > maxWindowWait {
		return sprintf("JetStream drops a message published again with the same Nats-Msg-Id within the stream's duplicates window (%v), "+
			"and the event id travels in the Nats-Msg-Id: declare event.id {header: NAME} or {jsonpath: PATH} so that each redelivery is "+
			"a message the broker delivers, or give the stream a duplicates window of at most %v", w, maxWindowWait)
	}
	return ""
}
