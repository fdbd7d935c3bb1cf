package framework

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// This file holds what several properties share: faults through the nemesis, waiting for the
// target to process or hold an operation, retrying a key to completion, and the default
// operation a property acts on.

// NeedsCrash says why the process-fault properties do not apply, or "".
func NeedsCrash(e *Env) string {
	switch {
	case e.Faults.Cluster == nil:
		return "the target declares no lifecycle: the harness cannot kill and restart it"
	case !e.Target.Lifecycle.Durable:
		return "the target's store is not durable (lifecycle.durable is false): a killed process loses its keys"
	case e.Target.LockTimeout <= 0:
		return "the target declares no lock_timeout"
	case e.Target.LockTimeout+CrashMargin > e.Settings.MaxWait:
		return fmt.Sprintf("the lock timeout %v plus %v is longer than --max-wait %v", e.Target.LockTimeout, CrashMargin, e.Settings.MaxWait)
	}
	return ""
}

// CrashMargin is how long past the lock timeout a stuck key is waited for.
const CrashMargin = 3 * time.Second

// nemesisTimeout bounds one inject or heal (a restart waits for readiness on its own bound).
const nemesisTimeout = time.Minute

// Inject injects a fault through the nemesis; the error says why it could not be (the spec's
// verdict is then unknown).
func (s *S) Inject(f faults.Fault) error {
	ctx, cancel := context.WithTimeout(s.ctx, nemesisTimeout)
	defer cancel()
	return s.Faults.Nemesis.Inject(ctx, f)
}

// Heal heals a fault through the nemesis. It runs even when the spec was cancelled, so that
// nothing the spec injected outlives it.
func (s *S) Heal(f faults.Fault) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), nemesisTimeout)
	defer cancel()
	return s.Faults.Nemesis.Heal(ctx, f)
}

// Processed waits until the observer or the sink shows that the target processed an
// operation: a record, or a downstream call (which a target that lost its write still made).
func (s *S) Processed(op *Op) bool {
	deadline := time.Now().Add(max(5*time.Second, longestSettle(op.Def))) // an asynchronous one makes its record later
	for time.Now().Before(deadline) && s.ctx.Err() == nil {
		if op.Def.Observer != nil {
			ctx, cancel := s.AttemptCtx(1)
			n, err := op.countCtx(ctx)
			cancel()
			if err == nil && n > 0 {
				return true
			}
		}
		if d := s.Faults.downstream(op.Ref); d.Calls > 0 {
			return true
		}
		s.SleepUntil(time.Now().Add(50 * time.Millisecond))
	}
	return false
}

// WaitHeld waits until the sink holds n calls.
func (s *S) WaitHeld(n int) error {
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	_, err := s.Faults.Sink.WaitHeld(ctx, n)
	return err
}

// WaitHeldFor waits until the sink holds a call of op's (its ref): not another operation's, such
// as the work of an asynchronous operation still going on.
func (s *S) WaitHeldFor(op *Op) error {
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	for n := 1; ; {
		calls, err := s.Faults.Sink.WaitHeld(ctx, n)
		if err != nil {
			return err
		}
		for _, c := range calls {
			if c.Ref == op.Ref {
				return nil
			}
		}
		n = len(calls) + 1
	}
}

// RetryInterval is the pause between two retries of a key waiting to complete.
const RetryInterval = 200 * time.Millisecond

// Eventually retries an operation until done reports an answer final, for at most d; it stops
// early at an answer that is neither final nor the in-flight status (or 429), which the checker
// judges. The checker reads a key still in flight at the end as stuck.
func (s *S) Eventually(op *Op, d time.Duration, done func(history.Attempt) bool) check.Eventually {
	return s.EventuallyFor(fmt.Sprintf("%s (ref %s) to complete", op.Def.Name, op.Ref), op, d, done)
}

// EventuallyFor is Eventually that names what it waits for in the run's progress ("the lock
// timeout (30 s) to expire").
func (s *S) EventuallyFor(what string, op *Op, d time.Duration, done func(history.Attempt) bool) check.Eventually {
	ev := check.Eventually{Within: d}
	deadline := time.Now().Add(d)
	defer s.Waiting(what, deadline)()
	for s.ctx.Err() == nil {
		a := op.Do(Send{Instance: -1})
		ev.Attempts = append(ev.Attempts, a)
		switch {
		case a.Outcome != history.OK: // the target may be restarting: keep trying
		case done(a):
			return ev
		case !s.Target.Profile.AcceptsInFlightStatus(a.Status) && a.Status != http.StatusTooManyRequests:
			return ev
		}
		if time.Now().After(deadline) || !s.SleepUntil(time.Now().Add(RetryInterval)) {
			return ev
		}
	}
	return ev
}

// Completed reports a success under the target's profile: a 2xx other than the in-flight answer
// of in_flight: status-resource (a 202 naming the operation in progress).
func (e *Env) Completed(a history.Attempt) bool {
	return Succeeded(a) && e.Target.Profile.Success(a.Status)
}

// Succeeded reports a 2xx answer.
func Succeeded(a history.Attempt) bool {
	return a.Outcome == history.OK && a.Status >= 200 && a.Status < 300
}

// Downstream returns what the sink saw of an operation, and notes it in the evidence.
func (s *S) Downstream(op *Op) check.Downstream {
	d := s.Faults.downstream(op.Ref)
	if d.Taken {
		s.Notef("downstream: %d calls for ref %s, %d effects, downstream keys %v", d.Calls, op.Ref, d.Effects, d.Keys)
	}
	return d
}

// FirstObserved is the operation a single-operation property acts on: the first with an
// observer, else the first declared.
func (e *Env) FirstObserved() *targets.Operation {
	if obs := e.Observed(); len(obs) > 0 {
		return obs[0]
	}
	return e.Target.Operations[0]
}
