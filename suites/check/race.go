package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// RaceRound judges one burst of same-key requests released together (race): one business
// record; every answer the success, its replay or the profile's in-flight status, never a 5xx;
// the retry after the burst (not sent: zero Outcome) replays the success.
func RaceRound(burst []history.Attempt, retry history.Attempt, records Count, p targets.Profile) Result {
	if len(burst) == 0 {
		return Unknownf("no request of the burst was sent")
	}
	j := newJudge(p)
	inFlight := "the success, its replay or the in-flight status " + p.InFlightStatus.String()
	if p.InFlight == targets.InFlightWaitReplay {
		inFlight = "the success or its replay (in_flight: wait-replay)"
	}
	var successes []history.Attempt // distinct successful answers
	statuses := map[int]int{}
	unknown := 0
	for _, a := range burst {
		if a.Outcome != history.OK {
			unknown++
			continue
		}
		statuses[a.Status]++
		switch {
		case p.Success(a.Status):
			if !slices.ContainsFunc(successes, func(s history.Attempt) bool { d, _ := ReplayDiffs(s, a, p); return len(d) == 0 }) {
				successes = append(successes, a)
			}
		case p.AcceptsInFlightStatus(a.Status):
		default:
			j.wrongStatus(a, inFlight, "a request of the burst")
		}
	}
	if len(successes) > 1 {
		diffs, _ := ReplayDiffs(successes[0], successes[1], p)
		an := anomaly(reports.KindReplayDiffs, successes[1], fmt.Sprintf("the burst got %d different successful answers (differ at %s)",
			len(successes), strings.Join(diffs, ", ")), successes[0].Seq, successes[1].Seq)
		an.What = diffPart(diffs)
		j.add(an)
	}
	j.recordsIf(len(successes) > 0, records, 1, seqsOf(successes)...)
	if unknown > 0 {
		j.unknownf("%d of %d requests of the burst got no answer (statuses %s)", unknown, len(burst), statusCounts(statuses))
	}
	switch {
	case len(successes) == 0 && unknown == 0:
		j.add(anomaly(reports.KindWrongStatus, burst[0], fmt.Sprintf("no request of the burst succeeded (statuses %s)", statusCounts(statuses))))
	case len(successes) > 0 && retry.Outcome != "":
		if j.answered(retry, "the retry after the burst") {
			j.same(successes[0], retry, "the retry after the burst")
		}
	}
	return j.result()
}

// statusCounts renders status counts in order, e.g. "201=1 409=15".
func statusCounts(n map[int]int) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d=%d", c, n[c]))
	}
	return strings.Join(parts, " ")
}
