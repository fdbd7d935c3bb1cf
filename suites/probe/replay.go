package probe

import (
	"strconv"
	"strings"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// replayFields probes replay (is a retry after completion answered with the same status and
// body, and is the work done once) and replay_header (what marks the replay), from the baseline
// request and one retry of it.
func (p *prober) replayFields(base *framework.Op, first history.Attempt) []profile.Field {
	fd := p.field(profile.FieldReplay, base.Def)
	fd.keep(first, framework.Send{})
	hd := p.field(profile.FieldReplayHeader, base.Def)
	hd.keep(first, framework.Send{})
	again, ok := fd.do(base, framework.Send{})
	if !ok {
		rr := p.field(profile.FieldReplayReturns, base.Def)
		return []profile.Field{fd.f, hd.notProbed("the retry got no answer"), rr.notProbed("the retry got no answer")}
	}
	hd.keep(again, framework.Send{})
	value := "same"
	if diffs := p.differences(first, again); len(diffs) > 0 {
		value = "differs at " + strings.Join(diffs, ", ")
	}
	if n, counted := fd.count(base); counted {
		switch {
		case n > 1:
			fd.unsafe("duplicate record: %d records after one request and its retry", n)
		case n == 0:
			fd.unsafe("no business record although the request was answered %d", first.Status)
		}
	}
	marker, others := replayMarker(first, again, p.t.Profile.Ignore)
	if len(others) > 0 {
		hd.note("other headers only on the retry: %s", strings.Join(others, "; "))
	}
	if marker == "" {
		marker = "none"
	}
	return []profile.Field{fd.done(value), hd.done(marker), p.replayReturns(base, first, again)}
}

// reordered sends a body, then the same body with its fields reordered and other white space,
// under one key: "replay" when the second is answered as a retry, "executed" when a second
// record (or, without an observer, another success) shows it was executed again, else the
// status it got.
func (p *prober) reordered() profile.Field {
	fd := p.field(profile.FieldReorderedBody, p.def)
	o := p.s.NewOp(p.def)
	if _, _, err := o.Build(p.s.Ctx(), framework.Send{Reformat: true}); err != nil {
		return fd.notProbed("cannot reorder the body: %v", err)
	}
	first, ok := fd.doFirst(o)
	if !ok {
		return fd.f
	}
	second, ok := fd.do(o, framework.Send{Reformat: true})
	if !ok {
		return fd.f
	}
	n, counted := fd.count(o)
	if !success(second) {
		fd.note("the same payload with its fields reordered is treated as another payload")
		return fd.done(statusText(second.Status))
	}
	bodies := bodyDifferences(first.RespBody, second.RespBody, p.t.Profile.Ignore)
	switch {
	case counted && n > 1:
		fd.unsafe("duplicate record: the reordered body was executed again (%d records)", n)
		return fd.done("executed")
	case !counted && len(bodies) > 0:
		fd.note("answered with another success (the body differs at %s); no observer to count records", strings.Join(bodies, ", "))
		return fd.done("executed")
	case len(bodies) > 0:
		fd.note("one record, but the answer's body differs at %s", strings.Join(bodies, ", "))
	case first.Status != second.Status:
		fd.note("replayed with status %d instead of %d", second.Status, first.Status)
	}
	return fd.done("replay")
}

// differences lists where b differs from a, with the target's ignored paths left out.
func (p *prober) differences(a, b history.Attempt) []string {
	return differences(a, b, p.t.Profile.Ignore)
}

// same reports whether b repeats a (same status and body).
func (p *prober) same(a, b history.Attempt) bool { return sameAnswer(a, b, p.t.Profile.Ignore) }

// statusText writes a status code as a profile value.
func statusText(status int) string { return strconv.Itoa(status) }
