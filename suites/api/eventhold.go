package api

import (
	"context"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The kill inside the hold between a commit and its publication (event-after-crash, where the
// target declares hooks.hold_publish): the harness holds every instance's publications, sends an
// operation, and kills every instance once one holds a publication, when the operation was
// acknowledged (its event is committed, and cannot have been published) or while it is still in
// flight (a publication from the request, held there). The kill rests on no chance.

// heldPoll is how often the harness asks the instances how many publications they hold.
const heldPoll = 20 * time.Millisecond

// stepHoldKill names the step of the kill inside the hold.
const stepHoldKill = "the kill inside the hold"

// killInHold runs the hold, the operation and the kill, restarts every instance and heals the
// hold. It returns the operation (acknowledged or not; nil when none was sent), when the
// instances were ready again, and the step: it exercised what it names when an instance held a
// committed publication (or one from the request in flight) when every instance was killed.
func (s *S) killInHold(def *targets.Operation, pub *targets.Publish) (*loadOp, time.Time, check.Step) {
	step := check.Step{Name: stepHoldKill}
	op := s.NewOp(def)
	hold := s.Faults.HoldPublications(op.Tenant)
	if err := s.Inject(hold); err != nil {
		step.Note = fmt.Sprintf("the hold_publish hook could not hold the publications: %v", err)
		step.Unhealed = true // an instance may hold them, until the spec's faults are healed
		return nil, time.Time{}, step
	}
	defer s.Heal(hold)
	before, err := s.held(op.Tenant)
	if err != nil {
		step.Note = fmt.Sprintf("the hold_publish hook could not count what it held: %v", err)
		step.Unhealed = true // released only when this returns
		return nil, time.Time{}, step
	}
	ctx, cancel := context.WithCancel(s.Ctx())
	defer cancel()
	done := make(chan history.Attempt, 1)
	go func() { done <- op.DoCtx(ctx, framework.Send{Instance: 0}) }()
	first, answered, why := s.awaitHeld(op, pub, before, done)
	if why != "" {
		if err := s.Heal(hold); err != nil { // a publication it held may go now, before the operation is judged
			why += fmt.Sprintf("; the release of the hold failed: %v", err)
			step.Unhealed = true
		}
		if !answered {
			cancel()
			first = <-done
		}
		step.Note = why
		return &loadOp{op: op, acked: framework.Succeeded(first)}, time.Time{}, step
	}
	kills := make([]faults.Fault, s.Faults.Cluster.Size())
	for i := range kills {
		kills[i] = s.Faults.Cluster.KillFault(i)
		defer s.Heal(kills[i]) // a restart, unless healed below: nothing after the spec finds them dead
		if err := s.Inject(kills[i]); err != nil {
			step.Note = fmt.Sprintf("the nemesis could not kill instance %d: %v", i, err)
			step.Unhealed = i > 0 // the instances killed before it restart only when this returns
			return nil, time.Time{}, step
		}
	}
	if !answered {
		first = <-done // cut by the kill
	}
	step.Note = fmt.Sprintf("every instance killed at %s while one held the publication of %s ref %s, which %s", time.Now().Format("15:04:05.000"),
		def.Name, op.Ref, heldWhile(first, answered))
	s.Notef("kill inside the hold at %s: %s ref %s %s", time.Now().Format("15:04:05.000"), def.Name, op.Ref, heldWhile(first, answered))
	for _, k := range kills {
		if err := s.Heal(k); err != nil {
			step.Note = fmt.Sprintf("the nemesis could not restart an instance after the kill inside the hold: %v", err)
			step.Unhealed = true
			return nil, time.Time{}, step
		}
	}
	restarted := time.Now()
	s.Client.CloseIdle() // connections to the killed processes are dead
	if err := s.Heal(hold); err != nil {
		step.Note = fmt.Sprintf("the hold_publish hook could not release the publications: %v", err)
		step.Unhealed = true
		return nil, time.Time{}, step
	}
	step.Exercised = true
	return &loadOp{op: op, acked: framework.Succeeded(first)}, restarted, step
}

// held is how many publications the running instances hold now.
func (s *S) held(tn *targets.Tenant) (int, error) {
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	total := 0
	for i := range s.Target.Instances {
		n, err := s.Faults.PublicationsHeld(ctx, i, tn)
		if err != nil {
			return 0, fmt.Errorf("instance %d: %w", i, err)
		}
		total += n
	}
	return total, nil
}

// awaitHeld waits until the instances hold a publication once op was acknowledged, or hold more
// than before while op is in flight. A conforming API begins its publication within the
// declared time after the 2xx; a request that never answers is bounded by the attempt timeout.
// It returns op's attempt when it answered first, and why it stopped without a hold ("" when
// one is held).
func (s *S) awaitHeld(op *framework.Op, pub *targets.Publish, before int, done <-chan history.Attempt) (history.Attempt, bool, string) {
	var a history.Attempt
	answered := false
	deadline := time.Now().Add(max(pub.Within, s.Settings.AttemptTimeout))
	for {
		if !answered {
			select {
			case a = <-done:
				answered = true
				deadline = a.End.Add(pub.Within)
			default:
			}
		}
		n, err := s.held(op.Tenant)
		switch {
		case err != nil:
			return a, answered, err.Error()
		case answered && !framework.Succeeded(a):
			return a, answered, fmt.Sprintf("the operation held for a kill between its commit and its publication failed (#%d, %s): nothing was committed", a.Seq, a.Outcome)
		case answered && n > 0, !answered && n > before:
			return a, answered, ""
		case time.Now().After(deadline):
			return a, answered, fmt.Sprintf("the hold_publish hook held no publication (held %d, %d before the operation) by %v after the operation %s",
				n, before, pub.Within, heldWhile(a, answered))
		case !s.SleepUntil(time.Now().Add(heldPoll)):
			return a, answered, "interrupted"
		}
	}
}

// heldWhile says where the operation was when the hold was seen.
func heldWhile(a history.Attempt, answered bool) string {
	if !answered {
		return "was in flight (held in the request)"
	}
	return fmt.Sprintf("was answered %d (#%d)", a.Status, a.Seq)
}
