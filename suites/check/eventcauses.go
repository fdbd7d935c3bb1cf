package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// The causes the events checkers name for event-new-id, ghost-event and missing-event: what the
// history shows (the attempts, the events as observed, the faults' injects and heals), never a
// guess from the property that ran. Each is a clause appended to the anomaly's message.

// The causes, as the messages name them.
const (
	CauseBeforeCommit = "a publication before the commit"
	CauseReplay       = "a republication for a replay"
	CauseRelayNewID   = "the relay's new id"
	CauseLinkCut      = "a publication lost to the broker link's cut"
	CauseKill         = "a kill between its commit and its publication"
	CauseNotVisible   = "cause not visible"
)

// The fault kinds the causes read (faults.Kind*: check imports no faults).
const (
	faultKill        = "kill"
	faultLoseConfirm = "lose-confirm"
	faultCutLink     = "cut-broker-link"
)

// faultSpan is one fault from its inject to its heal (To zero: never healed).
type faultSpan struct {
	kind, target string
	from, to     time.Time
}

// spans pairs the injects and heals of the faults of the given kinds, in the order injected.
func spans(events []history.Event, kinds ...string) []faultSpan {
	var out []faultSpan
	open := map[string]int{} // fault -> its open span in out
	for _, e := range events {
		if e.Err != "" || !slices.Contains(kinds, e.Kind) {
			continue
		}
		switch e.Action {
		case "inject":
			open[e.Fault] = len(out)
			out = append(out, faultSpan{kind: e.Kind, target: e.Target, from: e.At})
		case "heal":
			if i, ok := open[e.Fault]; ok {
				out[i].to = e.At
				delete(open, e.Fault)
			}
		}
	}
	return out
}

// acting reports whether the span was acting at t (injected at or before t, healed after).
func (s faultSpan) acting(t time.Time) bool {
	return !s.from.After(t) && (s.to.IsZero() || s.to.After(t))
}

// words names the fault for a message.
func (s faultSpan) words() string {
	switch s.kind {
	case faultKill:
		return fmt.Sprintf("the kill of %s at %s", s.target, clock(s.from))
	case faultLoseConfirm:
		return fmt.Sprintf("the lost confirm (the broker's answers cut at %s)", clock(s.from))
	}
	return fmt.Sprintf("the cut of the broker link at %s", clock(s.from))
}

// clock renders a time of the history for a message.
func clock(t time.Time) string { return t.Format("15:04:05.000") }

// failedAnswer reports whether a was answered, and not with a 2xx: the API said it failed.
func failedAnswer(a history.Attempt) bool { return a.Outcome == history.OK && !succeeded(a) }

// firstMayCommit is the attempt, by start, that may have committed the operation first: one
// answered with a 2xx, or one whose outcome is unknown.
func firstMayCommit(as []history.Attempt) (history.Attempt, bool) {
	var first history.Attempt
	found := false
	for _, a := range as {
		if (succeeded(a) || a.Outcome == history.Unknown) && (!found || a.Start.Before(first.Start)) {
			first, found = a, true
		}
	}
	return first, found
}

// failedBefore is the last attempt, by start, that started at or before t and was answered with
// a failure.
func failedBefore(as []history.Attempt, t time.Time) (history.Attempt, bool) {
	var last history.Attempt
	found := false
	for _, a := range as {
		if failedAnswer(a) && !a.Start.After(t) && (!found || a.Start.After(last.Start)) {
			last, found = a, true
		}
	}
	return last, found
}

// beforeCommit says how one of an operation's event ids came before anything could have
// committed it ("" when none did): observed before its first attempt that may have committed
// began, or with no such attempt at all.
func beforeCommit(op EventOp, list []string, first map[string]time.Time) string {
	c, could := firstMayCommit(op.Attempts)
	for _, id := range list {
		at := first[id]
		if could && !at.Before(c.Start) {
			continue
		}
		why := fmt.Sprintf("%s was observed at %s, before #%d, the first attempt that may have committed, began", id, clock(at), c.Seq)
		if !could {
			why = fmt.Sprintf("%s was observed at %s, and no attempt may have committed", id, clock(at))
		}
		if f, ok := failedBefore(op.Attempts, at); ok {
			why += fmt.Sprintf(": it was published for #%d, which failed (%d)", f.Seq, f.Status)
		}
		return why
	}
	return ""
}

// newIDCause says why an operation's events carry several ids, as the history shows it: a
// publication before the commit (an id observed before any attempt could have committed), a
// republication for a replay (a later id first observed after a replayed 2xx began), the
// relay's new id (a later id first observed after a kill or a lost confirm that acted when the
// first was published, or later), or a cause not visible.
func newIDCause(op EventOp, evs []Event, ev Events) string {
	list, first := ids(evs)
	if len(list) < 2 {
		return CauseNotVisible
	}
	if why := beforeCommit(op, list, first); why != "" {
		return CauseBeforeCommit + " (" + why + ")"
	}
	if ok, acked := firstSuccess(op.Attempts); acked {
		for _, id := range list[1:] {
			for _, r := range op.Attempts {
				if succeeded(r) && r.Seq != ok.Seq && !r.Start.Before(ok.End) && first[id].After(r.Start) {
					return fmt.Sprintf("%s (%s was first observed at %s, after the replay #%d of the 2xx #%d began)", CauseReplay, id, clock(first[id]), r.Seq, ok.Seq)
				}
			}
		}
	}
	t1 := first[list[0]]
	for _, id := range list[1:] {
		for _, s := range spans(ev.Faults, faultKill, faultLoseConfirm, faultCutLink) {
			if s.from.Before(first[id]) && (s.to.IsZero() || !s.to.Before(t1)) {
				return fmt.Sprintf("%s (%s was first observed at %s, after %s, and %s at %s)", CauseRelayNewID, id, clock(first[id]), s.words(), list[0], clock(t1))
			}
		}
	}
	return CauseNotVisible
}

// missingCause says why the event of an operation acknowledged at ok never came, as the history
// shows it: acknowledged while the broker link was cut (its failed publication was never
// published again), a kill after its 2xx and before it was due (its publication died with the
// process), or a cause not visible.
func missingCause(ok history.Attempt, ev Events) string {
	deadline := ev.deadline(ok)
	for _, s := range spans(ev.Faults, faultCutLink) {
		if s.acting(ok.End) {
			return fmt.Sprintf("%s (acknowledged at %s while the link was cut, it was not published after the heal: its failed publication was given up)",
				CauseLinkCut, clock(ok.End))
		}
	}
	for _, s := range spans(ev.Faults, faultKill) {
		if s.from.After(ok.End) && s.from.Before(deadline) {
			return fmt.Sprintf("%s (%s came after the 2xx #%d and before the event)", CauseKill, s.words(), ok.Seq)
		}
	}
	return CauseNotVisible
}

// strayCause says why an event that names no record of the spec came, as the history shows it:
// observed while an attempt that then failed was in flight (a publication before the commit),
// or a cause not visible.
func strayCause(e Event, ops []EventOp) string {
	for _, op := range ops {
		for _, a := range op.Attempts {
			if failedAnswer(a) && !e.At.Before(a.Start) && !e.At.After(a.End) {
				return fmt.Sprintf("%s (it was observed at %s while #%d of %s ref %s was in flight, which then failed (%d))",
					CauseBeforeCommit, clock(e.At), a.Seq, op.Op, op.Ref, a.Status)
			}
		}
	}
	return CauseNotVisible
}
