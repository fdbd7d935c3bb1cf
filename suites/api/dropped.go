package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
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
	p := &Property{
		Name: "dropped-response",
		Must: `When the response to a processed request is lost on the way back, the retry with the same
key MUST get the replay of the original: exactly one record and one downstream effect.`,
		Catches: []string{"replay-reexecutes", "lost-write"},
		Needs:   []string{"operations[].observer or downstream (to confirm the request was processed)", "toxiproxy (optional; embedded by default)"},
		Labels:  []string{"fault:network"},
		Covers:  "the first operation with an observer",
		Applies: func(e *Env) string {
			if len(e.Observed()) == 0 && e.Faults.Sink == nil {
				return "neither an observer nor a downstream binding can confirm that the target processed a request"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		def := e.FirstObserved()
		return []*Spec{spec(p, fmt.Sprintf("%s: a retry after the response was cut replays the original", def.Name), func(s *S) check.Result {
			op := s.NewOp(def)
			proxy, via, err := s.Faults.ProxyFor(0)
			if err != nil {
				return check.Unknownf("cannot put a fault proxy in front of the target: %v", err)
			}
			cut := proxy.CutResponse(0)
			if err := s.Inject(cut); err != nil {
				return check.Unknownf("%v", err)
			}
			lost := op.Do(framework.Send{Via: via})
			if err := s.Heal(cut); err != nil {
				return check.Unknownf("%v", err)
			}
			if framework.Succeeded(lost) || lost.Status != 0 {
				return check.Unknownf("the fault did not cut the response (attempt #%d got %d)", lost.Seq, lost.Status)
			}
			if !s.Processed(op) {
				return check.Unknownf("the cut request was never processed (it may have been cut before it reached the target)")
			}
			d := check.Dropped{Lost: lost, Retry: op.Do(framework.Send{Instance: 0})}
			d.Again = op.Do(framework.Send{Instance: 1})
			d.Records, d.Downstream = op.Count(), s.Downstream(op)
			return check.DroppedResponse(d, s.Target.Profile)
		})}
	}
	register(p)
}
