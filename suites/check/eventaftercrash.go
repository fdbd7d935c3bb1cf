package check

import (
	"fmt"
	"slices"
	"time"
)

// EventAfterCrash judges the events of operations sent under concurrent load while the API was
// SIGKILLed and restarted (event-after-crash), one kill inside its hold between a commit and the
// publication where it can be held: every operation acknowledged with a 2xx MUST have its event
// published within the declared time after its 2xx, or after the restart that followed it, under
// one id (missing-event, event-new-id); copies of that id are fine.
//
// The kills (the history's, ev.Faults) exercised what they name when one came with an attempt
// in flight; a pass says how many came between an operation's 2xx and its event. A step that
// exercised nothing (that, or one of ev.Steps) makes the result unknown, never a pass; an
// anomaly stays a failure.
func EventAfterCrash(ops []EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	j.afterFaults(ops, ev)
	j.steps(append([]Step{crashKills(ops, ev)}, ev.Steps...))
	return j.result()
}

// StepKills names the kills' step.
const StepKills = "the kills"

// crashKills is the step of the kills: how many there were, how many came with an attempt in
// flight (what they name), and how many between an acknowledged operation's 2xx and the first
// observation of its event (between its commit and its publication: the window an outbox
// closes).
func crashKills(ops []EventOp, ev Events) Step {
	kills := spans(ev.Faults, faultKill)
	firstSeen := make([]time.Time, len(ops)) // zero: no event seen
	for i, op := range ops {
		for _, e := range ev.Seen {
			if e.Err == "" && slices.Contains(op.Ties, e.Tie) && (firstSeen[i].IsZero() || e.At.Before(firstSeen[i])) {
				firstSeen[i] = e.At
			}
		}
	}
	inFlight, inWindow := 0, 0
	for _, k := range kills {
		flying, window := false, false
		for i, op := range ops {
			for _, a := range op.Attempts {
				flying = flying || a.Start.Before(k.from) && a.End.After(k.from)
			}
			if ok, acked := firstSuccess(op.Attempts); acked && ok.End.Before(k.from) && (firstSeen[i].IsZero() || firstSeen[i].After(k.from)) {
				window = true
			}
		}
		if flying {
			inFlight++
		}
		if window {
			inWindow++
		}
	}
	note := fmt.Sprintf("%d kills, %d with an attempt in flight, %d between an acknowledged operation's 2xx and its event (its commit and its publication)",
		len(kills), inFlight, inWindow)
	if inFlight == 0 {
		note = fmt.Sprintf("%d kills, none with an attempt in flight: no kill hit the API at work", len(kills))
	}
	return Step{Name: StepKills, Exercised: inFlight > 0, Note: note}
}
