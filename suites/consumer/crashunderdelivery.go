package consumer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// crash-under-delivery: the black-box crash property of consumers that call nothing of the
// harness's (no downstream sink to hold them in the middle of an effect). While a stream of
// events is delivered (webhook POSTs, or publications on the consumer's broker), every instance
// is SIGKILLed, again and again, and restarted through the lifecycle; after each restart a
// sample of the events already applied is redelivered. Each batch starts with an event delivered
// plainly and applied; where the consumer declares hooks.slow, the rest of the batch is slowed and
// the kill lands inside the slowed window (deterministic); otherwise the kills come at seeded
// moments just after the batch was sent. At the end, what was
// not acknowledged is redelivered (webhooks) or waited for (the broker redelivers what its dead
// consumers left unacknowledged), for as long as a takeover of a dead handling's claim may take.
//
// Every event MUST take effect exactly once.
//
// Catches: in-memory-dedupe (a restarted process has forgotten what it saw: the redelivery of an
// acknowledged event applies again), mark-after-effect (the kill lands between the effect and
// the separate write of its id), claim-before-effect and ack-before-effect (the event is marked
// seen, or acknowledged, before its effect, which the kill loses: a dropped event).
func init() {
	p := &Property{
		Name: "crash-under-delivery",
		Must: `While a stream of events is delivered and every instance of the consumer is SIGKILLed again and
again (at least 5 times, each followed by a restart, and by redeliveries of events delivered before),
every event MUST take effect exactly once: an event in the middle of its handling when a kill came is
redelivered and applied once, an event already applied is a duplicate when redelivered, and an event
acknowledged with no effect is a dropped event.`,
		Catches: []string{"in-memory-dedupe", "mark-after-effect", "claim-before-effect", "ack-before-effect"},
		Needs: []string{"consumers[].effects", "lifecycle (durable: true)", "consumers[].lock_timeout", "nats.durable (nats)",
			"consumers[].hooks.slow (optional: the kills then land inside the slowed window)",
			"no downstream binding (with one, crash-after-ack and event-crash-after-claim hold the consumer exactly in the middle of its effect)"},
		Labels:     []string{"fault:process"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			how := "at seeded moments just after each batch was sent"
			if c.Hooks.CanSlow() {
				how = fmt.Sprintf("inside the window the slow hook widens to %d ms", deliverySlowMs)
			}
			sp := spec(p, fmt.Sprintf("%s: %d SIGKILLs of every instance while %d events are delivered, %s, each followed by a restart and redeliveries: each event takes effect once",
				c.Name, deliveryKills, deliveryKills*deliveryKillBatch, how), func(s *S) check.Result { return s.crashUnderDelivery(c) })
			sp.Skip = crashUnderDeliverySkip(e, c)
			return sp
		})
	}
	register(p)
}

// Shape of a crash-under-delivery spec.
const (
	// deliveryKills is how many times every instance is killed.
	deliveryKills = 5
	// deliveryKillBatch is how many events are sent before each kill.
	deliveryKillBatch = 3
	// deliverySample is how many events delivered before are redelivered after each restart.
	deliverySample = 2
	// deliverySlowMs is how long the slow hook makes each handling of a batch take.
	deliverySlowMs = 400
)

// crashUnderDeliverySkip says why crash-under-delivery does not run on c: a downstream is
// declared (the precise properties hold the consumer with it), or the crash needs are not met.
func crashUnderDeliverySkip(e *Env, c *targets.Consumer) string {
	if e.Faults.Sink != nil {
		if c.IsQueue() {
			return "the target declares a downstream binding: crash-after-ack holds the consumer in the middle of its effect and kills it there; crash-under-delivery is the path for consumers that call nothing of the harness's"
		}
		return "the target declares a downstream binding: event-crash-after-claim holds the consumer between its claim and its effect and kills it there; crash-under-delivery is the path for consumers that call nothing of the harness's"
	}
	if c.IsQueue() {
		return brokerFaultSkip(e, c, needCrash)
	}
	return consumerCrashSkip(e, c)
}

// consumerCrashSkip says why a consumer cannot be killed and restarted to any purpose, or "".
func consumerCrashSkip(e *Env, c *targets.Consumer) string {
	switch {
	case e.Faults.Cluster == nil:
		return "the target declares no lifecycle: the harness cannot kill and restart the consumer"
	case !e.Target.Lifecycle.Durable:
		return "the target's store is not durable (lifecycle.durable is false): a killed consumer loses its claims and effects"
	case c.LockTimeout <= 0:
		return "the consumer declares no lock_timeout: how long a killed delivery's claim holds the event cannot be told"
	}
	return e.RedeliverySkip(c, true)
}

// crashedEvent is one event of the stream and what was delivered of it.
type crashedEvent struct {
	ev    *Event
	mu    sync.Mutex
	sent  []history.Attempt
	again check.Eventually
}

func (e *crashedEvent) add(a history.Attempt) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sent = append(e.sent, a)
}

// acked reports whether a webhook delivery of the event got a 2xx.
func (e *crashedEvent) acked() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.sent {
		if framework.Succeeded(a) {
			return true
		}
	}
	return false
}

// crashUnderDelivery sends deliveryKills batches of events, killing and restarting every instance
// in the middle of each, redelivers a sample of the earlier events after each restart, settles
// and counts every event's effects.
func (s *S) crashUnderDelivery(c *targets.Consumer) check.Result {
	if c.IsQueue() {
		if err := s.waitBrokerQuiet(c); err != nil {
			return check.Unknownf("%v", err)
		}
	}
	var slowMs int64
	if c.Hooks.CanSlow() {
		slowMs = deliverySlowMs
		if err := s.slowFor(c, slowMs); err != nil {
			return check.Unknownf("cannot slow the handlings: %v", err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(s.Settings.Seed), 0xc1a5)) // the same moments for the same --seed
	var all []*crashedEvent
	var lastKill time.Time
	redelivered := 0
	for range deliveryKills {
		batch := s.sendBatch(c, slowMs)
		s.SleepUntil(time.Now().Add(crashMoment(rng, slowMs)))
		kills := s.killAll()
		if err := s.injectAll(kills); err != nil {
			s.healLeft(kills...)
			return check.Unknownf("%v", err)
		}
		lastKill = time.Now()
		batch.wait()
		if err := s.healAll(kills); err != nil {
			return check.Unknownf("cannot restart the consumer: %v", err)
		}
		s.Client.CloseIdle() // connections to the killed processes are dead
		all = append(all, batch.events...)
		for _, e := range s.crashSample(c, all, rng) {
			s.waitOutBrokerWindow(c)
			e.add(e.ev.Deliver(Delivery{Instance: -1}))
			redelivered++
		}
		if s.Ctx().Err() != nil {
			return check.Unknownf("interrupted after %d kills", len(all)/deliveryKillBatch)
		}
	}
	s.Notef("every instance killed %d times while %d events were delivered (%d redelivered after a restart)", deliveryKills, len(all), redelivered)
	s.Figure(map[string]string{"kills": fmt.Sprintf("%d", deliveryKills), "events": fmt.Sprintf("%d", len(all)),
		"redeliveries after a restart": fmt.Sprintf("%d", redelivered)})
	return s.settleCrashed(c, all, lastKill)
}

// crashMoment is how long after a batch was sent the kill comes: inside the slowed window (from
// a quarter to three quarters of it) with the slow hook, else a seeded 1 to 20 ms.
func crashMoment(rng *rand.Rand, slowMs int64) time.Duration {
	if slowMs > 0 {
		return time.Duration(slowMs/4+rng.Int64N(slowMs/2+1)) * time.Millisecond
	}
	return time.Duration(1+rng.IntN(20)) * time.Millisecond
}

// crashBatchRun is one batch of events on its way: webhook deliveries run on their own
// goroutines (a kill cuts them), publications are confirmed at once.
type crashBatchRun struct {
	events []*crashedEvent
	wg     sync.WaitGroup
}

func (b *crashBatchRun) wait() { b.wg.Wait() }

// sendBatch sends deliveryKillBatch new events: the first one plainly, waiting until it is
// acknowledged (a webhook's 2xx) or its effect shows (on a broker), so that every round leaves an
// applied event to redeliver after the restart; the others slowed by the slow hook when
// slowMs > 0, in flight when the kill comes.
func (s *S) sendBatch(c *targets.Consumer, slowMs int64) *crashBatchRun {
	b := &crashBatchRun{}
	for i := range deliveryKillBatch {
		e := &crashedEvent{ev: s.NewEvent(c)}
		b.events = append(b.events, e)
		d := Delivery{Instance: i}
		switch {
		case i == 0:
			e.add(e.ev.Deliver(d))
			if c.IsQueue() {
				e.ev.waitEffects(1, s.settleWait(c))
			}
		case c.IsQueue():
			d.SlowMs = slowMs
			e.add(e.ev.Deliver(d))
		default:
			d.SlowMs = slowMs
			b.wg.Go(func() { e.add(e.ev.Deliver(d)) })
		}
	}
	return b
}

// crashSample picks, among the events delivered so far, up to deliverySample already
// acknowledged ones to redeliver: a 2xx on a webhook, an effect that shows on a broker. None
// when the broker's duplicates window would drop the republication for too long. Only events
// first sent less than half the declared dedupe retention ago qualify: a redelivery past the
// retention may take effect again (the consumer was told it may forget), and a loaded machine
// stretches the rounds.
func (s *S) crashSample(c *targets.Consumer, earlier []*crashedEvent, rng *rand.Rand) []*crashedEvent {
	if s.RepublishSkip(c) != "" {
		return nil
	}
	var out []*crashedEvent
	for _, i := range rng.Perm(len(earlier)) {
		if len(out) == deliverySample {
			break
		}
		e := earlier[i]
		if !e.young(c.DedupeRetention / 2) {
			continue
		}
		if c.IsQueue() && e.ev.Effects().N > 0 || !c.IsQueue() && e.acked() {
			out = append(out, e)
		}
	}
	return out
}

// young reports whether the event was first sent less than d ago (always, when d is 0).
func (e *crashedEvent) young(d time.Duration) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return d <= 0 || len(e.sent) == 0 || time.Since(e.sent[0].Start) < d
}

// settleCrashed lets the stream settle (redelivers what a webhook never acknowledged, or waits
// until the broker has redelivered what it held), counts every event's effects and judges.
func (s *S) settleCrashed(c *targets.Consumer, all []*crashedEvent, lastKill time.Time) check.Result {
	settled := false
	evs := make([]*Event, len(all))
	for i, e := range all {
		evs[i] = e.ev
	}
	var counts []check.Count
	if c.IsQueue() {
		// A handling the last kill cut short holds its claim until the lock timeout: the broker's
		// redeliveries are answered "in flight" until then, and only a redelivery after it (the
		// broker's step: AckWait on JetStream) can apply the event (once, or, from a consumer
		// that lost track, twice).
		clock := s.Redelivery(c)
		s.WaitUntil(fmt.Sprintf("the redeliveries after the last kill (the lock timeout and the broker's step: %s)", framework.Seconds(min(clock.Lock+clock.Step, s.Settings.MaxRedeliveryWait))),
			lastKill.Add(min(clock.Lock+clock.Step, s.Settings.MaxRedeliveryWait)))
		held, empty, err := s.waitBrokerEmpty(c, s.settleWait(c))
		if err != nil {
			s.Notef("%s: cannot ask the broker what it holds: %v", framework.BrokerTarget(c), err)
		} else {
			s.Notef("%s at the end: %s", framework.BrokerTarget(c), held)
		}
		settled = empty
		counts = s.settleWithin(evs, s.settleWait(c))
		if !settled && slices.ContainsFunc(counts, func(n check.Count) bool { return n.Err == "" && n.N == 0 }) {
			settled = s.settledOnceGone(c)
		}
	} else {
		for _, e := range all {
			if !e.acked() {
				e.again = e.ev.redeliver(s.claimWait(c), 0)
			}
		}
		counts = make([]check.Count, len(evs))
		for i, ev := range evs {
			counts[i] = ev.Effects()
		}
	}
	out := make([]check.CrashedEvent, len(all))
	for i, e := range all {
		out[i] = check.CrashedEvent{Deliveries: e.sent, Again: e.again, Effects: counts[i]}
	}
	return check.CrashUnderDelivery(out, deliveryKills, settled)
}
