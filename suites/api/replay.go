package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// replay: the same request sent N times in sequence.
//
// The target MUST answer every retry with the first answer (status and body, volatile
// fields ignored), mark replays with the profile's replay header when it declares one, and
// leave exactly one business record.
//
// Catches: replay-reexecutes (the replay path writes the record again: responses look
// perfect, the store has N rows) and lost-write (201 without a record); on an asynchronous
// API, async-retry-new-job (a replay enqueues a second job) and async-new-reference (a replay
// gets an operation of its own).
func init() {
	p := &Property{
		Name: "replay",
		Must: `Sending the same request with the same key N times in sequence MUST return the first
answer every time (status and body, volatile fields ignored), carry the profile's replay header on
every replay, and leave exactly one business record.`,
		Catches: []string{"replay-reexecutes", "lost-write", "async-retry-new-job", "async-new-reference"},
		Needs:   []string{"operations", "operations[].observer (for the record count)"},
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, def := range e.Target.Operations {
			n := e.Settings.ReplayN
			out = append(out, spec(p, fmt.Sprintf("%s: %d sequential sends of one request replay the first answer and leave one record",
				def.Name, n), func(s *S) check.Result {
				op := s.NewOp(def)
				atts := make([]history.Attempt, 0, n)
				for i := range n {
					atts = append(atts, op.Do(framework.Send{Instance: i}))
					if !framework.Succeeded(atts[0]) {
						break // nothing to replay
					}
				}
				return check.Replay(atts, op.Count(), s.Target.Profile)
			}))
		}
		return out
	}
	register(p)
}
