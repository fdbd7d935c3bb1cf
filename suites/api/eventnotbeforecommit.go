package api

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// event-not-before-commit: the first attempt of an operation fails (the downstream provider
// fails once, or the target's fail_next hook makes it fail), then the key is retried until it
// has a final answer.
//
// The target MUST publish nothing while nothing is committed: no event before a retry that
// succeeds (none at all when, as its error policy may say, the failure is replayed), then
// exactly one event id within the declared time.
//
// Catches: publish-before-commit (the event is published, then the work done and committed: a
// failed operation leaves a ghost event).
func init() {
	p := &Property{
		Name: "event-not-before-commit",
		Must: `An operation whose first attempt failed (its downstream provider failed, or the fail_next hook made
it fail) MUST publish nothing until a retry succeeds (nothing at all when the failure is replayed), then
exactly one event id within publishes[].within.`,
		Catches: []string{"publish-before-commit"},
		Needs:   append([]string{"operations[].publishes", "downstream or hooks.fail_next", "profile.error_policy"}, eventsNeeds...),
		Labels:  []string{framework.EventsLabel, "fault:downstream"},
		Covers:  "each event each operation declares it publishes",
		Applies: func(e *Env) string {
			if e.Faults.Sink == nil && !e.Target.Hooks.CanFail() {
				return "the target declares neither a downstream binding nor a fail_next hook: nothing can make an attempt fail"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return eventSpecs(p, e, func(def *targets.Operation, pub *targets.Publish) string {
			return fmt.Sprintf("%s: %s: after a failed first attempt nothing is published until a retry succeeds, then one event id",
				def.Name, pub.Name)
		}, func(s *S, def *targets.Operation, pub *targets.Publish) check.Result {
			start := time.Now()
			op := s.NewOp(def)
			first, err := s.failingAttempt(op)
			if err != nil {
				return check.Unknownf("%v", err)
			}
			atts := []history.Attempt{first}
			if first.Outcome == history.OK && !framework.Succeeded(first) {
				retries := s.Eventually(op, s.stuckAfter(), func(a history.Attempt) bool { return !s.Target.Profile.AcceptsInFlightStatus(a.Status) })
				atts = append(atts, retries.Attempts...)
			}
			ops := []check.EventOp{s.eventOp(op, pub, atts)}
			return check.EventNotBeforeCommit(ops[0], s.awaitEvents(def, pub, start, ops))
		})
	}
	register(p)
}
