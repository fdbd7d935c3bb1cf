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

// eventsNeeds are the target-file fields every events property reads besides its own (list
// prints them with each).
var eventsNeeds = []string{
	"publishes[].grace (how long a spec still looks for late second ids and ghosts once every event it waits for is in: at least the relay's polling interval; default 2s)",
	"publishes[].amqp.exchange_durable and exchange_auto_delete (with create: true, how the harness declares the exchange, as the API declares its own: " +
		"default durable, not auto-deleted; consumers[].amqp takes them too)",
}

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

// awaitEvents waits for the events of the spec's acknowledged operations (see
// awaitEventsAfter), then returns the events of pub observed since start, as the checkers read
// them.
func (s *S) awaitEvents(def *targets.Operation, pub *targets.Publish, start time.Time, ops []check.EventOp) check.Events {
	return s.awaitEventsAfter(def, pub, start, ops, check.Events{})
}

// awaitEventsAfter waits until every acknowledged operation of the spec has an event observed,
// or until the latest is due (publishes[].within after its 2xx, or after faulted.Resumed: when
// the spec's faults let the API publish again), then a grace window more (publishes[].grace) for
// late second ids and ghosts. It returns faulted (Resumed, ResumedBy, Steps) with the events of
// pub observed since start and the spec's faults, as the checkers read them.
func (s *S) awaitEventsAfter(def *targets.Operation, pub *targets.Publish, start time.Time, ops []check.EventOp, faulted check.Events) check.Events {
	ev := faulted
	ev.Name, ev.Within, ev.Ignore, ev.ByRecord = pub.Name, pub.Within, pub.IgnoreSet(), pub.Tie.Record
	if pub.Tie.Record {
		ev.Others = s.recordsBefore(def, pub, start)
	}
	waited := time.Now()
	missing := 0
	_, latest := check.Awaiting(ops, ev)
	stop := s.Waiting(fmt.Sprintf("the events of %s (publishes[].within %s)", pub.Name, framework.Seconds(pub.Within)), latest)
	for {
		ev.Seen = s.EventsSeen(pub, start)
		var until time.Time
		missing, until = check.Awaiting(ops, ev)
		if missing == 0 || !time.Now().Before(until) || !s.SleepUntil(minTime(until, time.Now().Add(eventPoll))) {
			break
		}
	}
	stop()
	in := time.Now()
	s.WaitUntil(fmt.Sprintf("late ids and ghosts of %s (publishes[].grace %s)", pub.Name, framework.Seconds(pub.Grace)), in.Add(pub.Grace))
	ev.Seen, ev.Until = s.EventsSeen(pub, start), time.Now()
	for _, f := range s.History.Events() {
		if !f.At.Before(start) {
			ev.Faults = append(ev.Faults, f)
		}
	}
	if why := s.EventsUnseen(pub); why != "" {
		ev.Until = start // nothing can be said to have been observed for the whole wait
		s.Notef("event %s: %s", pub.Name, why)
	}
	for _, e := range ev.Seen {
		s.NoteKey(e.ID)
	}
	awaited := "every acknowledged operation's event was in"
	if missing > 0 {
		awaited = fmt.Sprintf("%d acknowledged operations still had none when the last was due", missing)
	}
	s.Notef("event %s: %d observed since the spec began; %s after %v of waiting, then %v more for late ids and ghosts", pub.Name, len(ev.Seen),
		awaited, in.Sub(waited).Round(time.Millisecond), ev.Until.Sub(in).Round(time.Millisecond))
	return ev
}

// eventPoll is how often a spec looks whether the events it waits for are in.
const eventPoll = 50 * time.Millisecond

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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
