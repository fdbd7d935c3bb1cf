package api

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// event-under-broker-outage: the API's link to where its events go (its broker, or the
// harness's receiver) runs through a fault proxy ({{.EventsBroker}}). Once an operation's event
// shows the link works, the link's return direction is cut, an operation is sent, and once the
// broker took its event the link is closed: the publisher confirm (the JetStream ack, the
// webhook's 2xx) is lost. Then operations are sent while the link is cut, the cut lasts the
// declared time after the last is acknowledged (the API had to try to publish them), and it is
// healed.
//
// The target MUST publish the event of every operation acknowledged with a 2xx within the
// declared time after its 2xx, or after the link was healed, under its one id: none lost, no
// second id for a publication retried after a lost confirm (copies under the one id are fine).
//
// Catches: dual-write (a publication from the request, failed, is never retried),
// relay-marks-on-error (a failed publication marked sent), relay-new-id (the retry after a
// lost confirm gets a new id).
func init() {
	p := &Property{
		Name: "event-under-broker-outage",
		Must: `An operation whose publisher confirm is lost after the broker took its event, and operations acknowledged
while the API's link to its broker is cut, MUST each have their event published within publishes[].within
after their 2xx or after the link was healed, under one id (copies under that id are fine; none lost, none
under a new id).`,
		Catches: []string{"dual-write", "relay-marks-on-error", "relay-new-id"},
		Needs:   []string{"operations[].publishes", "lifecycle reaching where the events go through {{.EventsBroker}}"},
		Labels:  []string{framework.EventsLabel, "fault:network"},
		Covers:  "each event each operation declares it publishes, behind {{.EventsBroker}}",
	}
	p.Specs = func(e *Env) []*Spec {
		return eventSpecs(p, e, func(def *targets.Operation, pub *targets.Publish) string {
			return fmt.Sprintf("%s: %s: one operation whose confirm is lost, then %d acknowledged while the broker link is cut, publish their events under one id each",
				def.Name, pub.Name, outageOps)
		}, func(s *S, def *targets.Operation, pub *targets.Publish) check.Result {
			return s.eventUnderBrokerOutage(def, pub)
		},
			e.Faults.EventsLinkSkip)
	}
	register(p)
}

// outageOps is how many operations are sent while the link is cut.
const outageOps = 3

// eventUnderBrokerOutage runs the first operation, the lost confirm, the cut and the wait, and
// checks every operation's events.
func (s *S) eventUnderBrokerOutage(def *targets.Operation, pub *targets.Publish) check.Result {
	start := time.Now()
	first, err := s.linkWorks(def, pub, start)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	earlier := first.Ties
	if pub.Tie.Record {
		earlier = append(earlier, s.recordsBefore(def, pub, start)...) // an earlier spec's event, published late
	}
	lost, err := s.loseConfirm(def, pub, earlier)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	cut, err := s.cutWhileAcknowledged(def, pub)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	ops := append([]check.EventOp{first, lost}, cut.ops...)
	return check.EventUnderBrokerOutage(ops, s.awaitEventsResumed(def, pub, start, ops, cut.healed, "the heal of the broker link"))
}

// linkWorks sends one operation with the link whole and waits, at most the declared time after
// its 2xx, until its event was observed: the API's publisher holds a link to the broker (a new
// link through a cut return direction could not be opened: the broker speaks first on AMQP and
// NATS).
func (s *S) linkWorks(def *targets.Operation, pub *targets.Publish, start time.Time) (check.EventOp, error) {
	op := s.NewOp(def)
	a := op.Do(framework.Send{Instance: -1})
	eo := s.eventTies(op, pub, []history.Attempt{a})
	if !framework.Succeeded(a) {
		return eo, fmt.Errorf("the first operation, with the broker link whole, was not acknowledged (#%d, %d %s)", a.Seq, a.Status, a.Outcome)
	}
	for deadline := a.End.Add(pub.Within); time.Now().Before(deadline); {
		if slices.ContainsFunc(s.EventsSeen(pub, start), func(e check.Event) bool { return slices.Contains(eo.Ties, e.Tie) }) ||
			!s.SleepUntil(time.Now().Add(heldPoll)) {
			return eo, nil
		}
	}
	s.Notef("the event of %s ref %s was not observed within %v of its 2xx with the broker link whole", def.Name, op.Ref, pub.Within)
	return eo, nil
}

// linkPhase is what the cut of the broker link left: its operations, and when the link was
// healed.
type linkPhase struct {
	ops    []check.EventOp
	healed time.Time
}

// cutWhileAcknowledged cuts the link, sends the operations while it is cut, keeps it cut the
// declared time after the last answer (a conforming API tried to publish within it), and heals
// it.
func (s *S) cutWhileAcknowledged(def *targets.Operation, pub *targets.Publish) (linkPhase, error) {
	var lp linkPhase
	cut := s.Faults.CutEventsLink(pub)
	if err := s.Inject(cut); err != nil {
		return lp, err
	}
	defer s.Heal(cut)
	last, acked := time.Now(), 0
	for range outageOps {
		op := s.NewOp(def)
		a := op.Do(framework.Send{Instance: -1})
		last = a.End
		if framework.Succeeded(a) {
			acked++
		}
		lp.ops = append(lp.ops, s.eventTies(op, pub, []history.Attempt{a}))
	}
	if acked == 0 {
		return lp, fmt.Errorf("no operation was acknowledged while the broker link was cut: nothing had to be published")
	}
	if !s.WaitUntil(fmt.Sprintf("publishes[].within (%s) with the broker link cut", framework.Seconds(pub.Within)), last.Add(pub.Within)) {
		return lp, fmt.Errorf("interrupted")
	}
	if err := s.Heal(cut); err != nil {
		return lp, err
	}
	lp.healed = time.Now()
	s.Notef("broker link cut while %d of %d operations were acknowledged, healed %v after the last answer", acked, outageOps,
		lp.healed.Sub(last).Round(time.Millisecond))
	return lp, nil
}

// loseConfirm cuts the link's return direction, sends one operation, waits until the broker
// took an event the spec's earlier operations do not name (its event), and heals the cut, which
// closes the link: the publisher never got its confirm. It returns the operation, retried to an
// answer.
func (s *S) loseConfirm(def *targets.Operation, pub *targets.Publish, earlier []string) (check.EventOp, error) {
	lose := s.Faults.LoseEventConfirms(pub)
	silenced := time.Now()
	if err := s.Inject(lose); err != nil {
		return check.EventOp{}, err
	}
	defer s.Heal(lose)
	op := s.NewOp(def)
	ctx, cancel := context.WithCancel(s.Ctx())
	defer cancel()
	done := make(chan history.Attempt, 1)
	go func() { done <- op.DoCtx(ctx, framework.Send{Instance: -1}) }()
	var first history.Attempt
	answered := false
	deadline := time.Now().Add(max(pub.Within, s.Settings.AttemptTimeout))
	took := false
	for !took && time.Now().Before(deadline) && s.Ctx().Err() == nil {
		if !answered {
			select {
			case first = <-done:
				answered, deadline = true, first.End.Add(pub.Within)
			default:
			}
		}
		took = slices.ContainsFunc(s.EventsSeen(pub, silenced), func(e check.Event) bool {
			return e.Tie == op.Ref || pub.Tie.Record && !slices.Contains(earlier, e.Tie)
		})
		if !took {
			s.SleepUntil(time.Now().Add(heldPoll))
		}
	}
	if err := s.Heal(lose); err != nil {
		return check.EventOp{}, err
	}
	healed := time.Now()
	if !answered {
		first = <-done // a publication from the request learns now that it lost the link
	}
	atts := []history.Attempt{first}
	if !framework.Succeeded(first) {
		atts = append(atts, s.Eventually(op, s.stuckAfter(), framework.Succeeded).Attempts...)
	}
	if !took {
		s.Notef("the broker took no event of %s ref %s while the confirms were cut (%v): no confirm was lost, only the cut is judged",
			def.Name, op.Ref, time.Since(silenced).Round(time.Millisecond))
	} else {
		s.Notef("the broker took the event of %s ref %s, its confirm was lost, the link closed and healed %v after the return direction was cut",
			def.Name, op.Ref, healed.Sub(silenced).Round(time.Millisecond))
	}
	return s.eventTies(op, pub, atts), nil
}
