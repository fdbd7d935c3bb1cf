package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// What the events checkers share: the events an API publishes (an operation's publishes
// block), observed by the harness, are tied to the operations that published them by what they
// name (the operation's ref, or the id of the record its 2xx answer names), and judged against
// the operations' attempts: one event id per record, published within the declared time, none
// for what failed or was rejected, copies of one id equal outside the declared members.

// Event is one event the harness observed the target publish.
type Event struct {
	// Seq is its entry in the run's history.
	Seq int64
	// ID is its event id, what consumers deduplicate on.
	ID string
	// Tie is what it names of its operation: the operation's ref, or its record's id.
	Tie string
	// At is when the harness observed it.
	At time.Time
	// Body is its payload.
	Body []byte
	// Err says why its id or tie could not be read ("" = both were).
	Err string
}

// EventOp is one operation of an events spec and what it left.
type EventOp struct {
	// Op, Tenant, Key and Ref name it.
	Op, Tenant, Key, Ref string
	// Attempts are its attempts, in the order they were sent.
	Attempts []history.Attempt
	// Ties are what its events name: its ref, or the ids of the records its 2xx answers name.
	Ties []string
	// Records is its business records' count (not taken without an observer).
	Records Count
	// Rejected says it was sent to be rejected (without a key) and was, as the profile declares.
	Rejected bool
}

// Events is what a spec observed of one declared event (a publishes entry).
type Events struct {
	// Name is the event's name (order.created).
	Name string
	// Seen are the events observed since the spec began, in the order observed.
	Seen []Event
	// Until is when the harness stopped looking.
	Until time.Time
	// Within is how long after an operation's first 2xx answer its event must be published.
	Within time.Duration
	// Ignore are the members that may differ between copies of one id.
	Ignore targets.Ignore
	// ByRecord says the events name records (record: ...) rather than refs: an event that names
	// a record no operation's answer named is a ghost.
	ByRecord bool
	// Others are the ties of the run's operations outside the spec: events naming them are
	// left out (an earlier spec's, published late).
	Others []string
	// Resumed is when the API could publish again after the spec's last fault (the restart
	// after its last kill, the heal of its broker link): an event due earlier is due Within
	// after it. Zero: no fault.
	Resumed time.Time
	// ResumedBy says what Resumed is, for the messages ("the restart after the last kill").
	ResumedBy string
	// Steps are the spec's fault steps, each with whether it exercised what it names.
	Steps []Step
	// Faults are the injects and heals of the run's faults (the history's events), from which
	// the messages name an anomaly's cause.
	Faults []history.Event
}

// deadline is when the event of an operation acknowledged at ok is due at the latest.
func (ev Events) deadline(ok history.Attempt) time.Time {
	from, _ := ev.due(ok)
	return from.Add(ev.Within)
}

// due is when the event of an operation acknowledged at ok must have been published: Within
// after its first 2xx, or after the API could publish again when a fault came later.
func (ev Events) due(ok history.Attempt) (from time.Time, what string) {
	if ev.Resumed.After(ok.End) {
		return ev.Resumed, ev.ResumedBy
	}
	return ok.End, fmt.Sprintf("its 2xx (#%d)", ok.Seq)
}

// partition sorts the events seen by operation (by the index of the op whose ties they name);
// an event that names none is in stray; one whose id or tie could not be read makes the result
// unknown.
func (j *judge) partition(ops []EventOp, ev Events) (byOp [][]Event, stray []Event) {
	byOp = make([][]Event, len(ops))
	for _, e := range ev.Seen {
		if e.Err != "" {
			j.unknownf("event %s #%d could not be read: %s", ev.Name, e.Seq, e.Err)
			continue
		}
		i := slices.IndexFunc(ops, func(op EventOp) bool { return slices.Contains(op.Ties, e.Tie) })
		switch {
		case i >= 0:
			byOp[i] = append(byOp[i], e)
		case ev.ByRecord && !slices.Contains(ev.Others, e.Tie):
			stray = append(stray, e)
		}
	}
	return byOp, stray
}

// ghosts reports stray events: they name a record no answer of the run named.
func (j *judge) ghosts(stray []Event, ops []EventOp, ev Events) {
	for _, e := range stray {
		j.add(reports.Anomaly{Kind: reports.KindGhostEvent, Op: ev.Name, Key: e.ID, Seqs: []int64{e.Seq}, Message: fmt.Sprintf(
			"event %s %s names record %s, which no answer named: an event tied to no record; cause: %s", ev.Name, e.ID, e.Tie, strayCause(e, ops))})
	}
}

// ghostOf reports the events of an operation that certainly left nothing to publish about
// (what says how: rejected, no record).
func (j *judge) ghostOf(op EventOp, evs []Event, ev Events, what string) {
	list, first := ids(evs)
	cause := CauseNotVisible
	if why := beforeCommit(op, list, first); why != "" {
		cause = CauseBeforeCommit + " (" + why + ")"
	}
	j.add(opAnomaly(reports.KindGhostEvent, op, fmt.Sprintf("%s ref %s %s and published %s %s: an event tied to no record; cause: %s",
		op.Op, op.Ref, what, ev.Name, evs[0].ID, cause), eventSeqs(evs)...))
}

// idList names at most a few ids, and how many more.
func idList(list []string) string {
	const shown = 4
	if len(list) <= shown {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:shown], ", "), len(list)-shown)
}

// ids are the distinct event ids of evs, in the order first observed, with when each was first
// observed.
func ids(evs []Event) (out []string, first map[string]time.Time) {
	first = map[string]time.Time{}
	for _, e := range evs {
		if _, seen := first[e.ID]; !seen {
			first[e.ID] = e.At
			out = append(out, e.ID)
		}
	}
	return out, first
}

// eventSeqs are the history entries of evs.
func eventSeqs(evs []Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// opAnomaly is an anomaly about an operation's events.
func opAnomaly(kind reports.Kind, op EventOp, msg string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: kind, Op: op.Op, Tenant: op.Tenant, Key: op.Key, Seqs: seqs, Message: msg}
}

// firstSuccess is the operation's first 2xx answer by when it was received.
func firstSuccess(as []history.Attempt) (history.Attempt, bool) {
	var first history.Attempt
	found := false
	for _, a := range as {
		if succeeded(a) && (!found || a.End.Before(first.End)) {
			first, found = a, true
		}
	}
	return first, found
}

// oneID checks that the events of an operation acknowledged at ok carry one id, the first
// published within the declared time: none (once the harness looked that long) or a late one is
// a missing event (unknown where the harness could not heal a fault of the spec), a second id a
// new id. Each names its cause as the history shows it.
func (j *judge) oneID(op EventOp, evs []Event, ok history.Attempt, ev Events) {
	list, first := ids(evs)
	if len(list) > 1 {
		j.add(opAnomaly(reports.KindEventNewID, op, fmt.Sprintf("%s ref %s published %s under %d ids (%s): consumers that deduplicate on the id see %d events; cause: %s",
			op.Op, op.Ref, ev.Name, len(list), idList(list), len(list), newIDCause(op, evs, ev)), append([]int64{ok.Seq}, eventSeqs(evs)...)...))
	}
	from, after := ev.due(ok)
	deadline := from.Add(ev.Within)
	switch {
	case len(list) == 0 && ev.Until.Before(deadline):
		j.unknownf("%s ref %s: no event %s yet, and the harness looked only %v after %s, not the %v declared",
			op.Op, op.Ref, ev.Name, ev.Until.Sub(from).Round(time.Millisecond), after, ev.Within)
	case (len(list) == 0 || first[list[0]].After(deadline)) && ev.unhealed() != "":
		j.unknownf("%s ref %s: no event %s within %v after %s, but the harness could not heal its fault (%s): the API may have been kept from publishing",
			op.Op, op.Ref, ev.Name, ev.Within, after, ev.unhealed())
	case len(list) == 0:
		j.add(opAnomaly(reports.KindMissingEvent, op, fmt.Sprintf("%s ref %s was acknowledged (#%d) and published no event %s within %v after %s: the event was lost; cause: %s",
			op.Op, op.Ref, ok.Seq, ev.Name, ev.Within, after, missingCause(ok, ev)), ok.Seq))
	case first[list[0]].After(deadline):
		j.add(opAnomaly(reports.KindMissingEvent, op, fmt.Sprintf("%s ref %s was acknowledged (#%d) and its event %s came %v after %s, not within %v",
			op.Op, op.Ref, ok.Seq, ev.Name+" "+list[0], first[list[0]].Sub(from).Round(time.Millisecond), after, ev.Within), ok.Seq, eventSeqs(evs)[0]))
	}
}

// afterFaults judges the events of operations sent while the API was faulted (killed and
// restarted, its broker link cut): every acknowledged operation's event published once its
// faults were over, under one id (copies of that id are at least once, and fine; they MUST be
// equal outside the declared members); an operation never acknowledged may have published
// nothing, and never under two ids; one counted with no record, nothing. An event that names no
// operation of the spec is a ghost only when every attempt of the spec was answered: one that
// lost its answer (to a kill) may have committed a record no answer named.
func (j *judge) afterFaults(ops []EventOp, ev Events) {
	byOp, stray := j.partition(ops, ev)
	if !slices.ContainsFunc(ops, func(op EventOp) bool {
		return slices.ContainsFunc(op.Attempts, func(a history.Attempt) bool { return a.Outcome == history.Unknown })
	}) {
		j.ghosts(stray, ops, ev)
	}
	for i, op := range ops {
		evs := byOp[i]
		ok, acked := firstSuccess(op.Attempts)
		switch {
		case acked:
			j.oneID(op, evs, ok, ev)
		case op.noRecord() && len(evs) > 0:
			j.ghostOf(op, evs, ev, "left no record")
		default:
			j.newIDsUnacknowledged(op, evs, ev)
		}
		j.differs(op, evs, ev)
	}
}

// newIDsUnacknowledged reports the events of an operation never acknowledged under more than
// one id (it may have committed, and published under one).
func (j *judge) newIDsUnacknowledged(op EventOp, evs []Event, ev Events) {
	if list, _ := ids(evs); len(list) > 1 {
		j.add(opAnomaly(reports.KindEventNewID, op, fmt.Sprintf("%s ref %s, never acknowledged, published %s under %d ids (%s); cause: %s",
			op.Op, op.Ref, ev.Name, len(list), idList(list), newIDCause(op, evs, ev)), eventSeqs(evs)...))
	}
}

// differs checks that the copies of each event id are equal outside the declared members.
func (j *judge) differs(op EventOp, evs []Event, ev Events) {
	firsts := map[string]Event{}
	for _, e := range evs {
		f, seen := firsts[e.ID]
		if !seen {
			firsts[e.ID] = e
			continue
		}
		if diffs := CompareBodies(f.Body, e.Body, ev.Ignore); len(diffs) > 0 {
			an := opAnomaly(reports.KindEventDiffers, op, fmt.Sprintf("two copies of event %s %s (#%d, #%d) differ at %s",
				ev.Name, e.ID, f.Seq, e.Seq, strings.Join(diffs, ", ")), f.Seq, e.Seq)
			an.Field = diffs[0]
			j.add(an)
		}
	}
}

// noRecord reports whether the operation certainly left nothing to publish about: rejected as
// declared, or counted with no record and never acknowledged.
func (op EventOp) noRecord() bool {
	if op.Rejected {
		return true
	}
	_, acked := firstSuccess(op.Attempts)
	return !acked && op.Records.known() && op.Records.N == 0
}
