package consumer

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// delivery-load: a stream of events over many objects driven by Vegeta, with duplicates
// (sequential redeliveries of earlier events, and new events delivered twice at once: to two
// instances of a webhook, published twice on RabbitMQ) and reordering (an object's version held
// back and delivered after the next one), then every event not acknowledged redelivered until it
// is, as providers do. On JetStream a duplicate is published only past the broker's duplicates
// window, and never at once (the broker would drop it).
//
// The consumer MUST apply every event exactly once, MUST end with each object's newest version,
// and every 5xx MUST be followed by an acknowledged redelivery of the event.
//
// Catches: no-dedupe (every duplicate takes effect), check-then-insert (concurrent duplicates
// both take effect).
func init() {
	p := &Property{
		Name: "delivery-load",
		Must: `Under a sustained stream of events over many objects, with sequential and concurrent
duplicates and versions of an object out of order, every event MUST take effect exactly once, each
object MUST end at its newest version, and every 5xx MUST be followed by an acknowledged redelivery.
On JetStream duplicates are published only past the broker's duplicates window, one at a time.`,
		Catches:    []string{"no-dedupe", "check-then-insert"},
		Needs:      []string{"consumers[].effects", "consumers[].state (for the final versions; optional)", "instances (all are used)"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			rate, d := e.Settings.LoadRate, deliveryLoadDuration(e.Settings)
			sp := spec(p, fmt.Sprintf("%s: %d hits/s for %s with duplicates and reordering: one effect per event, the newest state, no 5xx left",
				c.Name, rate, d), func(s *S) check.Result {
				run := s.deliveryLoad(c, rate, d)
				s.Figure(run.figures())
				res := run.result.Judge(run.uncounted, run.countErr)
				run.raced(&res)
				return res
			})
			sp.Skip = e.RepublishSkip(c)
			return sp
		})
	}
	register(p)
}

// DefaultDeliveryLoadDuration bounds delivery-load's attack.
const DefaultDeliveryLoadDuration = 2 * time.Second

// deliveryLoadDuration is how long delivery-load attacks: the load duration, at most
// DefaultDeliveryLoadDuration.
func deliveryLoadDuration(st framework.Settings) time.Duration {
	return min(st.LoadDuration, DefaultDeliveryLoadDuration)
}

// deliveryRun is one delivery load: what was sent and what the checker found.
type deliveryRun struct {
	plan      *deliveryPlan
	attack    time.Duration
	drained   int // events redelivered after the attack
	result    *check.DeliveryLoadResult
	uncounted int
	countErr  string
}

// deliveryLoad attacks the consumer for d at rate hits per second, redelivers what was not
// acknowledged, counts every event's effects and every object's state and checks the history.
func (s *S) deliveryLoad(c *targets.Consumer, rate int, d time.Duration) *deliveryRun {
	run := &deliveryRun{plan: newDeliveryPlan(s, c)}
	from := int64(s.History.Len())
	s.deliveryAttack(run, rate, d)
	s.deliverLate(run.plan.takeLate())
	run.drained = s.drainDeliveries(run, from)
	events, heads := run.plan.snapshot()
	effects, states := s.countDeliveries(run, events, heads)
	meta := make(map[string]check.LoadEvent, len(events))
	for _, ev := range events {
		meta[ev.ID] = check.LoadEvent{Object: ev.Object, Version: ev.Version}
	}
	run.result = check.DeliveryLoad(s.History.AttemptsAfter(from), meta, effects, states)
	return run
}

// deliveryAttack runs the Vegeta attack, every delivery recorded compactly.
func (s *S) deliveryAttack(run *deliveryRun, rate int, d time.Duration) {
	stop := s.History.Compact(history.CompactOptions{Full: func(a history.Attempt) bool {
		return !framework.Succeeded(a) && !check.InFlight(a.Status)
	}})
	defer stop()
	hc := &http.Client{Transport: &deliveryTransport{plan: run.plan}}
	run.attack = s.VegetaAttack(hc, run.plan.targeter(), vegeta.Rate{Freq: rate, Per: time.Second}, d, "retrysafe-delivery-load")
}

// deliveryWorkers bound the concurrent deliveries and observer requests after the attack.
const deliveryWorkers = 8

// forEachEvent runs fn for every event, deliveryWorkers at a time.
func (s *S) forEachEvent(evs []*Event, fn func(*Event)) {
	jobs := make(chan *Event)
	var wg sync.WaitGroup
	for range deliveryWorkers {
		wg.Go(func() {
			for ev := range jobs {
				fn(ev)
			}
		})
	}
	for _, ev := range evs {
		if s.Ctx().Err() != nil {
			break
		}
		jobs <- ev
	}
	close(jobs)
	wg.Wait()
}

// deliverLate delivers the held-back versions the attack did not get to.
func (s *S) deliverLate(late []*Event) {
	s.forEachEvent(late, func(ev *Event) { ev.Deliver(Delivery{Instance: -1}) })
}

// drainDeliveries redelivers every webhook event whose last delivery since from was not
// acknowledged, until it is (or the consumer's lock wait passed), after the in-flight status,
// 429, a 5xx or no answer, as a provider does; it returns how many events it redelivered. A
// queue consumer's broker redelivers on its own: it waits for the events to take effect.
func (s *S) drainDeliveries(run *deliveryRun, from int64) int {
	c := run.plan.c
	events, _ := run.plan.snapshot()
	if c.Transport != targets.TransportWebhook {
		s.awaitDeliveries(c, events)
		return 0
	}
	last := map[string]history.Attempt{}
	for a := range s.History.AttemptsAfter(from) {
		last[a.Key] = a
	}
	var pending []*Event
	for _, ev := range events {
		if a, ok := last[ev.ID]; ok && !framework.Succeeded(a) {
			pending = append(pending, ev)
		}
	}
	deadline := time.Now().Add(s.claimWait(c))
	s.forEachEvent(pending, func(ev *Event) {
		for i := 0; time.Now().Before(deadline) && s.Ctx().Err() == nil; i++ {
			a := ev.Deliver(Delivery{Instance: i})
			if framework.Succeeded(a) || a.Outcome == history.OK && a.Status < 500 && !check.InFlight(a.Status) && a.Status != http.StatusTooManyRequests {
				return // acknowledged, or refused for good (the checker judges it)
			}
			s.SleepUntil(time.Now().Add(framework.RetryInterval))
		}
	})
	return len(pending)
}

// awaitDeliveries waits until every event published took effect, or the settle wait of the
// consumer's redelivery clock passed since the last one did while the broker holds none of the
// consumer's messages (at most --max-redelivery-wait in all), then a moment in which a duplicate
// effect would come. A broker that still holds messages (ready, or handed out and not
// acknowledged) has work left for the consumer: a loaded machine may take longer than the settle
// wait between two effects.
func (s *S) awaitDeliveries(c *targets.Consumer, events []*Event) {
	waiting := events
	idle := s.settleWait(c)
	deadline, limit := time.Now().Add(idle), time.Now().Add(s.Settings.MaxRedeliveryWait)
	for len(waiting) > 0 && time.Now().Before(limit) && s.Ctx().Err() == nil {
		if !time.Now().Before(deadline) && !s.brokerBusy(c) {
			break
		}
		var mu sync.Mutex
		var still []*Event
		s.forEachEvent(waiting, func(ev *Event) {
			if n, err := ev.observe(ev.C.Effects, "effects"); err != nil || n == 0 {
				mu.Lock()
				still = append(still, ev)
				mu.Unlock()
			}
		})
		if len(still) < len(waiting) {
			deadline = time.Now().Add(idle)
		}
		waiting = still
		s.SleepUntil(time.Now().Add(100 * time.Millisecond))
	}
	if len(waiting) > 0 {
		s.Notef("%d events had not taken effect when the wait ended (the settle wait %s since the last effect, at most --max-redelivery-wait %v in all)",
			len(waiting), s.Redelivery(c).Explain(false), s.Settings.MaxRedeliveryWait)
	}
	s.SleepUntil(time.Now().Add(duplicateGrace))
}

// brokerBusy reports whether the broker holds messages of c's that it has yet to deliver or to
// see acknowledged (false when it cannot be asked).
func (s *S) brokerBusy(c *targets.Consumer) bool {
	h, err := s.brokerState(c)
	return err == nil && (h.Ready > 0 || h.Unacked > 0)
}

// countDeliveries counts every delivered event's effects and, with a state observer, every
// object's stored version.
func (s *S) countDeliveries(run *deliveryRun, events, heads []*Event) (effects, states map[string]int) {
	effects, states = map[string]int{}, map[string]int{}
	var mu sync.Mutex
	count := func(obs *targets.Observer, ev *Event, what, key string, into map[string]int) {
		n, err := ev.observe(obs, what)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if run.uncounted++; run.countErr == "" {
				run.countErr = s.History.Redactor().String(err.Error())
			}
			return
		}
		into[key] = n
	}
	s.forEachEvent(events, func(ev *Event) { count(ev.C.Effects, ev, "effects", ev.ID, effects) })
	if c := run.plan.c; c.State != nil {
		s.forEachEvent(heads, func(ev *Event) { count(c.State, ev, "state", ev.Object, states) })
	}
	return effects, states
}

// raced says how many concurrent duplicates raced: on webhooks, those whose two deliveries were
// in flight at once (a result without a violation is unknown when duplicates were sent and none
// raced); on a broker, the copies were published at once and their handlings are not seen.
func (r *deliveryRun) raced(res *check.Result) {
	pairs := r.plan.hits()[deliverPair]
	if pairs == 0 {
		return
	}
	if r.plan.c.IsQueue() {
		res.Observef("%d concurrent duplicates published twice at once", pairs)
		return
	}
	together := int(r.plan.together.Load())
	res.Observef("%d of %d concurrent duplicates had both deliveries in flight together", together, pairs)
	if together == 0 && len(res.Anomalies) == 0 {
		res.Unknown = append(res.Unknown, fmt.Sprintf("none of the %d concurrent duplicates had both deliveries in flight at once: they did not race", pairs))
	}
}

// figures are delivery-load's key figures.
func (r *deliveryRun) figures() map[string]string {
	h := r.plan.hits()
	f := map[string]string{
		"hits":                  strconv.Itoa(h[deliverFresh] + h[deliverPair] + h[deliverRetry] + h[deliverLate]),
		"concurrent_duplicates": strconv.Itoa(h[deliverPair]),
		"duplicates_together":   strconv.Itoa(int(r.plan.together.Load())),
		"sequential_duplicates": strconv.Itoa(h[deliverRetry]),
		"late_versions":         strconv.Itoa(h[deliverLate]),
		"attack":                framework.Millis(r.attack),
		"redelivered_after":     strconv.Itoa(r.drained),
	}
	if res := r.result; res != nil {
		f["deliveries"], f["events"], f["objects"] = strconv.Itoa(res.Attempts), strconv.Itoa(res.Events), strconv.Itoa(res.Objects)
		f["statuses"], f["unknown"] = res.StatusCounts(), strconv.Itoa(res.Unknown)
	}
	return f
}
