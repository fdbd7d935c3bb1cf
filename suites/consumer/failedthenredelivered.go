package consumer

import (
	"fmt"
	"net/http"
	"strings"
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
		SpecLabels: []string{"fault:downstream", "fault:hook"}, // the sink path, or the fail_next hook
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecsEach(e, func(c *targets.Consumer) []*Spec { return failedThenRedeliveredSpecs(p, e, c) })
	}
	register(p)
}

// failedThenRedeliveredSpecs are the specs of failed-then-redelivered on c: the downstream failed
// (a sink is declared), or one per point of its fail_next hook, each naming its point.
func failedThenRedeliveredSpecs(p *Property, e *Env, c *targets.Consumer) []*Spec {
	switch {
	case e.Faults.Sink != nil:
		sp := spec(p, c.Name+": an event whose first attempt failed downstream (the sink answered 503) takes effect once when redelivered",
			func(s *S) check.Result { return s.failedThenRedelivered(c, s.failDownstream) })
		sp.Extra = append(sp.Extra, "fault:downstream")
		sp.Skip = e.RedeliverySkip(c, true)
		return []*Spec{sp}
	case c.Hooks.CanFail():
		var out []*Spec
		for _, hook := range c.Hooks.FailNext {
			sp := spec(p, fmt.Sprintf("%s: an event whose first handling the fail_next hook failed%s takes effect once when redelivered", c.Name, failHookText(hook)),
				func(s *S) check.Result { return s.failedThenRedelivered(c, s.failByHook(hook)) })
			sp.Extra = append(sp.Extra, "fault:hook")
			sp.Skip = e.RedeliverySkip(c, true)
			out = append(out, sp)
		}
		return out
	}
	return []*Spec{{Property: p, Text: c.Name + ": an event whose first attempt failed takes effect once when redelivered",
		Skip: "the target declares no downstream and the consumer no hooks.fail_next: nothing can make its handling fail"}}
}

// failHookText says how a fail_next hook fails the handling, for a spec's text.
func failHookText(h *targets.FailHook) string {
	var parts []string
	switch h.When {
	case targets.FailBeforeEffect:
		parts = append(parts, " before its effect ("+h.When+")")
	case targets.FailAfterEffect:
		parts = append(parts, " after its effect ("+h.When+")")
	}
	switch {
	case h.Request == nil:
		parts = append(parts, ", through a header of its first delivery,")
	case h.AnyEvent:
		parts = append(parts, ", armed for the next handling of any event and the event sent alone,")
	}
	return strings.Join(parts, "")
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
		again = ev.redeliver(s.claimWait(c), 1)
	}
	effects := s.settle(ev)
	if c.IsQueue() && effects.Err == "" && effects.N > 0 {
		effects = s.settleRedelivered(ev)
	}
	return check.FailedThenRedelivered(first, f, again, effects)
}

// settleRedelivered counts a queue event's effects again once its broker's redelivery can have
// been handled: a handling that failed after its effect took effect at once, and a consumer that
// applies the redelivery again shows it only after the broker's redelivery clock. It waits until
// the broker holds nothing of the consumer's (JetStream tells: the redelivery acknowledged), or,
// where it cannot tell (RabbitMQ while consumers are attached), the clock's step and a moment
// more.
func (s *S) settleRedelivered(ev *Event) check.Count {
	c := ev.C
	if _, empty, _ := s.waitBrokerEmpty(c, s.settleWait(c)); !empty {
		step := s.Redelivery(c).Step
		s.WaitUntil(fmt.Sprintf("the broker's redelivery step (%s)", framework.Seconds(step)), time.Now().Add(step+duplicateGrace))
	}
	return ev.Effects()
}

// failDownstream makes the sink answer the event's first downstream call with a 503.
func (s *S) failDownstream(ev *Event) (history.Attempt, check.Failure, check.Result, bool) {
	fail := s.Faults.Sink.FailFault(1, http.StatusServiceUnavailable)
	before := len(s.Faults.Sink.Calls())
	if err := s.Inject(fail); err != nil {
		return history.Attempt{}, check.Failure{}, check.Unknownf("%v", err), false
	}
	first := ev.Deliver(Delivery{Instance: 0})
	failed := s.waitFailedCalls(ev, before, s.settleWait(ev.C))
	if err := s.Heal(fail); err != nil {
		return first, check.Failure{}, check.Unknownf("%v", err), false
	}
	return first, check.Failure{Calls: failed}, check.Result{}, true
}

// failByHook makes the first handling of an event fail through one of the consumer's fail_next
// hooks: its request sent to every instance before the delivery (the instances are disarmed
// when the spec ends, when the consumer declares a disarm hook), or its headers set on the first
// delivery only. A request that names no event arms the next handling of any: the event is then
// sent alone, once the broker holds nothing of earlier specs.
func (s *S) failByHook(hook *targets.FailHook) failure {
	return func(ev *Event) (history.Attempt, check.Failure, check.Result, bool) {
		f := check.Failure{Hooked: true, Point: hook.When}
		if hook.Request == nil {
			return ev.Deliver(Delivery{Instance: 0, Fail: hook}), f, check.Result{}, true
		}
		if hook.AnyEvent && ev.C.IsQueue() {
			if err := s.waitBrokerQuiet(ev.C); err != nil {
				return history.Attempt{}, f, check.Unknownf("%v", err), false
			}
		}
		for i := range s.Target.Instances {
			fail := s.Faults.ConsumerFailNext(ev.C, hook, i, ev.vars())
			s.atEnd = append(s.atEnd, fail) // disarms the instances that did not handle it
			if err := s.Inject(fail); err != nil {
				return history.Attempt{}, f, check.Unknownf("%v", err), false
			}
		}
		return ev.Deliver(Delivery{Instance: 0}), f, check.Result{}, true
	}
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
