package suites

import (
	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/targets"
)

// error-replay: the downstream provider fails once.
//
// The target MUST follow its declared error policy on the retry: `replay` returns the
// stored error without calling the provider again; `retry` executes again and ends with
// exactly one record and one downstream effect.
//
// Catches: no-error-cache (a 5xx is not stored: the retry calls the provider again).
func init() {
	register(&Property{
		Name: "error-replay",
		Must: `After the downstream provider failed once, the retry with the same key MUST follow the
declared error policy: replay returns the stored error without a second downstream call; retry
executes again and ends with one record and one downstream effect.`,
		Catches: []string{"no-error-cache"},
		Needs:   []string{"downstream", "profile.error_policy"},
		Labels:  []string{"fault:downstream"},
		applies: func(e *Env) string {
			if e.Faults == nil || e.Faults.Sink == nil {
				return "the target declares no downstream binding: nothing can make its provider fail"
			}
			return ""
		},
		specs: errorReplaySpecs,
	})
}

func errorReplaySpecs(e *Env) {
	def := e.Target.Operations[0]
	policy := e.Target.Profile.ErrorPolicy
	It(sprintf("%s: after one downstream 5xx the retry follows the %s policy", def.Name, policy), func() {
		op := e.NewOp(def)
		e.Faults.Sink.FailNext(1, 503)
		first := e.ok(op.Do(Send{Instance: 0}))
		if first.Status < 500 {
			e.unknown("the target did not report the downstream failure (status %d): the error policy cannot be observed", first.Status)
		}
		retry := e.ok(op.Do(Send{Instance: 1}))
		calls, _ := e.Faults.sinkCalls(op.Ref)
		e.notef("downstream calls for ref %s: %d", op.Ref, calls)
		if policy == targets.ErrorRetry {
			expectSuccess(retry, "the retry under the retry policy")
			e.expectRecords(op, 1)
			e.expectDownstreamEffects(op, 1)
			return
		}
		e.expectSame(first, retry, "the retry under the replay policy")
		if calls != 1 {
			Fail(sprintf("the replay policy replays the stored error, but the provider was called %d times", calls))
		}
		e.expectRecords(op, 0)
	})
}
