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
// A round whose requests were not in flight together raced nothing: the spec says how many of
// the K were (the most in a round, the least), and is unknown when no round had two.
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
				overlaps := check.Overlaps{K: st.RaceK}
				for round := 1; round <= st.RaceRounds && s.Ctx().Err() == nil; round++ {
					res.Merge(s.raceRound(s.NewOp(def), &overlaps))
				}
				s.Figure(s.RaceFigures())
				overlaps.Judge(&res, "same-key requests")
				return res
			}))
		}
		return out
	}
	register(p)
}

// raceRound fires one burst, retries once after it and counts the records; overlaps gets how
// many of the burst's requests were in flight at once.
func (s *S) raceRound(op *framework.Op, overlaps *check.Overlaps) check.Result {
	atts := s.Burst(op, s.Settings.RaceK)
	overlaps.Add(atts)
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
