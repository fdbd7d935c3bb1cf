package probe

import (
	"context"
	"github.com/retrysafe/retrysafe/reports/profile"
	"strconv"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// replayFields probes replay (is a retry after completion answered with the same status and
// body, and is the work done once) and replay_header (what marks the replay), from the baseline
// request and one retry of it.
func (p *prober) replayFields(ctx context.Context, base op, first history.Attempt) []profile.Field {
	fd := p.field(profile.FieldReplay, base.def)
	fd.keep(first, sendOpts{})
	hd := p.field(profile.FieldReplayHeader, base.def)
	hd.keep(first, sendOpts{})
	again, ok := fd.do(ctx, base, sendOpts{})
	if !ok {
		return []profile.Field{fd.f, hd.notProbed("the retry got no answer")}
	}
	hd.keep(again, sendOpts{})
	value := "same"
	if diffs := differences(first, again, p.t.Profile.Ignore); len(diffs) > 0 {
		value = "differs at " + strings.Join(diffs, ", ")
	}
	if n, counted := fd.count(ctx, base); counted {
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
	return []profile.Field{fd.done(value), hd.done(marker)}
}

// mismatchFields probes mismatch_status (the same key with a different payload) and
// reordered_body (the same payload with its fields reordered).
func (p *prober) mismatchFields(ctx context.Context) []profile.Field {
	var def *targets.Operation
	for _, op := range p.t.Operations {
		if op.HasVariant() && (def == nil || op == p.def) {
			def = op
		}
	}
	out := []profile.Field{p.reordered(ctx)}
	fd := p.field(profile.FieldMismatchStatus, def)
	if def == nil {
		return append(out, fd.notProbed("no operation declares a variant_body (the same ref with other content)"))
	}
	o := p.newOp(def, p.tenant)
	first, ok := fd.do(ctx, o, sendOpts{})
	if !ok {
		return append(out, fd.f)
	}
	if !success(first) {
		return append(out, fd.notProbed("the first request was answered %d", first.Status))
	}
	other, ok := fd.do(ctx, o, sendOpts{variant: true})
	if !ok {
		return append(out, fd.f)
	}
	n, counted := fd.count(ctx, o)
	switch {
	case success(other) && sameAnswer(first, other, p.t.Profile.Ignore):
		fd.unsafe("another request's response replayed: the different payload got the first payload's answer")
	case success(other) && counted && n > 1:
		fd.unsafe("duplicate record: the different payload was executed under the same key (%d records)", n)
	case success(other):
		fd.unsafe("the different payload was executed under the same key")
	}
	return append(out, fd.done(strconv.Itoa(other.Status)))
}

// reordered sends a body, then the same body with its fields reordered and other white space,
// under one key: "replay" when the second is answered as a retry, else its status.
func (p *prober) reordered(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldReorderedBody, p.def)
	o := p.newOp(p.def, p.tenant)
	body, err := p.body(o)
	if err != nil {
		return fd.notProbed("cannot render the body: %v", err)
	}
	again, err := targets.Reformat(body, p.def.BodyFormat)
	if err != nil {
		return fd.notProbed("cannot reorder the body: %v", err)
	}
	first, ok := fd.do(ctx, o, sendOpts{})
	if !ok {
		return fd.f
	}
	if !success(first) {
		return fd.notProbed("the first request was answered %d", first.Status)
	}
	second, ok := fd.do(ctx, o, sendOpts{body: again})
	if !ok {
		return fd.f
	}
	n, counted := fd.count(ctx, o)
	switch {
	case success(second):
		if counted && n > 1 {
			fd.unsafe("duplicate record: the reordered body was executed again (%d records)", n)
		}
		if sameAnswer(first, second, p.t.Profile.Ignore) {
			return fd.done("replay")
		}
		return fd.done("executed")
	}
	fd.note("the same payload with its fields reordered is treated as another payload")
	return fd.done(strconv.Itoa(second.Status))
}
