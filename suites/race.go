package suites

import (
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/suites/history"
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
	register(&Property{
		Name: "race",
		Must: `K requests with the same key and body released together (R rounds, spread across all
instances) MUST leave exactly one business record per round; every answer MUST be the success, its
replay, or the profile's in-flight status, never a 5xx; a retry after the burst MUST replay the success.`,
		Catches: []string{"race", "loser-500", "two memory-store instances"},
		Needs:   []string{"operations", "operations[].observer (for the record count)", "instances (all are used)"},
		specs:   raceSpecs,
	})
}

func raceSpecs(e *Env) {
	s := e.Settings
	for _, def := range e.Target.Operations {
		It(sprintf("%s: %d rounds of %d same-key requests released together execute once per round",
			def.Name, s.RaceRounds, s.RaceK), func() {
			var problems, failedKeys []string
			unknowns := 0
			for round := 1; round <= s.RaceRounds; round++ {
				op := e.NewOp(def)
				verdict, why := e.raceRound(op)
				switch verdict {
				case roundFailed:
					problems = append(problems, sprintf("round %d (key %s): %s", round, op.Key, why))
					failedKeys = append(failedKeys, op.Key)
				case roundUnknown:
					unknowns++
					e.notef("round %d (key %s) unknown: %s", round, op.Key, why)
				}
			}
			publishFigures(e.raceFigures())
			if len(problems) > 0 {
				e.keepKeys(failedKeys)
				Fail(sprintf("%d of %d rounds violated the race property:\n%s",
					len(problems), s.RaceRounds, strings.Join(problems, "\n")))
			}
			if unknowns > 0 {
				e.unknown("%d of %d rounds had attempts without an answer", unknowns, s.RaceRounds)
			}
		})
	}
}

type roundVerdict int

const (
	roundOK roundVerdict = iota
	roundFailed
	roundUnknown
)

// raceRound fires one burst and judges it.
func (e *Env) raceRound(op *Op) (roundVerdict, string) {
	atts := e.Burst(op, e.Settings.RaceK)
	if d, err := ArrivalSpread(atts); err == nil {
		e.noteSpread(d)
	}
	var successes []*history.Attempt // distinct successful answers
	var bad []string
	statuses := map[int]int{}
	unknown := 0
	for i := range atts {
		a := &atts[i]
		if a.Outcome != history.OK {
			unknown++
			continue
		}
		statuses[a.Status]++
		switch {
		case a.Status >= 200 && a.Status < 300:
			if !slices.ContainsFunc(successes, func(s *history.Attempt) bool { return len(Compare(*s, *a, e.Target.Profile)) == 0 }) {
				successes = append(successes, a)
			}
		case e.Target.Profile.AcceptsInFlightStatus(a.Status):
		default:
			bad = append(bad, sprintf("attempt %d got status %d", a.Seq, a.Status))
		}
	}
	if len(successes) > 1 {
		bad = append([]string{sprintf("%d different successful answers (differ at %s)", len(successes),
			strings.Join(Compare(*successes[0], *successes[1], e.Target.Profile), ", "))}, bad...)
	}
	if op.Def.Observer != nil {
		n, err := op.count(false)
		switch {
		case err != nil && len(bad) == 0:
			return roundUnknown, "observer: " + err.Error()
		case err != nil: // the statuses are a violation whatever the count
			bad = append(bad, "records unknown (observer: "+err.Error()+")")
		case n != 1:
			op.env.noteCount(op, n, nil)
			bad = append([]string{sprintf("%d business records", n)}, bad...)
		}
	}
	summary := sprintf("statuses %v", statuses)
	if len(bad) > 0 {
		return roundFailed, strings.Join(bad, "; ") + "; " + summary
	}
	if unknown > 0 {
		return roundUnknown, sprintf("%d attempts without an answer; %s", unknown, summary)
	}
	if len(successes) == 0 {
		return roundFailed, "no attempt succeeded; " + summary
	}
	retry := op.Do(Send{Instance: -1})
	if retry.Outcome != history.OK {
		return roundUnknown, "the retry after the burst got no answer: " + retry.Err
	}
	if d := Compare(*successes[0], retry, e.Target.Profile); len(d) > 0 {
		return roundFailed, sprintf("the retry after the burst did not replay the success (differs at %s, status %d)",
			strings.Join(d, ", "), retry.Status)
	}
	return roundOK, ""
}
