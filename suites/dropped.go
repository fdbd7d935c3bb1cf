package suites

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/suites/history"
)

// dropped-response: the response is lost on its way back after the target processed the
// request (Toxiproxy limit_data on the downstream stream of a proxy in front of the target).
//
// The target MUST answer the retry with the same key with the replay of the original:
// one record, one downstream effect; a second retry answers the same.
//
// Catches: replay-reexecutes and lost-write (a retry after a lost response is the moment
// both bugs cost money).
func init() {
	register(&Property{
		Name: "dropped-response",
		Must: `When the response to a processed request is lost on the way back, the retry with the same
key MUST get the replay of the original: exactly one record and one downstream effect.`,
		Catches: []string{"replay-reexecutes", "lost-write"},
		Needs:   []string{"operations[].observer or downstream (to confirm the request was processed)", "toxiproxy (optional; embedded by default)"},
		Labels:  []string{"fault:network"},
		applies: func(e *Env) string {
			if e.Faults == nil {
				return "the harness runs no fault injection for this target"
			}
			if len(e.observed()) == 0 && e.Faults.Sink == nil {
				return "neither an observer nor a downstream binding can confirm that the target processed a request"
			}
			return ""
		},
		specs: droppedSpecs,
	})
}

func droppedSpecs(e *Env) {
	def := e.Target.Operations[0]
	if obs := e.observed(); len(obs) > 0 {
		def = obs[0]
	}
	It(sprintf("%s: a retry after the response was cut replays the original", def.Name), func() {
		op := e.NewOp(def)
		proxy, via, err := e.Faults.ProxyFor(0)
		if err != nil {
			e.unknown("cannot put a fault proxy in front of the target: %v", err)
		}
		cut := proxy.CutResponse(0)
		ctx, cancel := e.ctx(1)
		defer cancel()
		if err := e.Faults.Nemesis.Inject(ctx, cut); err != nil {
			e.unknown("cannot inject %s: %v", cut.Name(), err)
		}
		lost := op.DoCtx(ctx, Send{Via: via})
		if err := e.Faults.Nemesis.Heal(ctx, cut); err != nil {
			e.unknown("cannot heal %s: %v", cut.Name(), err)
		}
		if lost.Outcome == history.OK {
			e.unknown("the fault did not cut the response (got status %d)", lost.Status)
		}
		if !e.processed(op) {
			e.unknown("the cut request was never processed (it may have been cut before it reached the target)")
		}
		retry := e.ok(op.Do(Send{Instance: 0}))
		expectSuccess(retry, "the retry after the lost response")
		e.expectReplayHeader(retry.RespHeader)
		e.expectSame(retry, e.ok(op.Do(Send{Instance: 1})), "a second retry")
		e.expectRecords(op, 1)
		e.expectDownstreamEffects(op, 1)
	})
}

// processed waits until the observer or the sink shows that the target processed an
// operation: a record, or a downstream call (which a target that lost its write still made).
func (e *Env) processed(op *Op) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if op.Def.Observer != nil {
			if n, err := op.count(false); err == nil && n > 0 {
				return true
			}
		}
		if e.Faults.Sink != nil {
			if calls, _ := e.Faults.sinkCalls(op.Ref); calls > 0 {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// expectDownstreamEffects checks, when the target calls the sink, that the operation's
// downstream calls all carried one key (so the provider executed it at most once) and that
// there were want effects.
func (e *Env) expectDownstreamEffects(op *Op, want int) {
	if e.Faults == nil || e.Faults.Sink == nil {
		return
	}
	calls, keys := e.Faults.sinkCalls(op.Ref)
	effects := e.Faults.Sink.EffectsForRef(op.Ref)
	e.notef("downstream: %d calls for ref %s, %d effects, downstream keys %v", calls, op.Ref, effects, keys)
	if effects != want {
		Fail(sprintf("downstream effects of %s (ref %s): %d (over %d calls with %d distinct downstream keys), want %d",
			op.Def.Name, op.Ref, effects, calls, len(keys), want), 1)
	}
}
