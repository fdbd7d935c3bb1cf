package api

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// What the properties that make a first attempt fail share (error-replay,
// event-not-before-commit): the failing attempt, through the sink or the fail_next hook, and how
// long the key may stay in flight after it.

// defaultLockTimeout is how long a key may stay in flight after an error when the target
// declares no lock timeout.
const defaultLockTimeout = 10 * time.Second

// stuckAfter is how long a key may answer the in-flight status after an error.
func (s *S) stuckAfter() time.Duration {
	if lt := s.Target.LockTimeout; lt > 0 {
		return lt + framework.CrashMargin
	}
	return defaultLockTimeout
}

// stuckWait names the wait of stuckAfter in the run's progress.
func (s *S) stuckWait() string {
	if lt := s.Target.LockTimeout; lt > 0 {
		return fmt.Sprintf("the key to leave the in-flight status (the lock timeout, %s, plus a margin)", framework.Seconds(lt))
	}
	return fmt.Sprintf("the key to leave the in-flight status (up to %s: no lock_timeout declared)", framework.Seconds(defaultLockTimeout))
}

// asyncBeforeAnswer says why a property that acts on the first operation's downstream call does
// not apply when that operation is asynchronous (its async block) and no hook of the target
// does the same to the request itself (hook: the target declares it; what: what it does): the
// downstream call comes after the 202, where a fault changes the operation, not its answer.
func asyncBeforeAnswer(e *Env, hook bool, what string) string {
	def := e.Target.Operations[0]
	if def.Async == nil || hook {
		return ""
	}
	return fmt.Sprintf("operation %s is asynchronous: its downstream call comes after its 202, and no hook of the target %s", def.Name, what)
}

// failingAttempt sends op's first attempt so that it fails: the sink fails its downstream call
// (through the nemesis), or, without a sink (or for an asynchronous operation, whose downstream
// call comes after its answer), the fail_next hook is sent just before it.
func (s *S) failingAttempt(op *framework.Op) (history.Attempt, error) {
	if s.Faults.Sink != nil && op.Def.Async == nil {
		fail := s.Faults.Sink.FailFault(1, 503)
		if err := s.Inject(fail); err != nil {
			return history.Attempt{}, err
		}
		a := op.Do(framework.Send{Instance: 0})
		return a, s.Heal(fail)
	}
	hook := s.Faults.FailNextHook(0, op.Tenant, op.Vars())
	if err := s.Inject(hook); err != nil {
		return history.Attempt{}, err
	}
	a := op.Do(framework.Send{Instance: 0})
	return a, s.Heal(hook)
}
