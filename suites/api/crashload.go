package api

import (
	"fmt"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// crash-under-load (Jepsen-style): concurrent operations with retries run while the harness,
// from a seeded schedule, SIGKILLs and restarts the target at least five times, each time
// with operations in flight; latency on the storage link widens every window and a reset
// cuts a transaction where a storage address is declared. Afterwards every operation is
// retried to completion and the history is checked.
//
// The target MUST leave no operation with two records, exactly one record for every
// operation acknowledged with a 2xx, and no key stuck past the lock timeout.
//
// Catches: split-write (record and key completion in two transactions: a kill between them
// makes the retry execute again).
func init() {
	p := &Property{
		Name: "crash-under-load",
		Must: `Under concurrent load with retries and at least five SIGKILLs and restarts (each with
operations in flight), no operation MAY have two records, every operation acknowledged with a 2xx
MUST have exactly one, and no key MAY stay stuck past the lock timeout.`,
		Catches: []string{"split-write"},
		Needs:   []string{"lifecycle (durable: true)", "lock_timeout", "operations[].observer", "storage (optional: latency and resets)"},
		Labels:  []string{"fault:process", "fault:storage"},
		Applies: func(e *Env) string {
			if r := framework.NeedsCrash(e); r != "" {
				return r
			}
			if len(e.Observed()) == 0 {
				return "no operation has an observer: records cannot be counted"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return []*Spec{spec(p, fmt.Sprintf("%d SIGKILLs under concurrent load leave exactly one record per operation", crashKills),
			func(s *S) check.Result { return s.crashUnderLoad() })}
	}
	register(p)
}

// Shape of the crash-under-load run.
const (
	crashKills   = 10
	crashWorkers = 4
	crashMaxOps  = 500
)

// crashUnderLoad runs the load, the nemesis and the completion, and checks the history.
func (s *S) crashUnderLoad() check.Result {
	cr := s.newCrashRun(crashPlan{defs: s.Observed(), kills: crashKills, workers: crashWorkers, maxOps: crashMaxOps,
		pause: 2 * time.Millisecond, minAge: killAge, storage: true, aim: true})
	from := int64(s.History.Len())
	var latency faults.Fault
	if st := s.Faults.Storage; st != nil {
		latency = st.Latency(5 * time.Millisecond)
		if err := s.Inject(latency); err != nil {
			return check.Unknownf("%v", err)
		}
		defer s.Heal(latency)
	}
	nemesisErr := cr.run()
	if latency != nil { // the completion and the counts run without it
		if err := s.Heal(latency); err != nil {
			return check.Unknownf("%v", err)
		}
	}
	s.Client.CloseIdle()
	if nemesisErr != nil {
		return check.Unknownf("the nemesis failed: %v", nemesisErr)
	}
	if s.Ctx().Err() != nil {
		return check.Unknownf("interrupted")
	}
	deadline := time.Now().Add(s.Target.LockTimeout + framework.CrashMargin)
	counts := map[string]check.Count{}
	for _, lo := range cr.ops {
		cr.complete(lo, deadline)
	}
	for _, lo := range cr.ops {
		counts[lo.op.Key] = lo.op.CountQuiet()
	}
	s.Notef("%d operations, %d kills, schedule seed %d", len(cr.ops), cr.kills, s.Settings.Seed)
	s.Figure(map[string]string{"kills": strconv.Itoa(cr.kills), "operations": strconv.Itoa(len(cr.ops))})
	return check.CrashUnderLoad(check.CrashLoad{
		Attempts: s.History.AttemptsAfter(from), Counts: counts, Events: s.History.Events(),
		LockTimeout: s.Target.LockTimeout, Retention: s.Target.Retention, CheckedAt: time.Now(),
	}, s.Target.Profile)
}

// killAge is how long an attempt must have been in flight before the nemesis kills: long
// enough to be past the claim (a few round trips), so that kills land between claim, record
// and completion rather than before anything happened.
const killAge = 15 * time.Millisecond
