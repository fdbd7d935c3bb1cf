package check

import (
	"slices"
	"time"
)

// What an events spec's fault steps did, and how long the spec waits for its events.

// Step is one fault step of an events spec (the lost confirm, the cut of the broker link, the
// kills, the kill inside the hold) and whether it exercised what it names: the broker took an
// event while its answers were cut; an operation was acknowledged while the link was cut; a kill
// came with operations in flight; an instance held a committed publication when it was killed.
type Step struct {
	// Name names the step ("the lost confirm").
	Name string
	// Exercised says it did what it names.
	Exercised bool
	// Note says what it did (a pass says it too: how many confirms were lost, how many kills
	// landed between a commit and its publication), or why it exercised nothing.
	Note string
	// Unhealed says the harness could not heal a fault of the step when it should have (a
	// restart, a heal or a release that failed; the fault lasted until a later retry, or
	// lasts): the API may have been kept from publishing longer than the spec knows, so an
	// event that did not come in time is unknown, never missing.
	Unhealed bool
}

// unhealed is the note of the first step whose fault the harness could not heal ("" = none).
func (ev Events) unhealed() string {
	for _, s := range ev.Steps {
		if s.Unhealed {
			return s.Note
		}
	}
	return ""
}

// steps judges the spec's steps: each one's note is what a pass rests on, and the report says
// it whatever the verdict; a step that exercised nothing makes the result unknown with its note,
// never a pass. An anomaly any step observed stays a failure (Result.Verdict: an anomaly wins
// over unknown).
func (j *judge) steps(steps []Step) {
	for _, s := range steps {
		if s.Exercised {
			j.r.Observef("%s: %s", s.Name, s.Note)
			continue
		}
		j.r.Observef("%s exercised nothing: %s", s.Name, s.Note)
		j.unknownf("%s exercised nothing: %s", s.Name, s.Note)
	}
}

// Awaiting says what an events spec still waits for: how many of its acknowledged operations
// have no event observed yet, and until when it waits for them (the latest time one of them is
// due: Within after its first 2xx, or after the API could publish again). A spec stops waiting
// once none is missing, or at until, then looks a grace window more for late second ids and
// ghosts.
func Awaiting(ops []EventOp, ev Events) (missing int, until time.Time) {
	for _, op := range ops {
		ok, acked := firstSuccess(op.Attempts)
		if !acked || slices.ContainsFunc(ev.Seen, func(e Event) bool { return e.Err == "" && slices.Contains(op.Ties, e.Tie) }) {
			continue
		}
		missing++
		from, _ := ev.due(ok)
		if due := from.Add(ev.Within); due.After(until) {
			until = due
		}
	}
	return missing, until
}
