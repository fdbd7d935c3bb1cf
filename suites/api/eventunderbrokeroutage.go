package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
// declared outage (publishes[].outage: the longest the team plans for) after the last is
// acknowledged (the API had to keep trying to publish them), and it is healed.
//
// Each step says whether it exercised what it names: no event taken while the answers were cut
// (a publisher that waits for the broker's answer before it sends) or nothing acknowledged
// while the link was cut makes the spec unknown with that sentence, never a pass; whatever any
// step observed stays a failure.
//
// The target MUST publish the event of every operation acknowledged with a 2xx within the
// declared time after its 2xx, or after the link was healed, under its one id: none lost, no
// second id for a publication retried after a lost confirm (copies under the one id are fine).
//
// Catches: dual-write (a publication from the request, failed, is never retried),
// relay-marks-on-error (a failed publication marked sent), relay-new-id (the retry after a
// lost confirm gets a new id), relay-gives-up (an event abandoned after 2 s of failures).
func init() {
	p := &Property{
		Name: "event-under-broker-outage",
		Must: `An operation whose publisher confirm is lost after the broker took its event, and operations acknowledged
while the API's link to its broker is cut for publishes[].outage, MUST each have their event published within
publishes[].within after their 2xx or after the link was healed, under one id (copies under that id are fine;
none lost, none under a new id).`,
		Catches: []string{"dual-write", "relay-marks-on-error", "relay-new-id", "relay-gives-up"},
		Needs: append([]string{"operations[].publishes", "lifecycle reaching where the events go through {{.EventsBroker}}",
			"publishes[].outage (how long the link stays cut after the last operation acknowledged while it is cut: the longest broker outage the team plans for; default publishes[].within; longer than --max-wait skips)"},
			eventsNeeds...),
		Labels: []string{framework.EventsLabel, "fault:network"},
		Covers: "each event each operation declares it publishes, behind {{.EventsBroker}}",
	}
	p.Specs = func(e *Env) []*Spec {
		return eventSpecs(p, e, func(def *targets.Operation, pub *targets.Publish) string {
			return fmt.Sprintf("%s: %s: one operation whose confirm is lost, then %d acknowledged while the broker link is cut for %v, publish their events under one id each",
				def.Name, pub.Name, outageOps, pub.Outage)
		}, func(s *S, def *targets.Operation, pub *targets.Publish) check.Result {
			return s.eventUnderBrokerOutage(def, pub)
		},
			e.Faults.EventsLinkSkip, outageSkip(e))
	}
	register(p)
}

// outageOps is how many operations are sent while the link is cut.
const outageOps = 3

// outageSkip says why the link cannot stay cut the declared outage in this run: longer than
// --max-wait.
func outageSkip(e *Env) func(*targets.Publish) string {
	return func(pub *targets.Publish) string {
		if pub.Outage > e.Settings.MaxWait {
			return fmt.Sprintf("event %s: the broker link would stay cut %v (publishes[].outage), longer than --max-wait %v", pub.Name, pub.Outage, e.Settings.MaxWait)
		}
		return ""
	}
}

// eventUnderBrokerOutage runs the first operation, the lost confirm, the cut and the wait, and
// checks every operation's events. A step that could not run (the nemesis failed) ends the
// faults; what the steps before it observed is judged all the same (but for an event that did
// not come in time where a fault could not be healed: Step.Unhealed).
func (s *S) eventUnderBrokerOutage(def *targets.Operation, pub *targets.Publish) check.Result {
	start := time.Now()
	first, err := s.linkWorks(def, pub, start)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	var before []string
	if pub.Tie.Record {
		before = s.recordsBefore(def, pub, start) // an earlier spec's event, published late
	}
	ops := []check.EventOp{first}
	spec := slices.Clone(first.Ties)
	faulted := check.Events{}
	lost, step, ok := s.loseConfirm(def, pub, spec, before)
	if lost != nil {
		ops = append(ops, *lost)
	}
	if ok && !step.Exercised {
		// The cut may have caught the first operation's confirm on its way back while nothing
		// new was published (a publisher that publishes one event at a time waits for it, and
		// no new link opens through the cut): once more, the link shown to work first.
		firstTry := step.Note
		again, err := s.linkWorks(def, pub, time.Now())
		if err == nil {
			ops = append(ops, again)
			spec = append(spec, again.Ties...)
			if lost != nil {
				spec = append(spec, lost.Ties...)
			}
			lost, step, ok = s.loseConfirm(def, pub, spec, before)
			if lost != nil {
				ops = append(ops, *lost)
			}
			step.Note = fmt.Sprintf("%s (a second try: the first %s)", step.Note, firstTry)
		} else {
			step.Note = fmt.Sprintf("%s (no second try: %v)", firstTry, err)
		}
	}
	faulted.Steps = append(faulted.Steps, step)
	if ok {
		cut, step := s.cutWhileAcknowledged(def, pub)
		ops = append(ops, cut.ops...)
		faulted.Steps = append(faulted.Steps, step)
		faulted.Resumed, faulted.ResumedBy = cut.healed, "the heal of the broker link"
	}
	return check.EventUnderBrokerOutage(ops, s.awaitEventsAfter(def, pub, start, ops, faulted))
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

// The names of the steps, as the report says them.
const (
	stepLostConfirm = "the lost confirm"
	stepOutage      = "the broker outage"
)

// linkPhase is what the cut of the broker link left: its operations, and when the link was
// healed.
type linkPhase struct {
	ops    []check.EventOp
	healed time.Time
}

// cutWhileAcknowledged cuts the link, sends the operations while it is cut, keeps it cut the
// declared outage after the last answer (a conforming API kept trying to publish through it),
// and heals it. The step exercised what it names when an operation was acknowledged while the
// link was cut: the API then had an event to publish through the outage.
func (s *S) cutWhileAcknowledged(def *targets.Operation, pub *targets.Publish) (linkPhase, check.Step) {
	var lp linkPhase
	step := check.Step{Name: stepOutage}
	cut := s.Faults.CutEventsLink(pub)
	if err := s.Inject(cut); err != nil {
		step.Note = fmt.Sprintf("the nemesis could not cut the link: %v", err)
		return lp, step
	}
	defer s.Heal(cut)
	cutAt, last, acked := time.Now(), time.Now(), 0
	var answers []string
	for range outageOps {
		op := s.NewOp(def)
		a := op.Do(framework.Send{Instance: -1})
		last = a.End
		if framework.Succeeded(a) {
			acked++
		}
		answers = append(answers, answerWords(a))
		lp.ops = append(lp.ops, s.eventOp(op, pub, []history.Attempt{a}))
	}
	if acked == 0 {
		step.Note = fmt.Sprintf("no operation was acknowledged while the broker link was cut (%s): the API had nothing to publish through the outage",
			strings.Join(answers, ", "))
	} else if !s.WaitUntil(fmt.Sprintf("the outage (publishes[].outage %s) with the broker link cut", framework.Seconds(pub.Outage)), last.Add(pub.Outage)) {
		step.Note = "interrupted during the outage"
		return lp, step
	}
	if err := s.Heal(cut); err != nil {
		step.Note = fmt.Sprintf("the nemesis could not heal the link: %v", err)
		step.Unhealed = true
		return lp, step
	}
	lp.healed = time.Now()
	if acked > 0 {
		step.Exercised = true
		step.Note = fmt.Sprintf("%d of %d operations acknowledged while the link was cut, which stayed cut %v after the last answer (%v in all)",
			acked, outageOps, lp.healed.Sub(last).Round(time.Millisecond), lp.healed.Sub(cutAt).Round(time.Millisecond))
	}
	return lp, step
}

// takenWords says which publications the broker took while its answers were cut.
func takenWords(ours, others int, name, ref string) string {
	switch {
	case others == 0:
		return fmt.Sprintf("%d publication(s) of %s ref %s", ours, name, ref)
	case ours == 0:
		return fmt.Sprintf("%d publication(s) of an earlier operation's event (its confirm caught by the cut) and none of %s ref %s yet", others, name, ref)
	}
	return fmt.Sprintf("%d publication(s) of %s ref %s and %d of an earlier operation's event", ours, name, ref, others)
}

// answerWords says how an attempt was answered, for a note.
func answerWords(a history.Attempt) string {
	if a.Outcome != history.OK {
		return fmt.Sprintf("#%d %s", a.Seq, a.Outcome)
	}
	return fmt.Sprintf("#%d %d", a.Seq, a.Status)
}

// loseConfirm cuts the link's return direction, sends one operation, waits until the broker
// took an event while its answers were cut (the operation's event, or a copy of one of the
// spec's earlier operations' whose answer the cut caught: the publisher sends it again first),
// and heals the cut, which closes the link: the publisher never got its confirm. spec are what
// the spec's earlier operations' events name, before the records earlier specs' answers named
// (record ties only: an event naming one came late, it is not this operation's). It returns the
// operation, retried to an answer, the step (it exercised what it names when the broker took an
// event the spec judges while its answers were cut) and whether the spec goes on (the nemesis
// did its part).
func (s *S) loseConfirm(def *targets.Operation, pub *targets.Publish, spec, before []string) (*check.EventOp, check.Step, bool) {
	step := check.Step{Name: stepLostConfirm}
	lose := s.Faults.LoseEventConfirms(pub)
	silenced := time.Now()
	if err := s.Inject(lose); err != nil {
		step.Note = fmt.Sprintf("the nemesis could not cut the broker's answers: %v", err)
		return nil, step, false
	}
	defer s.Heal(lose)
	cut := time.Now() // the answers are cut from here on: whatever the broker takes now loses its confirm
	op := s.NewOp(def)
	ctx, cancel := context.WithCancel(s.Ctx())
	defer cancel()
	done := make(chan history.Attempt, 1)
	go func() { done <- op.DoCtx(ctx, framework.Send{Instance: -1}) }()
	var first history.Attempt
	answered := false
	deadline := time.Now().Add(max(pub.Within, s.Settings.AttemptTimeout))
	ours := func(e check.Event) bool {
		return e.Tie == op.Ref || pub.Tie.Record && !slices.Contains(spec, e.Tie) && !slices.Contains(before, e.Tie)
	}
	// taken are the publications the broker took while its answers were cut: this operation's
	// event, or an earlier operation's of the spec whose confirm the cut caught on its way back
	// (the first operation's event arrived, its answer did not: the publisher publishes it
	// again, oldest first, before this one's). Either way a confirm was lost, and each is
	// judged. An earlier spec's event (a late copy) is neither: its republication is not judged.
	taken := func(until time.Time) (ourN, otherN int) {
		for _, e := range s.EventsSeen(pub, silenced) {
			switch {
			case !e.At.Before(until):
			case ours(e):
				ourN++
			case slices.Contains(spec, e.Tie) && !e.At.Before(cut):
				otherN++
			}
		}
		return ourN, otherN
	}
	took := false
	for !took && time.Now().Before(deadline) && s.Ctx().Err() == nil {
		if !answered {
			select {
			case first = <-done:
				answered, deadline = true, first.End.Add(pub.Within)
			default:
			}
		}
		if n, m := taken(time.Now()); n+m > 0 {
			took = true
		} else {
			s.SleepUntil(time.Now().Add(heldPoll))
		}
	}
	healErr := s.Heal(lose)
	healed := time.Now()
	ourN, otherN := taken(healed)
	if !answered {
		first = <-done // a publication from the request learns now that it lost the link
	}
	atts := []history.Attempt{first}
	if healErr == nil && !framework.Succeeded(first) {
		atts = append(atts, s.Eventually(op, s.stuckAfter(), framework.Succeeded).Attempts...)
	}
	eo := s.eventOp(op, pub, atts)
	switch {
	case healErr != nil:
		step.Note = fmt.Sprintf("the nemesis could not heal the broker's answers: %v", healErr)
		step.Unhealed = true
		return &eo, step, false
	case !took:
		step.Note = fmt.Sprintf("the broker took no event of %s ref %s (nor another) while its answers were cut (%v): no confirm was lost "+
			"(a publisher that waits for the broker's answer before it sends, to open a channel or a connection, publishes nothing then)",
			def.Name, op.Ref, healed.Sub(silenced).Round(time.Millisecond))
	default:
		step.Exercised = true
		step.Note = fmt.Sprintf("the broker took %s while its answers were cut, their confirms lost; the link closed and healed %v after the cut",
			takenWords(ourN, otherN, def.Name, op.Ref), healed.Sub(silenced).Round(time.Millisecond))
	}
	return &eo, step, true
}
