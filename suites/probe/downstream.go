package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/retrysafe/retrysafe/reports/profile"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets/history"
)

// openSink starts the harness's downstream sink (faults.Sink) when the target declares one the
// probe can serve: a downstream with a fixed listen address (the probe does not start the
// target, so it cannot hand it {{.Downstream}}). It returns why there is none otherwise.
func (p *prober) openSink() string {
	d := p.t.Downstream
	switch {
	case d == nil:
		return "the target declares no downstream, so nothing lets the probe hold a request in flight or make one fail"
	case d.Listen == "":
		return "downstream.listen is not set: the probe does not start the target, so it cannot pass it {{.Downstream}}"
	}
	s, err := faults.NewSink(d.Listen, d.KeyHeader)
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause // the listen error, without NewSink's own words for the same
		}
		return fmt.Sprintf("cannot listen on downstream.listen %s: %v", d.Listen, err)
	}
	p.sink = s
	return ""
}

// downstreamFields probes in_flight and error_policy through the sink.
func (p *prober) downstreamFields(ctx context.Context, noSink string) []profile.Field {
	if p.sink == nil {
		return []profile.Field{p.field(profile.FieldInFlight, p.def).notProbed("%s", noSink),
			p.field(profile.FieldErrorPolicy, p.def).notProbed("%s", noSink)}
	}
	return []profile.Field{p.inFlight(ctx), p.errorPolicy(ctx)}
}

// inFlight holds the first attempt at the sink, sends a retry with the same key and judges its
// answer: a status while the first is held (409, or a 5xx: unsafe), the first answer once it is
// released (wait-replay), or a second execution (duplicate: unsafe).
func (p *prober) inFlight(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldInFlight, p.def)
	if p.opts.MaxAttempts-p.hist.Len() < 2 {
		return fd.notProbed("the probe's budget of %d requests was spent", p.opts.MaxAttempts)
	}
	o := p.newOp(p.def, p.tenant)
	waitCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	p.sink.Hold()
	defer p.sink.Release()
	firstC, secondC := make(chan history.Attempt, 1), make(chan history.Attempt, 1)
	go func() { a, _ := p.send(ctx, o, sendOpts{}); firstC <- a }()
	select {
	case <-p.held(waitCtx, 1):
	case a := <-firstC:
		fd.keep(a, sendOpts{})
		return fd.notProbed("the first request was answered %d without calling the downstream sink", a.Status)
	case <-time.After(p.opts.AttemptTimeout):
		p.sink.Release()
		fd.keep(<-firstC, sendOpts{})
		return fd.notProbed("the target did not call its downstream sink within %s", p.opts.AttemptTimeout)
	}
	again := p.held(waitCtx, 2) // the first call and one more: the retry executing again
	go func() { a, _ := p.send(ctx, o, sendOpts{}); secondC <- a }()
	var second history.Attempt
	answered, duplicate := false, false
	select {
	case second = <-secondC:
		answered = true
	case <-again:
		duplicate = true
	case <-time.After(p.opts.HoldWindow):
	}
	p.sink.Release()
	first := <-firstC
	if !answered {
		second = <-secondC
	}
	for _, a := range sortedBySeq(first, second) {
		fd.keep(a, sendOpts{})
	}
	if first.Outcome != history.OK || second.Outcome != history.OK {
		return fd.notProbed("an attempt got no answer: %s%s", first.Err, second.Err)
	}
	n, counted := fd.count(ctx, o)
	switch {
	case duplicate || (counted && n > 1) || (answered && success(second)):
		fd.unsafe("duplicate record: the retry sent while the first attempt was running executed again")
		return fd.done("duplicate")
	case answered:
		fd.note("answered while the first attempt was held at the downstream")
		if second.Status >= 500 {
			fd.unsafe("5xx to a race loser: the retry sent while the first attempt was running got %d", second.Status)
		}
		return fd.done(strconv.Itoa(second.Status))
	case sameAnswer(first, second, p.t.Profile.Ignore):
		fd.note("the retry waited for the first attempt and replayed its answer")
		return fd.done("wait-replay")
	}
	fd.note("the retry waited for the first attempt, then was answered %d", second.Status)
	if second.Status >= 500 {
		fd.unsafe("5xx to a race loser: the retry sent while the first attempt was running got %d", second.Status)
	}
	return fd.done(strconv.Itoa(second.Status))
}

// errorPolicy makes the sink fail the first attempt, then retries: "replay" when the retry is
// answered without calling the downstream again, "retry" when it executes again.
func (p *prober) errorPolicy(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldErrorPolicy, p.def)
	o := p.newOp(p.def, p.tenant)
	before := len(p.sink.Calls())
	p.sink.FailNext(math.MaxInt, http.StatusInternalServerError) // every call until FailNext(0, 0)
	first, ok := fd.do(ctx, o, sendOpts{})
	p.sink.FailNext(0, 0)
	if !ok {
		return fd.f
	}
	called := len(p.sink.Calls())
	switch {
	case called == before:
		return fd.notProbed("the first request was answered %d without calling the downstream sink", first.Status)
	case first.Status < 500:
		return fd.notProbed("the target answered %d when its downstream failed: no server error to retry", first.Status)
	}
	again, ok := fd.do(ctx, o, sendOpts{})
	if !ok {
		return fd.f
	}
	fd.count(ctx, o)
	if len(p.sink.Calls()) > called {
		fd.note("the failed request (%d) was executed again by the retry, answered %d", first.Status, again.Status)
		return fd.done("retry")
	}
	fd.note("the failed request (%d) was answered %d by the retry without calling the downstream again", first.Status, again.Status)
	return fd.done("replay")
}

// held returns a channel that is closed once at least n calls are held at the sink; it stays
// open if ctx ends or the sink closes first.
func (p *prober) held(ctx context.Context, n int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if _, err := p.sink.WaitHeld(ctx, n); err == nil {
			close(c)
		}
	}()
	return c
}

// sortedBySeq orders attempts as they were recorded.
func sortedBySeq(as ...history.Attempt) []history.Attempt {
	slices.SortFunc(as, func(a, b history.Attempt) int { return int(a.Seq - b.Seq) })
	return as
}
