package api

import (
	"context"
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// crash-after-claim: the process dies between claiming a key and writing its result (the
// sink holds the downstream call, the nemesis SIGKILLs the target), is restarted on the same
// address and store, and the client retries.
//
// The target MUST complete the retry within the declared lock timeout plus a margin, with
// exactly one record and one downstream effect: every attempt sends the provider the same
// downstream key.
//
// Catches: stuck-lock (the claim of a dead process is never taken over), fresh-downstream-key
// (the retry reaches the provider with a new key: a second charge), async-lost-on-crash (an
// asynchronous operation's job kept in memory: pending forever after the kill).
func init() {
	p := &Property{
		Name: "crash-after-claim",
		Must: `After the target is SIGKILLed between claiming a key and writing its result and restarted,
a retry with the same key MUST complete within the lock timeout plus a margin, with exactly one
record and one downstream effect (the same downstream key on every attempt).`,
		Catches: []string{"stuck-lock", "fresh-downstream-key", "async-lost-on-crash"},
		Needs:   []string{"lifecycle (durable: true)", "downstream", "lock_timeout"},
		Labels:  []string{"fault:process", "fault:downstream"},
		Covers:  "the first operation with an observer",
		Applies: func(e *Env) string {
			if r := framework.NeedsCrash(e); r != "" {
				return r
			}
			if e.Faults.Sink == nil {
				return "the target declares no downstream binding: nothing can hold it between claim and write"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		def := e.FirstObserved()
		return []*Spec{spec(p, fmt.Sprintf("%s: after a SIGKILL between claim and write and a restart, the retry completes once", def.Name),
			func(s *S) check.Result { return s.crashAfterClaim(s.NewOp(def)) })}
	}
	register(p)
}

// crashAfterClaim holds op's downstream call, kills the instance that holds it, restarts it,
// and retries until the key completes.
func (s *S) crashAfterClaim(op *framework.Op) check.Result {
	hold := s.Faults.Sink.HoldFault()
	if err := s.Inject(hold); err != nil {
		return check.Unknownf("%v", err)
	}
	defer s.Heal(hold)
	ctx, cancel := context.WithCancel(s.Ctx())
	defer cancel()
	firstDone := make(chan history.Attempt, 1)
	go func() { firstDone <- op.DoCtx(ctx, framework.Send{Instance: 0}) }()
	if err := s.WaitHeldFor(op); err != nil {
		cancel()
		<-firstDone
		return check.Unknownf("the first attempt never reached the downstream provider: %v", err)
	}
	kill := s.Faults.Cluster.KillFault(0)
	if err := s.Inject(kill); err != nil {
		return check.Unknownf("%v", err)
	}
	c := check.CrashClaim{First: <-firstDone}
	if s.Ctx().Err() != nil {
		return check.Unknownf("interrupted before the restart")
	}
	if err := s.Heal(kill); err != nil {
		return check.Unknownf("cannot restart the target: %v", err)
	}
	s.Client.CloseIdle() // connections to the killed process are dead
	if err := s.Heal(hold); err != nil {
		return check.Unknownf("%v", err)
	}
	c.Final = s.EventuallyFor(fmt.Sprintf("the dead process's claim to be taken over (the lock timeout, %s, plus a margin)", framework.Seconds(s.Target.LockTimeout)),
		op, s.Target.LockTimeout+framework.CrashMargin, s.Completed)
	c.After = op.Do(framework.Send{Instance: -1})
	c.Records, c.Downstream = op.Count(), s.Downstream(op)
	return check.CrashAfterClaim(c, s.Target.Profile)
}
