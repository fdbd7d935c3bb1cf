package chain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The faults of each hop, one on each in one run, every one through the chain's nemesis (one
// timeline), each acting on the first attempt of an operation the run's seed picks:
//
//   - client: the client's connection is cut after the API answered the attempt (the API
//     processed it; the client saw no answer and retries);
//   - api: the API is SIGKILLed between the commit and the publication of the operation's event
//     (held there by hooks.hold_publish; without the hook, as soon as it answered) and restarted;
//   - api→broker: the API's link to the broker is cut while it answers the operation, and healed
//     a moment later;
//   - consumer: the consumer's link to its broker is silenced (its deliveries arrive, its acks
//     do not), the consumer applies the operation's event, and every consumer instance is
//     SIGKILLed before its ack reached the broker, then restarted: the broker redelivers. On a
//     webhook the link is the one between the harness's receiver and the consumer, its answers
//     silenced: the API sees no 2xx and its relay delivers again (the webhook's redelivery).
//
// On a webhook, api→broker is the API's link to the harness's receiver (the proxy
// {{.EventsBroker}} names), which passes each delivery on to the consumer.
const (
	hopClient   = "client"
	hopAPI      = "api"
	hopBroker   = "api→broker"
	hopConsumer = "consumer"
)

// hopOrder is the order the hops are assigned to the operations a seed permutes.
var hopOrder = []string{hopClient, hopAPI, hopBroker, hopConsumer}

// chainOps is how many operations the client is asked to perform: one per hop's fault, and
// two that meet none.
const chainOps = 6

// linkCutFor is how long the API's broker link stays cut after the operation it hit was
// answered (the publication fails within it; the relay publishes after the heal).
const linkCutFor = time.Second

// heldWait bounds the wait for the API to hold a publication: it publishes within the declared
// publishes[].within of its commit.
func (h *hops) heldWait() time.Duration { return h.pub.Within }

// appliedWait bounds the wait for the consumer to apply an event: published within
// publishes[].within, delivered and applied within the consumer's redelivery clock.
func (h *hops) appliedWait() time.Duration {
	return h.pub.Within + h.parts.Consumer.RedeliveryWait(h.parts.Chain.EventConsumer(), false)
}

// plan assigns the hops to operations by the seed: op index → hop.
func plan(seed int64) map[int]string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a1))
	idx := rng.Perm(chainOps)
	out := map[int]string{}
	for i, h := range hopOrder {
		out[idx[i]] = h
	}
	return out
}

// hops injects each hop's fault when its operation's first attempt reaches the wiretap.
type hops struct {
	s     *S
	parts *framework.ChainParts
	tap   *wiretap
	proxy *faults.Proxy // the client's way to the API
	pub   *targets.Publish
	plan  map[int]string
	refs  []string
	start time.Time

	mu      sync.Mutex
	cut     faults.Fault // the client's cut, healed at the next attempt
	hit     map[string]bool
	wg      sync.WaitGroup
	resumed time.Time // the latest heal of the API's or the consumer's faults
}

// hook acts on one attempt: the hop planned for its operation, on its first attempt.
func (h *hops) hook(ref string, n int, forward func() answer) answer {
	h.healCut()
	hop := ""
	if i := slices.Index(h.refs, ref); i >= 0 && n == 1 {
		hop = h.plan[i]
	}
	h.mu.Lock()
	if hop != "" {
		h.hit[hop] = true
	}
	h.mu.Unlock()
	switch hop {
	case hopClient:
		return h.cutResponse(forward)
	case hopAPI:
		return h.killInHold(forward)
	case hopBroker:
		return h.cutEventsLink(forward)
	case hopConsumer:
		return h.killConsumerBeforeAck(ref, forward)
	}
	return forward()
}

// cutResponse lets the API answer the attempt and cuts the answer on its way to the client.
func (h *hops) cutResponse(forward func() answer) answer {
	cut := h.proxy.CutResponse(0)
	if err := h.s.Inject(cut); err != nil {
		h.s.Notef("the client's hop: %v", err)
		return forward()
	}
	h.mu.Lock()
	h.cut = cut
	h.mu.Unlock()
	return forward()
}

// healCut heals the client's cut before any later attempt goes on.
func (h *hops) healCut() {
	h.mu.Lock()
	cut := h.cut
	h.cut = nil
	h.mu.Unlock()
	if cut != nil {
		h.s.Heal(cut)
	}
}

// killInHold holds the API's publications, sends the attempt on, and SIGKILLs the API once it
// holds the operation's committed event (or, without the hook, once it answered), then
// restarts it; attempts wait at the wiretap meanwhile.
func (h *hops) killInHold(forward func() answer) answer {
	api := h.parts.API
	var tn *targets.Tenant
	if len(api.Target.Tenants) > 0 {
		tn = api.Target.Tenants[0]
	}
	kill := renamed(api.Faults.Cluster.KillFault(0), "api instance 0", "SIGKILL the API's instance 0 between a commit and its publication (healed by a restart)")
	res := make(chan answer, 1)
	var hold faults.Fault
	if api.Target.Hooks.CanHoldPublish() {
		hold = api.Faults.HoldPublications(tn)
		if err := h.s.Inject(hold); err != nil {
			h.s.Notef("the API's hop: %v", err)
			hold = nil
		}
	}
	go func() { res <- forward() }()
	var ans answer
	answered := false
	if hold != nil {
		if !h.awaitHeld(tn) {
			h.s.Notef("the API's hop: no publication was held within %v (publishes[].within): the kill came without one held", h.heldWait())
		}
	} else {
		ans, answered = <-res, true
	}
	h.tap.closeAPI()
	defer h.tap.openAPI()
	if err := h.s.Inject(kill); err != nil {
		h.s.Notef("the API's hop: %v", err)
	}
	if !answered {
		ans = <-res
	}
	h.heal(kill)
	if hold != nil {
		h.heal(hold)
	}
	return ans
}

// awaitHeld waits until the API's instance holds a publication.
func (h *hops) awaitHeld(tn *targets.Tenant) bool {
	deadline := time.Now().Add(h.heldWait())
	for time.Now().Before(deadline) && h.s.Ctx().Err() == nil {
		ctx, cancel := h.s.AttemptCtx(1)
		n, err := h.parts.API.Faults.PublicationsHeld(ctx, 0, tn)
		cancel()
		if err == nil && n > 0 {
			return true
		}
		h.s.SleepUntil(time.Now().Add(20 * time.Millisecond))
	}
	return false
}

// cutEventsLink cuts the API's link to the broker while it answers the attempt, and heals it a
// moment later.
func (h *hops) cutEventsLink(forward func() answer) answer {
	api := h.parts.API
	if why := api.Faults.EventsLinkSkip(h.pub); why != "" {
		h.s.Notef("the API→broker hop: not cut: %s", why)
		return forward()
	}
	cut := api.Faults.CutEventsLink(h.pub)
	if err := h.s.Inject(cut); err != nil {
		h.s.Notef("the API→broker hop: %v", err)
		return forward()
	}
	ans := forward()
	h.wg.Go(func() {
		h.s.SleepUntil(time.Now().Add(linkCutFor))
		h.heal(cut)
	})
	return ans
}

// killConsumerBeforeAck silences the consumer's link, sends the attempt on, and, once the
// consumer applied the operation's event (its ack lost on the silent link), SIGKILLs every
// consumer instance, heals the link and restarts them: the broker (or the API, for a webhook)
// delivers the event again.
func (h *hops) killConsumerBeforeAck(ref string, forward func() answer) answer {
	cons := h.parts.Consumer
	c := h.parts.Chain.EventConsumer()
	link := h.parts.ConsumerLink()
	if link == nil || cons.Faults.Cluster == nil {
		h.s.Notef("the consumer's hop: consumer %s has no link the harness proxies, or no lifecycle: not killed before its ack", c.Name)
		return forward()
	}
	// The ack goes up a broker link (the consumer is its client), and down the receiver's link
	// to a webhook consumer (the consumer answers).
	silence, before := link.Timeout(0, faults.Upstream), "before its ack reached the broker"
	if !c.IsQueue() {
		before = "before its answer reached the API"
		silence = renamed(link.Timeout(0, faults.Downstream), "receiver→consumer",
			"the link from the harness's receiver to the consumer: the consumer's answers silenced (the API sees no 2xx)")
	}
	if err := h.s.Inject(silence); err != nil {
		h.s.Notef("the consumer's hop: %v", err)
		return forward()
	}
	silenced := time.Now() // what arrives from now on, the consumer answers in silence
	ans := forward()
	h.wg.Go(func() {
		// An API delivers its webhooks one at a time, oldest first, and delivers the oldest
		// again until the consumer answers it: while the answers are silenced, the event the
		// consumer applies is the oldest pending, which may be another operation's.
		anyEvent := !c.IsQueue()
		if !h.awaitApplied(ref, anyEvent, silenced) {
			h.s.Notef("the consumer's hop: ref %s's event was not applied within %v of its answer: the kill came without it", ref, h.appliedWait())
		}
		kills := make([]faults.Fault, cons.Faults.Cluster.Size())
		for i := range kills {
			kills[i] = renamed(cons.Faults.Cluster.KillFault(i), fmt.Sprintf("consumer instance %d", i),
				fmt.Sprintf("SIGKILL the consumer's instance %d %s (healed by a restart)", i, before))
			h.s.Inject(kills[i])
		}
		h.heal(silence)
		for _, k := range kills {
			h.heal(k)
		}
	})
	return ans
}

// awaitApplied waits until the consumer applied ref's event (as the harness observed it, named
// by ref or by the record ref's 2xx answers name), or, with anyEvent, any event observed since.
func (h *hops) awaitApplied(ref string, anyEvent bool, since time.Time) bool {
	deadline := time.Now().Add(h.appliedWait())
	for time.Now().Before(deadline) && h.s.Ctx().Err() == nil {
		evs := h.s.eventsOf(h.parts, h.pub, h.start, ties(h.pub, ref, h.attemptsOf(ref)))
		if anyEvent {
			evs = nil
			for _, e := range h.parts.API.EventsSeen(h.pub, since) {
				if e.Err == "" {
					evs = append(evs, e)
				}
			}
		}
		for _, e := range evs {
			if n, err := h.s.effects(h.parts, e); err == nil && n > 0 {
				return true
			}
		}
		h.s.SleepUntil(time.Now().Add(50 * time.Millisecond))
	}
	return false
}

// attemptsOf returns the client's attempts of ref that reached the API so far.
func (h *hops) attemptsOf(ref string) []history.Attempt {
	var out []history.Attempt
	for a := range h.s.History.After(0) {
		if !a.IsEvent() && a.Identity == ref {
			out = append(out, a)
		}
	}
	return out
}

// heal heals a fault and notes when the chain resumed.
func (h *hops) heal(f faults.Fault) {
	h.s.Heal(f)
	h.mu.Lock()
	h.resumed = time.Now()
	h.mu.Unlock()
}

// finish waits for the hops still healing and heals what is left.
func (h *hops) finish() time.Time {
	h.healCut()
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.resumed
}

// missed names the hops whose operation's first attempt never reached the API.
func (h *hops) missed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, hop := range hopOrder {
		if !h.hit[hop] {
			out = append(out, hop)
		}
	}
	return out
}

// renamed is f under another target and name, for a timeline with several clusters on it.
func renamed(f faults.Fault, target, name string) faults.Fault {
	kind, _ := faults.KindOf(f)
	return faults.Func(kind, target, name, f.Inject, f.Heal)
}
