package consumer

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Kinds of delivery-load hits.
const (
	deliverFresh = iota // a new event (a new object, or an object's next version), once
	deliverPair         // a new event delivered twice at once (a concurrent duplicate)
	deliverRetry        // an earlier event delivered again (a sequential duplicate)
	deliverLate         // an older version of an object held back and delivered after a newer one
)

// Shares of the delivery-load plan besides Settings.LoadRetryFraction.
const (
	deliveryLateShare    = 0.1  // hits that deliver a held-back older version, when one waits
	deliveryNewObject    = 0.3  // fresh events about a new object (the rest: an object's next version)
	deliveryReorder      = 0.3  // next versions that skip one, the skipped one held back
	deliveryRecentObject = 64   // a next version is of one of the latest objects
	deliveryMaxLate      = 1024 // held-back versions at most (beyond, none is held back)
)

// deliveryPlan is the generator of delivery-load: it decides what each Vegeta hit delivers.
// Its targeter is called from many goroutines.
type deliveryPlan struct {
	s       *S
	c       *targets.Consumer
	retry   float64       // share of hits that are duplicates (half sequential, half concurrent)
	spacing time.Duration // a sequential duplicate repeats only an event at least this old
	pairs   bool          // concurrent duplicates (not on JetStream: the broker drops them)

	mu     sync.Mutex
	rng    *rand.Rand
	heads  []*Event // the newest event of each object, in creation order
	events []*Event // every event, in creation order
	born   map[string]time.Time
	late   []*Event
	table  framework.HitTable[deliveryItem]
	counts [4]int

	together atomic.Int64 // concurrent duplicates whose two deliveries were in flight at once
}

// deliveryItem is one hit: the event, the instance it goes to and, for a pair, its twin's.
type deliveryItem struct {
	ev      *Event
	ins     int
	twin    bool
	twinIns int
}

func newDeliveryPlan(s *S, c *targets.Consumer) *deliveryPlan {
	p := &deliveryPlan{s: s, c: c, retry: s.Settings.LoadRetryFraction, pairs: true,
		rng: rand.New(rand.NewPCG(uint64(s.Settings.Seed), 0xde11)), born: map[string]time.Time{}}
	if w := s.BrokerWindow(c); w > 0 {
		p.spacing, p.pairs = w+100*time.Millisecond, false
	}
	return p
}

// queueHitURL is the URL of a hit on a queue consumer: Vegeta needs one, the delivery transport
// publishes instead of sending anything to it.
const queueHitURL = "http://broker.invalid/"

// targeter returns the Vegeta targeter of the plan. Vegeta paces, counts and times each hit;
// what is delivered is the hit's item, by the transport.
func (p *deliveryPlan) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		it := p.choose()
		id := p.table.Put(it)
		t.Method, t.URL = http.MethodPost, queueHitURL
		if !p.c.IsQueue() {
			t.URL = p.s.Target.Instances[it.ins].URL.String()
		}
		t.Header = http.Header{framework.LoadItemHeader: {strconv.FormatUint(id, 10)}}
		return nil
	}
}

// choose picks the next hit.
func (p *deliveryPlan) choose() *deliveryItem {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := max(len(p.s.Target.Instances), 1) // a queue worker may have no instance at all
	it := &deliveryItem{ins: p.rng.IntN(n)}
	it.twinIns = (it.ins + 1) % n
	r := p.rng.Float64()
	switch {
	case len(p.late) > 0 && r < deliveryLateShare:
		it.ev, p.late = p.late[0], p.late[1:]
		p.counts[deliverLate]++
	case r < deliveryLateShare+p.retry/2:
		if it.ev = p.retryable(); it.ev != nil {
			p.counts[deliverRetry]++
			break
		}
		fallthrough
	default:
		it.ev = p.fresh()
		kind := deliverFresh
		if it.twin = p.pairs && r < deliveryLateShare+p.retry; it.twin {
			kind = deliverPair
		}
		p.counts[kind]++
	}
	if _, ok := p.born[it.ev.ID]; !ok {
		p.born[it.ev.ID] = time.Now()
	}
	return it
}

// retryable returns a recent event old enough to be delivered again (nil: none); p.mu is held.
func (p *deliveryPlan) retryable() *Event {
	if len(p.events) == 0 {
		return nil
	}
	ev := p.events[len(p.events)-1-p.rng.IntN(min(len(p.events), framework.LoadRetryWindow))]
	born, delivered := p.born[ev.ID]
	if !delivered || time.Since(born) < p.spacing {
		return nil
	}
	return ev
}

// fresh returns a new event: about a new object, or the next version of a recent object (which
// sometimes skips a version, held back to be delivered later: out of order); p.mu is held.
func (p *deliveryPlan) fresh() *Event {
	if len(p.heads) == 0 || p.rng.Float64() < deliveryNewObject {
		ev := p.event(nil)
		p.heads = append(p.heads, ev)
		return ev
	}
	i := len(p.heads) - 1 - p.rng.IntN(min(len(p.heads), deliveryRecentObject))
	next := p.event(p.heads[i])
	if p.rng.Float64() < deliveryReorder && len(p.late) < deliveryMaxLate {
		p.late = append(p.late, next)
		next = p.event(next)
	}
	p.heads[i] = next
	return next
}

// event makes an event: the version after prev of its object, or a new object's first. Unlike
// NewEvent it does not add the id to the spec's evidence: a load has hundreds. p.mu is held.
func (p *deliveryPlan) event(prev *Event) *Event {
	ev := p.s.newEvent(p.c)
	if prev != nil {
		ev.Object, ev.Version, ev.Time = prev.Object, prev.Version+1, prev.Time.Add(time.Second)
	}
	p.events = append(p.events, ev)
	return ev
}

// takeLate removes and returns the held-back versions not delivered yet.
func (p *deliveryPlan) takeLate() []*Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	late := p.late
	p.late = nil
	p.counts[deliverLate] += len(late)
	return late
}

// snapshot returns every event and the newest event of every object.
func (p *deliveryPlan) snapshot() (events, heads []*Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Event(nil), p.events...), append([]*Event(nil), p.heads...)
}

// hits returns the hits of each kind: fresh, pairs, retries, late.
func (p *deliveryPlan) hits() [4]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// deliveryTransport is the RoundTrip Vegeta sends through: each hit is delivered by the
// harness (a signed webhook POST or a publish, recorded), a pair's twin at the same moment.
type deliveryTransport struct{ plan *deliveryPlan }

// RoundTrip implements http.RoundTripper.
func (t *deliveryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	it := t.plan.table.Take(req.Header.Get(framework.LoadItemHeader))
	if it == nil {
		return nil, errors.New("retrysafe delivery-load: a hit without a plan item")
	}
	var twin sync.WaitGroup
	var other history.Attempt
	if it.twin {
		twin.Go(func() { other = it.ev.Deliver(Delivery{Instance: it.twinIns}) })
	}
	a := it.ev.Deliver(Delivery{Instance: it.ins})
	twin.Wait()
	if it.twin && check.InFlightTogether([]history.Attempt{a, other}) == 2 {
		t.plan.together.Add(1)
	}
	if a.Outcome != history.OK {
		return nil, errors.New(a.Err)
	}
	status := a.Status
	if status == 0 { // a publication the broker confirmed
		status = http.StatusOK
	}
	return framework.HitResponse(req, status, http.Header{}, a.RespBody), nil
}
