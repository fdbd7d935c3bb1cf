package consumer

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// event-crash-after-claim: the consumer is SIGKILLed after it claimed an event and before its
// effect (the sink holds its downstream call, the nemesis kills the process), restarted on the
// same address and store, and the provider redelivers the event until a delivery is
// acknowledged.
//
// The consumer MUST acknowledge a redelivery within its lock timeout plus a margin and MUST
// apply the event exactly once. A redelivery acknowledged as a duplicate with no effect is a
// dropped event: the claim survived the crash, the effect did not.
//
// Catches: claim-before-effect (the claim commits in its own transaction before the effect).
func init() {
	p := &Property{
		Name: "event-crash-after-claim",
		Must: `After a consumer is SIGKILLed between claiming an event and applying its effect and is
restarted, a redelivery of the event MUST be acknowledged within the consumer's lock timeout plus a
margin and the event MUST take effect exactly once (acknowledged with no effect is a dropped event).`,
		Catches: []string{"claim-before-effect"},
		Needs: []string{"lifecycle (durable: true)", "downstream (holds the consumer between its claim and its effect)",
			"consumers[].lock_timeout", "consumers[].effects"},
		Labels:     []string{"fault:process", "fault:downstream"},
		Transports: []targets.Transport{targets.TransportWebhook},
		Applies: func(e *Env) string {
			switch {
			case e.Faults.Cluster == nil:
				return "the target declares no lifecycle: the harness cannot kill and restart the consumer"
			case !e.Target.Lifecycle.Durable:
				return "the target's store is not durable (lifecycle.durable is false): a killed consumer loses its claims and effects"
			case e.Faults.Sink == nil:
				return "the target declares no downstream: nothing can hold the consumer between its claim and its effect (crash-under-delivery kills it in the middle of its handlings black-box)"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return p.ConsumerSpecs(e, func(c *targets.Consumer) *Spec {
			text := c.Name + ": after a SIGKILL between claim and effect and a restart, the redelivered event takes effect once"
			switch {
			case c.LockTimeout <= 0:
				return &Spec{Property: p, Text: text, Skip: "the consumer declares no lock_timeout: how long a killed delivery's claim holds the event cannot be told"}
			case e.RedeliverySkip(c, true) != "":
				return &Spec{Property: p, Text: text, Skip: e.RedeliverySkip(c, true)}
			}
			return spec(p, text, func(s *S) check.Result { return s.eventCrashAfterClaim(s.NewEvent(c)) })
		})
	}
	register(p)
}

// eventCrashAfterClaim holds the event's downstream call, kills the consumer instance that
// holds it, restarts it, and redelivers until the event is acknowledged.
func (s *S) eventCrashAfterClaim(ev *Event) check.Result {
	hold := s.Faults.Sink.HoldFault()
	if err := s.Inject(hold); err != nil {
		return check.Unknownf("%v", err)
	}
	defer s.Heal(hold)
	firstDone := make(chan history.Attempt, 1)
	go func() { firstDone <- ev.Deliver(Delivery{Instance: 0}) }()
	if err := s.WaitHeld(1); err != nil {
		s.Heal(hold) // the delivery then ends on its own
		<-firstDone
		return check.Unknownf("the consumer never called its downstream for event %s: %v", ev.ID, err)
	}
	kill := s.Faults.Cluster.KillFault(0)
	if err := s.Inject(kill); err != nil {
		s.Heal(hold)
		<-firstDone
		return check.Unknownf("%v", err)
	}
	first := <-firstDone
	if s.Ctx().Err() != nil {
		return check.Unknownf("interrupted before the restart")
	}
	if err := s.Heal(kill); err != nil {
		return check.Unknownf("cannot restart the consumer: %v", err)
	}
	s.Client.CloseIdle() // connections to the killed process are dead
	if err := s.Heal(hold); err != nil {
		return check.Unknownf("%v", err)
	}
	again := ev.redeliver(s.claimWait(ev.C), 0)
	return check.EventCrashAfterClaim(first, again, ev.Effects())
}
