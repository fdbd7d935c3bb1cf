package api

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// event-per-record: N operations, each raced by K same-key requests released together, replayed
// in sequence and sent once more with another payload (the mismatch), and beside each a request
// without a key (a rejection, where the profile requires a key).
//
// The target MUST publish exactly one event id for every record, within the declared time of its
// operation's first 2xx; the race losers, the replays, the mismatch and the rejection MUST
// publish nothing under another id, and the rejection nothing at all; copies of one id MUST be
// equal outside the declared members.
//
// Catches: replay-republishes (a replay publishes the event again under a new id).
func init() {
	p := &Property{
		Name: "event-per-record",
		Must: `Every record MUST have exactly one event id published within publishes[].within of its operation's
first 2xx: the race losers, the replays, the mismatch and a rejected request (no key) MUST publish nothing
under another id, the rejection nothing at all; copies of one id MUST be equal outside publishes[].ignore.`,
		Catches: []string{"replay-republishes"},
		Needs:   append([]string{"operations[].publishes", "operations[].observer (for the record count of what was rejected)"}, eventsNeeds...),
		Labels:  []string{framework.EventsLabel},
		Covers:  "each event each operation declares it publishes",
	}
	p.Specs = func(e *Env) []*Spec {
		st := e.Settings
		return eventSpecs(p, e, func(def *targets.Operation, pub *targets.Publish) string {
			return fmt.Sprintf("%s: %s: %d operations, each raced by %d and replayed %d times, with a mismatch and a request without a key, publish one event id each",
				def.Name, pub.Name, eventOperations, st.RaceK, st.ReplayN-1)
		}, func(s *S, def *targets.Operation, pub *targets.Publish) check.Result {
			start := time.Now()
			var ops []check.EventOp
			for range eventOperations {
				if s.Ctx().Err() != nil {
					break
				}
				ops = append(ops, s.raceReplayMismatch(def, pub), s.rejectedForEvents(def, pub))
			}
			return check.EventPerRecord(ops, s.awaitEvents(def, pub, start, ops))
		})
	}
	register(p)
}

// eventOperations is how many operations event-per-record sends per event.
const eventOperations = 3

// raceReplayMismatch sends one operation as a burst of K same-key requests, replays it and sends
// it with the variant payload when the operation declares one.
func (s *S) raceReplayMismatch(def *targets.Operation, pub *targets.Publish) check.EventOp {
	op := s.NewOp(def)
	atts := s.Burst(op, s.Settings.RaceK)
	acked := false
	for _, a := range atts {
		acked = acked || framework.Succeeded(a)
	}
	if acked {
		for i := 1; i < s.Settings.ReplayN; i++ {
			atts = append(atts, op.Do(framework.Send{Instance: i}))
		}
		if def.HasVariant() {
			atts = append(atts, op.Do(framework.Send{Instance: -1, Variant: true}))
		}
	}
	return s.eventOp(op, pub, atts)
}

// rejectedForEvents sends a request without a key, as an operation of its own (its own ref): a
// rejection where the profile requires a key, else an ordinary operation.
func (s *S) rejectedForEvents(def *targets.Operation, pub *targets.Publish) check.EventOp {
	op := s.NewOp(def)
	a := op.Do(framework.Send{Instance: -1, Key: targets.KeyMode{Omit: true}})
	eo := s.eventOp(op, pub, []history.Attempt{a})
	eo.Rejected = s.Target.Profile.RequiresKey() && a.Outcome == history.OK && !framework.Succeeded(a)
	return eo
}
