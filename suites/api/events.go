package api

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// What the events properties (event-per-record, event-not-before-commit) share: one spec per
// event an operation declares it publishes, what an operation's events are tied to, and the
// wait for them.

// eventSpecs returns one spec per declared event of each operation that publishes, labelled
// events:TRANSPORT, skipped where the harness cannot observe the event, would wait longer than
// the run allows, or where one of skips says why not.
func eventSpecs(p *Property, e *Env, text func(*targets.Operation, *targets.Publish) string,
	body func(*S, *targets.Operation, *targets.Publish) check.Result, skips ...func(*targets.Publish) string) []*Spec {
	var out []*Spec
	for _, def := range e.Target.Publishing() {
		for _, pub := range def.Publishes {
			sp := spec(p, text(def, pub), func(s *S) check.Result { return body(s, def, pub) })
			sp.Extra = append(sp.Extra, "events:"+string(pub.Transport))
			switch {
			case e.EventsUnseen(pub) != "":
				sp.Skip = fmt.Sprintf("event %s cannot be observed: %s", pub.Name, e.EventsUnseen(pub))
			case pub.Within > e.Settings.MaxWait:
				sp.Skip = fmt.Sprintf("event %s may come %v after its operation's 2xx (publishes[].within), longer than --max-wait %v",
					pub.Name, pub.Within, e.Settings.MaxWait)
			}
			for _, skip := range skips {
				if sp.Skip == "" {
					sp.Skip = skip(pub)
				}
			}
			out = append(out, sp)
		}
	}
	return out
}

// eventOp is what the checkers read of one operation: its attempts, what its events name (its
// ref, or the records its 2xx answers name) and its record count.
func (s *S) eventOp(op *framework.Op, pub *targets.Publish, atts []history.Attempt) check.EventOp {
	eo := s.eventTies(op, pub, atts)
	eo.Records = op.Count()
	return eo
}

// eventTies is eventOp without the record count (for the fault properties' many operations).
func (s *S) eventTies(op *framework.Op, pub *targets.Publish, atts []history.Attempt) check.EventOp {
	eo := check.EventOp{Op: op.Def.Name, Key: op.Key, Ref: op.Ref, Attempts: atts}
	if op.Tenant != nil {
		eo.Tenant = op.Tenant.Name
	}
	if !pub.Tie.Record {
		eo.Ties = []string{op.Ref}
		return eo
	}
	for _, a := range atts {
		if !framework.Succeeded(a) {
			continue
		}
		if id, err := pub.RecordOf(a.RespBody); err == nil && !slices.Contains(eo.Ties, id) {
			eo.Ties = append(eo.Ties, id)
		} else if err != nil {
			s.Notef("%s ref %s: the record its answer #%d names could not be read: %v", op.Def.Name, op.Ref, a.Seq, err)
		}
	}
	return eo
}

// awaitEvents waits until the declared time has passed since the last attempt (an event a
// late attempt published comes within it), then returns the events of pub observed since
// start, as the checkers read them.
func (s *S) awaitEvents(def *targets.Operation, pub *targets.Publish, start time.Time, ops []check.EventOp) check.Events {
	return s.awaitEventsResumed(def, pub, start, ops, time.Time{}, "")
}

// awaitEventsResumed is awaitEvents for a spec whose faults kept the API from publishing until
// resumed (by says what that was: a restart, a heal): it waits the declared time after the
// later of the last attempt and resumed.
func (s *S) awaitEventsResumed(def *targets.Operation, pub *targets.Publish, start time.Time, ops []check.EventOp,
	resumed time.Time, by string) check.Events {
	last := start
	if resumed.After(last) {
		last = resumed
	}
	for _, op := range ops {
		for _, a := range op.Attempts {
			if a.End.After(last) {
				last = a.End
			}
		}
	}
	s.WaitUntil(fmt.Sprintf("event %s's publishes[].within (%s) to pass", pub.Name, framework.Seconds(pub.Within)), last.Add(pub.Within))
	ev := check.Events{Name: pub.Name, Seen: s.EventsSeen(pub, start), Until: time.Now(), Within: pub.Within,
		Ignore: pub.IgnoreSet(), ByRecord: pub.Tie.Record, Resumed: resumed, ResumedBy: by}
	if why := s.EventsUnseen(pub); why != "" {
		ev.Until = start // nothing can be said to have been observed for the whole wait
		s.Notef("event %s: %s", pub.Name, why)
	}
	if pub.Tie.Record {
		ev.Others = s.recordsBefore(def, pub, start)
	}
	for _, e := range ev.Seen {
		s.NoteKey(e.ID)
	}
	s.Notef("event %s: %d observed since the spec began, until %v after its last attempt", pub.Name, len(ev.Seen),
		ev.Until.Sub(last).Round(time.Millisecond))
	return ev
}

// recordsBefore are the records the operation's 2xx answers named before start (an earlier
// spec's: an event naming one came late, it is no ghost of this spec).
func (s *S) recordsBefore(def *targets.Operation, pub *targets.Publish, start time.Time) []string {
	var out []string
	for a := range s.History.After(0) {
		if !a.Start.Before(start) || a.Op != def.Name || a.IsEvent() || !framework.Succeeded(a) {
			continue
		}
		if id, err := pub.RecordOf(a.RespBody); err == nil {
			out = append(out, id)
		}
	}
	return out
}
