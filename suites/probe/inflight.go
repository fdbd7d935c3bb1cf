package probe

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
)

// inFlight probes the answer to a retry sent while the first attempt still runs. The first
// attempt is held at the harness's downstream sink (a target that calls one the harness can
// serve) or, without one, made slow by the target's slow hook. The retry's answer while the
// first is held is the value (409, or a 5xx: unsafe); a retry answered only once the first
// ended with its answer is "wait-replay"; a second execution is "duplicate" (unsafe).
func (p *prober) inFlight() profile.Field {
	fd := p.field(profile.FieldInFlight, p.def)
	sink, why := p.sink()
	switch {
	case sink == nil && !p.t.Hooks.CanSlow():
		return fd.notProbed("%s, and it declares no hooks.slow: nothing lets the probe hold a request in flight", why)
	case p.left() < 2:
		return fd.notProbed("the probe's budget of %d requests was spent", p.opts.MaxAttempts)
	case sink != nil:
		return p.inFlightAtSink(fd, sink)
	}
	return p.inFlightByHook(fd)
}

// sink returns the harness's downstream sink when the target can reach it: at a fixed
// downstream.listen, or as the {{.Downstream}} of the lifecycle the harness started. Else nil
// and why.
func (p *prober) sink() (*faults.Sink, string) {
	d, lc := p.t.Downstream, p.t.Lifecycle
	switch {
	case d == nil:
		return nil, "the target declares no downstream"
	case d.Listen == "" && (lc == nil || !lc.UsesDownstream()):
		return nil, "downstream.listen is not set and no lifecycle passes {{.Downstream}}: the target cannot reach the harness's sink"
	case p.s.Faults.Sink == nil:
		return nil, "the harness has no downstream sink"
	}
	return p.s.Faults.Sink, ""
}

// inFlightAtSink holds the first attempt at the sink (through the nemesis) and sends the retry.
func (p *prober) inFlightAtSink(fd *finding, sink *faults.Sink) profile.Field {
	o := p.s.NewOp(p.def)
	hold := sink.HoldFault()
	release := sync.OnceFunc(func() { p.heal(hold) })
	defer release()
	if err := p.inject(hold); err != nil {
		return fd.notProbed("cannot hold the downstream sink: %v", err)
	}
	waitCtx, stopWaiting := context.WithCancel(p.s.Ctx())
	defer stopWaiting()
	firstC, secondC := make(chan history.Attempt, 1), make(chan history.Attempt, 1)
	go func() { a, _ := p.send(o, framework.Send{}); firstC <- a }()
	timeout := time.NewTimer(p.opts.AttemptTimeout)
	defer timeout.Stop()
	select {
	case <-held(waitCtx, sink, 1):
	case a := <-firstC:
		fd.keep(a, framework.Send{})
		return fd.notProbed("the first request was answered %d without calling the downstream sink", a.Status)
	case <-timeout.C:
		release()
		fd.keep(<-firstC, framework.Send{})
		return fd.notProbed("the target did not call its downstream sink within %s", p.opts.AttemptTimeout)
	}
	again := held(waitCtx, sink, 2) // the first call and one more: the retry executing again
	go func() { a, _ := p.send(o, framework.Send{}); secondC <- a }()
	var second history.Attempt
	answered, duplicate := false, false
	window := time.NewTimer(p.opts.HoldWindow)
	defer window.Stop()
	select {
	case second = <-secondC:
		answered = true
	case <-again:
		duplicate = true
	case <-window.C:
	}
	release()
	first := <-firstC
	if !answered {
		second = <-secondC
	}
	for _, a := range sortedBySeq(first, second) {
		fd.keep(a, framework.Send{})
	}
	return p.judgeInFlight(fd, o, first, second, answered, duplicate, "at the downstream sink")
}

// inFlightByHook makes the first attempt slow (twice Options.HoldWindow, through the target's
// slow hook) and sends the retry once the first has had time to claim its key.
func (p *prober) inFlightByHook(fd *finding) profile.Field {
	o := p.s.NewOp(p.def)
	slow := min(2*p.opts.HoldWindow, p.opts.AttemptTimeout/2)
	slowSend := framework.Send{SlowMs: slow.Milliseconds()}
	// No event says that the first attempt has claimed its key: the retry leaves after twice
	// the baseline's round trip.
	lead := min(max(2*p.rtt, 50*time.Millisecond), slow/4)
	firstC := make(chan history.Attempt, 1)
	go func() { a, _ := p.send(o, slowSend); firstC <- a }()
	timer := time.NewTimer(lead)
	defer timer.Stop()
	select {
	case a := <-firstC:
		fd.keep(a, slowSend)
		return fd.notProbed("the first request (slow hook: %v) was answered %d within %v: the slow hook did not hold it", slow, a.Status, lead)
	case <-timer.C:
	}
	second, _ := p.send(o, framework.Send{})
	first := <-firstC
	fd.keep(first, slowSend)
	fd.keep(second, framework.Send{})
	slices.SortFunc(fd.f.Evidence, func(a, b profile.Exchange) int { return int(a.Seq - b.Seq) })
	if took := first.End.Sub(first.Start); first.Outcome == history.OK && took < slow/2 {
		return fd.notProbed("the slow hook did not hold the first attempt: answered in %v, asked for %v", took.Round(time.Millisecond), slow)
	}
	whileHeld := second.Outcome == history.OK && second.End.Before(first.End)
	return p.judgeInFlight(fd, o, first, second, whileHeld, false, "by the slow hook")
}

// judgeInFlight turns a held first attempt and its retry into the field: answered tells whether
// the retry was answered while the first was held (where, in words), executedAgain whether the
// sink saw the retry execute.
func (p *prober) judgeInFlight(fd *finding, o *framework.Op, first, second history.Attempt, answered, executedAgain bool, where string) profile.Field {
	if first.Outcome != history.OK || second.Outcome != history.OK {
		return fd.notProbed("an attempt got no answer: %s%s", first.Err, second.Err)
	}
	n, counted := fd.count(o)
	switch {
	case executedAgain || (counted && n > 1) || (answered && success(second)):
		fd.unsafe("duplicate record: the retry sent while the first attempt was running executed again")
		fd.note("the first attempt was held %s", where)
		return fd.done("duplicate")
	case answered:
		fd.note("answered while the first attempt was held %s", where)
	case p.same(first, second):
		fd.note("the retry waited for the first attempt (held %s) and replayed its answer", where)
		return fd.done("wait-replay")
	default:
		fd.note("the retry waited for the first attempt (held %s), then was answered %d", where, second.Status)
	}
	if second.Status >= 500 {
		fd.unsafe("5xx to a race loser: the retry sent while the first attempt was running got %d", second.Status)
	}
	return fd.done(statusText(second.Status))
}

// inject injects a fault through the harness's nemesis, bounded by the attempt timeout.
func (p *prober) inject(f faults.Fault) error {
	ctx, cancel := context.WithTimeout(p.s.Ctx(), p.opts.AttemptTimeout)
	defer cancel()
	return p.s.Faults.Nemesis.Inject(ctx, f)
}

// heal heals a fault through the nemesis, even when the probe was cancelled.
func (p *prober) heal(f faults.Fault) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.s.Ctx()), p.opts.AttemptTimeout)
	defer cancel()
	_ = p.s.Faults.Nemesis.Heal(ctx, f)
}

// held returns a channel that is closed once at least n calls are held at the sink; it stays
// open if ctx ends or the sink closes first.
func held(ctx context.Context, sink *faults.Sink, n int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if _, err := sink.WaitHeld(ctx, n); err == nil {
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
