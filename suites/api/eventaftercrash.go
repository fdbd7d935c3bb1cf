package api

import (
	"fmt"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// event-after-crash: operations that publish run under concurrent load while the harness, from a
// seeded schedule, SIGKILLs and restarts the API at least five times, each time with operations
// in flight; where the target declares hooks.hold_publish, one more kill lands while an instance
// holds a committed event before its publication. Afterwards every operation is retried until
// acknowledged.
//
// The target MUST publish the event of every operation acknowledged with a 2xx within the
// declared time after its 2xx, or after the restart that followed it, under one id.
//
// Catches: dual-write (the event published from the request after the commit: a kill in
// between loses it).
func init() {
	p := &Property{
		Name: "event-after-crash",
		Must: `Under concurrent load with at least five SIGKILLs and restarts (each with operations in flight), and
one kill while a committed event is held before its publication where hooks.hold_publish can hold it, every
operation acknowledged with a 2xx MUST have its event published within publishes[].within after its 2xx or
after the restart that followed it, under one id.`,
		Catches: []string{"dual-write"},
		Needs: append([]string{"operations[].publishes", "lifecycle (durable: true)", "lock_timeout",
			"hooks.hold_publish (optional: one kill between a commit and its publication for certain)"}, eventsNeeds...),
		Labels:  []string{framework.EventsLabel, "fault:process"},
		Covers:  "each event each operation declares it publishes",
		Applies: framework.NeedsCrash,
	}
	p.Specs = func(e *Env) []*Spec {
		return eventSpecs(p, e, func(def *targets.Operation, pub *targets.Publish) string {
			hold := ""
			if e.Target.Hooks.CanHoldPublish() {
				hold = " and one while a publication is held"
			}
			return fmt.Sprintf("%s: %s: %d SIGKILLs under concurrent load%s, then every acknowledged operation's event is published, under one id",
				def.Name, pub.Name, eventCrashKills, hold)
		}, func(s *S, def *targets.Operation, pub *targets.Publish) check.Result {
			return s.eventAfterCrash(def, pub)
		})
	}
	register(p)
}

// Shape of the event-after-crash run: its workers pause between operations, so that operations
// are in flight at every kill without a flood of events to tell apart (the bound is a cap); a
// kill comes with any attempt in flight (its commit and the relay's publications around it are
// what it hits, not only the claim crash-under-load waits past).
const (
	eventCrashKills  = 5
	eventCrashMaxOps = 1000
	eventCrashPause  = 10 * time.Millisecond
)

// eventAfterCrash runs the load under kills, the kill inside the hold, the completion, and
// checks every operation's events. A step that could not run (the nemesis failed, the hook held
// nothing) is said as such; what the operations left is judged all the same (but for an event
// that did not come in time where a fault could not be healed: Step.Unhealed).
func (s *S) eventAfterCrash(def *targets.Operation, pub *targets.Publish) check.Result {
	start := time.Now()
	from := int64(s.History.Len())
	cr := s.newCrashRun(crashPlan{defs: []*targets.Operation{def}, kills: eventCrashKills, workers: crashWorkers,
		maxOps: eventCrashMaxOps, pause: eventCrashPause, minAge: 0})
	faulted := check.Events{ResumedBy: "the restart after the last kill"}
	if err := cr.run(); err != nil {
		faulted.Steps = append(faulted.Steps, check.Step{Name: check.StepKills, Note: fmt.Sprintf("the nemesis failed: %v", err), Unhealed: true})
	}
	restarted, kills := cr.restart, cr.kills
	if s.Target.Hooks.CanHoldPublish() && s.Ctx().Err() == nil && len(faulted.Steps) == 0 {
		lo, at, step := s.killInHold(def, pub)
		if lo != nil {
			cr.ops = append(cr.ops, lo)
		}
		if step.Exercised {
			restarted = at
			kills += s.Faults.Cluster.Size()
		}
		faulted.Steps = append(faulted.Steps, step)
	}
	s.Client.CloseIdle()
	if s.Ctx().Err() != nil {
		return check.Unknownf("interrupted")
	}
	deadline := time.Now().Add(s.Target.LockTimeout + framework.CrashMargin)
	for _, lo := range cr.ops {
		cr.complete(lo, deadline)
	}
	byKey := map[string][]history.Attempt{}
	for a := range s.History.AttemptsAfter(from) {
		byKey[a.Key] = append(byKey[a.Key], a)
	}
	ops := make([]check.EventOp, len(cr.ops))
	for i, lo := range cr.ops {
		ops[i] = s.eventTies(lo.op, pub, byKey[lo.op.Key])
	}
	s.Notef("%d operations, %d kills, schedule seed %d; the last restart was ready at %s", len(cr.ops), kills, s.Settings.Seed,
		restarted.Format("15:04:05.000"))
	s.Figure(map[string]string{"kills": strconv.Itoa(kills), "operations": strconv.Itoa(len(cr.ops))})
	faulted.Resumed = restarted
	return check.EventAfterCrash(ops, s.awaitEventsAfter(def, pub, start, ops, faulted))
}
