package api

import (
	"context"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// slow-first-attempt: the client gives up while the first attempt is still processing (the
// downstream sink holds its call, longer than the client's timeout and shorter than the
// declared lock timeout) and retries.
//
// The target MUST answer the retry with the in-flight status (or, if the profile allows,
// wait and replay); it MUST NOT execute the operation a second time. Once released: one
// record, one downstream call.
//
// Catches: early-takeover (an in-progress key taken over after a tenth of the lock timeout).
func init() {
	p := &Property{
		Name: "slow-first-attempt",
		Must: `A retry sent while the first attempt is still processing (after the client gave up, before
the lock timeout) MUST get the in-flight status or wait for the replay, and MUST NOT execute the
operation again: once released, one record and one downstream call.`,
		Catches: []string{"early-takeover"},
		Needs:   []string{"downstream or hooks.slow (to hold a request in flight)", "lock_timeout"},
		Labels:  []string{"fault:downstream"},
		Covers:  "the first operation",
		Applies: func(e *Env) string {
			switch {
			case e.Faults.Sink == nil && !e.Target.Hooks.CanSlow():
				return "the target declares neither a downstream binding nor a slow hook: nothing can hold a request in flight"
			case asyncBeforeAnswer(e, e.Target.Hooks.CanSlow(), "holds the request itself (hooks.slow)") != "":
				return asyncBeforeAnswer(e, false, "holds the request itself (hooks.slow)")
			case e.Target.LockTimeout <= 0:
				return "the target declares no lock_timeout"
			case e.Target.LockTimeout/3 > e.Settings.MaxWait:
				return fmt.Sprintf("a third of the lock timeout %v is longer than --max-wait %v", e.Target.LockTimeout, e.Settings.MaxWait)
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		def := e.Target.Operations[0]
		// The client gives up at a third of the lock timeout: past a tenth (where the
		// early-takeover mutant takes over) and well before the real lock timeout.
		giveUp := e.Target.LockTimeout / 3
		return []*Spec{spec(p, fmt.Sprintf("%s: a retry after the client gave up (%v) while the first attempt is held is not executed again",
			def.Name, giveUp), func(s *S) check.Result {
			op := s.NewOp(def)
			hold, err := s.holdFirst(op, giveUp)
			if err != nil {
				return check.Unknownf("%v", err)
			}
			defer hold.release()
			sf := check.SlowFirst{First: hold.first}
			if sf.First.Outcome == history.OK {
				return check.SlowFirstAttempt(sf, s.Target.Profile)
			}
			retryCtx, retryCancel := s.AttemptCtx(1)
			defer retryCancel()
			retryDone := make(chan history.Attempt, 1)
			go func() { retryDone <- op.DoCtx(retryCtx, framework.Send{Instance: 1}) }()
			select {
			case sf.Retry = <-retryDone:
			case <-time.After(time.Second):
				sf.Waited = true // allowed (wait-replay) if it is not a second execution
			}
			sf.HeldCalls = s.Downstream(op)
			if err := hold.release(); err != nil {
				return check.Unknownf("%v", err)
			}
			if sf.Waited {
				sf.Retry = <-retryDone
			}
			sf.Final = s.Eventually(op, 5*time.Second+hold.rest, s.Completed)
			sf.Records, sf.Downstream = op.Count(), s.Downstream(op)
			return check.SlowFirstAttempt(sf, s.Target.Profile)
		})}
	}
	register(p)
}

// heldAttempt is a first attempt held in flight until its client gave up: by the sink
// (downstream), or by the target's slow hook.
type heldAttempt struct {
	first   history.Attempt
	rest    time.Duration // how long the slow hook still holds it after the client gave up
	release func() error  // lets it go on (idempotent)
}

// holdFirst sends op's first attempt so that it is still processing when its client gives up
// after giveUp: the sink holds its downstream call (through the nemesis), or, without a sink,
// the slow hook makes it take twice giveUp.
func (s *S) holdFirst(op *framework.Op, giveUp time.Duration) (*heldAttempt, error) {
	ctx, cancel := context.WithTimeout(s.Ctx(), giveUp)
	defer cancel()
	if s.Faults.Sink == nil || op.Def.Async != nil { // an asynchronous operation calls downstream after its 202
		slow := 2 * giveUp
		first := op.DoCtx(ctx, framework.Send{Instance: 0, SlowMs: slow.Milliseconds()})
		return &heldAttempt{first: first, rest: slow - giveUp, release: func() error { return nil }}, nil
	}
	hold := s.Faults.Sink.HoldFault()
	if err := s.Inject(hold); err != nil {
		return nil, err
	}
	done := false
	h := &heldAttempt{release: func() error {
		if done {
			return nil
		}
		done = true
		return s.Heal(hold)
	}}
	firstDone := make(chan history.Attempt, 1)
	go func() { firstDone <- op.DoCtx(ctx, framework.Send{Instance: 0}) }()
	if err := s.WaitHeld(1); err != nil {
		cancel()
		<-firstDone
		h.release()
		return nil, fmt.Errorf("the first attempt never reached the downstream provider: %v", err)
	}
	h.first = <-firstDone
	return h, nil
}
