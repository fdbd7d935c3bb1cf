package consumer

import (
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// failed-then-redelivered: the consumer's first attempt at an event fails because its
// downstream fails (the harness's sink answers its call with a 503, injected through the
// nemesis) or, for a consumer that calls nothing of the harness's, because its fail_next hook
// was armed for the event, so the consumer answers a 5xx (a webhook) or does not acknowledge (a
// queue consumer); the provider redelivers (the harness for a webhook, the broker for a queue).
//
// The consumer MUST apply the redelivered event exactly once, not zero times: a failed attempt
// must not leave the event marked as seen.
//
// Catches: marks-seen-on-failure (the redelivery is acknowledged as a duplicate, nothing ever
// happens).
func init() {
	p := &Property{
		Name: "failed-then-redelivered",
		Must: `When a consumer's first attempt at an event fails (its downstream failed, or its fail_next hook
failed the handling) and it answers a 5xx or does not acknowledge, the redelivery MUST be acknowledged
and the event MUST take effect exactly once: a failed attempt never marks the event as seen.`,
		Catches: []string{"marks-seen-on-failure"},
		Needs: []string{"consumers[].effects",
			"downstream (the consumer calls the harness's sink for its effect) or consumers[].hooks.fail_next (a consumer that calls nothing of the harness's)"},
		Transports: []targets.Transport{targets.TransportWebhook, targets.TransportAMQP, targets.TransportNATS},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			switch {
			case e.Faults.Sink != nil:
				sp := spec(p, c.Name+": an event whose first attempt failed downstream (the sink answered 503) takes effect once when redelivered",
					func(s *S) check.Result { return s.failedThenRedelivered(c, s.failDownstream) })
				sp.Extra = append(sp.Extra, "fault:downstream")
				return sp
			case c.Hooks.CanFail():
				sp := spec(p, c.Name+": an event whose first handling the fail_next hook failed takes effect once when redelivered",
					func(s *S) check.Result { return s.failedThenRedelivered(c, s.failByHook) })
				sp.Extra = append(sp.Extra, "fault:hook")
				return sp
			}
			return &Spec{Property: p, Text: c.Name + ": an event whose first attempt failed takes effect once when redelivered",
				Skip: "the target declares no downstream and the consumer no hooks.fail_next: nothing can make its handling fail"}
		})
	}
	register(p)
}

// failure makes the first attempt at an event fail: it arms the failure, delivers the event
// once and says how it failed (an unknown result when it could not be armed).
type failure func(ev *Event) (first history.Attempt, f check.Failure, r check.Result, ok bool)

// failedThenRedelivered fails the first attempt at a fresh event, redelivers a webhook event
// that was not acknowledged (a broker redelivers on its own), and judges the effects once settled.
func (s *S) failedThenRedelivered(c *targets.Consumer, fail failure) check.Result {
	ev := s.NewEvent(c)
	first, f, r, ok := fail(ev)
	if !ok {
		return r
	}
	var again check.Eventually
	if !c.IsQueue() && !framework.Succeeded(first) && (f.Hooked || f.Calls > 0) {
		again = ev.redeliver(consumerLockWait(c), 1)
	}
	return check.FailedThenRedelivered(first, f, again, s.settle(ev))
}

// failDownstream makes the sink answer the event's first downstream call with a 503.
func (s *S) failDownstream(ev *Event) (history.Attempt, check.Failure, check.Result, bool) {
	fail := s.Faults.Sink.FailFault(1, http.StatusServiceUnavailable)
	before := len(s.Faults.Sink.Calls())
	if err := s.Inject(fail); err != nil {
		return history.Attempt{}, check.Failure{}, check.Unknownf("%v", err), false
	}
	first := ev.Deliver(Delivery{Instance: 0})
	failed := s.waitFailedCalls(ev, before, brokerSettle)
	if err := s.Heal(fail); err != nil {
		return first, check.Failure{}, check.Unknownf("%v", err), false
	}
	return first, check.Failure{Calls: failed}, check.Result{}, true
}

// failByHook sends the consumer's fail_next hook for the event to every instance (the first
// handling fails on whichever handles it), then delivers it.
func (s *S) failByHook(ev *Event) (history.Attempt, check.Failure, check.Result, bool) {
	for i := range s.Target.Instances {
		if err := s.Inject(s.Faults.ConsumerFailNext(ev.C, i, ev.vars())); err != nil {
			return history.Attempt{}, check.Failure{}, check.Unknownf("%v", err), false
		}
	}
	return ev.Deliver(Delivery{Instance: 0}), check.Failure{Hooked: true}, check.Result{}, true
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
		if n > 0 || ev.C.Transport == targets.TransportWebhook || time.Now().After(deadline) || s.Ctx().Err() != nil {
			s.Notef("downstream: %d calls failed with 503 while event %s was delivered", n, ev.ID)
			return n
		}
		s.SleepUntil(time.Now().Add(20 * time.Millisecond))
	}
}
