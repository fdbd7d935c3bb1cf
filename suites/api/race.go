package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// race: K requests with the same key released together, for R rounds, spread across all
// declared instances.
//
// The target MUST execute the operation once per round: exactly one business record; every
// answer is the success, the replay of the success, or (when the profile allows it) the
// in-flight status; never a 5xx. A retry after the burst replays the success.
//
// Catches: race (lookup and claim are separate steps), loser-500 (the loser of the claim
// gets 500), and two `--store memory` instances behind one target (each dedupes alone).
//
// Bursts are released by last-byte synchronisation on http:// targets, by a barrier
// otherwise (Settings.RaceMode). The property publishes the mode and, when the target reports
// arrival times (X-Retrysafe-Arrival), the median and 90th percentile of the bursts' arrival
// spreads as its figures.
func init() {
	p := &Property{
		Name: "race",
		Must: `K requests with the same key and body released together (R rounds, spread across all
instances) MUST leave exactly one business record per round; every answer MUST be the success, its
replay, or the profile's in-flight status, never a 5xx; a retry after the burst MUST replay the success.`,
		Catches: []string{"race", "loser-500", "two memory-store instances"},
		Needs:   []string{"operations", "operations[].observer (for the record count)", "instances (all are used)"},
	}
	p.Specs = func(e *Env) []*Spec {
		st := e.Settings
		var out []*Spec
		for _, def := range e.Target.Operations {
			out = append(out, spec(p, fmt.Sprintf("%s: %d rounds of %d same-key requests released together execute once per round",
				def.Name, st.RaceRounds, st.RaceK), func(s *S) check.Result {
				var res check.Result
				for round := 1; round <= st.RaceRounds && s.Ctx().Err() == nil; round++ {
					res.Merge(s.raceRound(s.NewOp(def)))
				}
				s.Figure(s.RaceFigures())
				return res
			}))
		}
		return out
	}
	register(p)
}

// raceRound fires one burst, retries once after it and counts the records.
func (s *S) raceRound(op *framework.Op) check.Result {
	atts := s.Burst(op, s.Settings.RaceK)
	if d, err := framework.ArrivalSpread(atts); err == nil {
		s.NoteSpread(d)
	}
	var retry history.Attempt
	for _, a := range atts {
		if framework.Succeeded(a) {
			retry = op.Do(framework.Send{Instance: -1})
			break
		}
	}
	return check.RaceRound(atts, retry, op.Count(), s.Target.Profile)
}
