package consumer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// out-of-order: the events of versions 1..N of one object delivered out of order, as providers
// deliver: the newest first (and applied before the next is sent), the older ones after it in a
// seeded shuffle.
//
// The consumer MUST end with the newest version's state (read through its state observer),
// MUST apply the newest event exactly once and each older one at most once, and MUST
// acknowledge every delivery: it compares the event's own version with the stored state
// instead of trusting arrival order.
//
// Catches: order-blind (each event's version is written as it arrives: a late older event
// overwrites the newest).
func init() {
	p := &Property{
		Name: "out-of-order",
		Must: `When the events of versions 1..N of one object arrive out of order, the newest first, the
consumer MUST acknowledge every delivery, MUST end with version N's state (no older event overwrites a
newer one), and MUST apply each event at most once (the newest exactly once).`,
		Catches:    []string{"order-blind"},
		Needs:      []string{"consumers[].state (the version stored for an object)", "consumers[].effects"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			n := outOfOrderVersions
			text := fmt.Sprintf("%s: versions 1..%d of one object delivered newest first, then shuffled, leave version %d", c.Name, n, n)
			if c.State == nil {
				return &Spec{Property: p, Text: text, Skip: "the consumer declares no state observer (consumers[].state): the stored version cannot be read"}
			}
			return spec(p, text, func(s *S) check.Result { return s.outOfOrder(c, n) })
		})
	}
	register(p)
}

// outOfOrderVersions is how many versions of one object out-of-order delivers.
const outOfOrderVersions = 5

// outOfOrder delivers versions 1..n of a fresh object, the newest first and applied, then the
// others shuffled, and judges the effects and the object's final state.
func (s *S) outOfOrder(c *targets.Consumer, n int) check.Result {
	evs := []*Event{s.NewEvent(c)}
	for len(evs) < n {
		evs = append(evs, evs[len(evs)-1].Next())
	}
	older := slices.Clone(evs[:n-1])
	rng := rand.New(rand.NewPCG(uint64(s.Settings.Seed), 0x0de5)) // the same order for the same --seed
	rng.Shuffle(len(older), func(i, j int) { older[i], older[j] = older[j], older[i] })
	order := append([]*Event{evs[n-1]}, older...)
	ds := make([]check.Versioned, len(order))
	for i, ev := range order {
		ds[i] = check.Versioned{Version: ev.Version, Delivery: ev.Deliver(Delivery{Instance: i})}
		if i == 0 && c.Transport != targets.TransportWebhook {
			ev.waitEffects(1, s.settleWait(c)) // the newest applied before any older one arrives
		}
	}
	s.awaitVersions(order)
	for i, ev := range order {
		ds[i].Effects = ev.Effects()
	}
	return check.OutOfOrder(ds, evs[0].State())
}

// awaitVersions waits until a queue consumer applied each event (or the settle wait of its
// redelivery clock passed in all, since it may discard some) and a moment for a late effect; a webhook's answers came after its
// effects.
func (s *S) awaitVersions(evs []*Event) {
	if len(evs) == 0 || evs[0].C.Transport == targets.TransportWebhook {
		return
	}
	deadline := time.Now().Add(s.settleWait(evs[0].C))
	for _, ev := range evs {
		ev.waitEffects(1, time.Until(deadline))
	}
	s.SleepUntil(time.Now().Add(duplicateGrace))
}
