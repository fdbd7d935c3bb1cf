package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// error-replay: the first attempt fails (the downstream provider fails once, or the target's
// fail_next hook makes it fail).
//
// The target MUST follow its declared error policy on the retry: `replay` returns the stored
// error as it was first sent, without calling the provider again; `retry` executes again and
// ends with exactly one record and one downstream effect. A key left answering the in-flight
// status after the error for longer than the lock timeout (10s when none is declared) is stuck.
//
// Catches: no-error-cache (a 5xx is not stored: the retry calls the provider again),
// stuck-after-error (the key stays in flight for ever), error-replay-differs (the replayed
// error is not the original one), error-record-after-answer (the error stored after it was
// answered: a retry at once is told the key is in flight).
func init() {
	p := &Property{
		Name: "error-replay",
		Must: `After the first attempt failed (its downstream provider failed, or the fail_next hook made
it fail), the retry with the same key MUST follow the declared error policy: replay returns the stored
error as it was first sent, without a second downstream call; retry executes again and ends with one
record and one downstream effect. The key MUST NOT stay in flight past the lock timeout.`,
		Catches: []string{"no-error-cache", "stuck-after-error", "error-replay-differs", "error-record-after-answer"},
		Needs:   []string{"downstream or hooks.fail_next", "profile.error_policy"},
		Labels:  []string{"fault:downstream"},
		Covers:  "the first operation",
		Applies: func(e *Env) string {
			if e.Faults.Sink == nil && !e.Target.Hooks.CanFail() {
				return "the target declares neither a downstream binding nor a fail_next hook: nothing can make an attempt fail"
			}
			return asyncBeforeAnswer(e, e.Target.Hooks.CanFail(), "fails the request itself (hooks.fail_next)")
		},
	}
	p.Specs = func(e *Env) []*Spec {
		def := e.Target.Operations[0]
		return []*Spec{spec(p, fmt.Sprintf("%s: after a failed attempt the retry follows the %s policy", def.Name, e.Target.Profile.ErrorPolicy),
			func(s *S) check.Result {
				op := s.NewOp(def)
				first, err := s.failingAttempt(op)
				if err != nil {
					return check.Unknownf("%v", err)
				}
				r := check.ErrorRetries{First: first}
				if framework.Succeeded(first) || first.Status < 500 {
					return check.ErrorReplay(r, s.Target.Profile)
				}
				r.Retries = s.EventuallyFor(s.stuckWait(), op, s.stuckAfter(), func(a history.Attempt) bool {
					return !s.Target.Profile.AcceptsInFlightStatus(a.Status) || s.Target.Profile.ErrorPolicy == targets.ErrorRetry && framework.Succeeded(a)
				})
				r.Records, r.Downstream = op.Count(), s.Downstream(op)
				return check.ErrorReplay(r, s.Target.Profile)
			})}
	}
	register(p)
}
