package probe

import (
	"net/http"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// defaultStuckAfter is how long a key may answer the in-flight status after an error when the
// target declares no lock timeout (as the error-replay property waits).
const defaultStuckAfter = 10 * time.Second

// stuckMargin is how long past the declared lock timeout a key is waited for.
const stuckMargin = 3 * time.Second

// errorPolicy makes the first attempt fail with a 5xx, then retries: the sink fails its
// downstream call (through the nemesis) or, without a sink, the target's fail_next hook is sent
// just before it. "replay" when the retry gets the stored error (at the sink: without calling
// the downstream again), "retry" when it is executed again; a key still answering the in-flight
// status past the lock timeout (10s when none is declared) is "stuck" (unsafe).
func (p *prober) errorPolicy() profile.Field {
	fd := p.field(profile.FieldErrorPolicy, p.def)
	sink, why := p.sink()
	switch {
	case sink == nil && !p.t.Hooks.CanFail():
		return fd.notProbed("%s, and it declares no hooks.fail_next: nothing lets the probe make an attempt fail", why)
	case p.left() < 2:
		return fd.notProbed("the probe's budget of %d requests was spent", p.opts.MaxAttempts)
	}
	o := p.s.NewOp(p.def)
	before := 0
	if sink != nil {
		before = len(sink.Calls())
	}
	first, sent, err := p.failingAttempt(o, sink)
	if err != nil {
		return fd.notProbed("%v", err)
	}
	if !fd.took(first, sent, failedHow(sink)) {
		return fd.f
	}
	calls := func() int { return len(sink.Calls()) }
	switch {
	case sink != nil && calls() == before:
		return fd.notProbed("the first request was answered %d without calling the downstream sink", first.Status)
	case first.Status < 500 && sink != nil:
		return fd.notProbed("the target answered %d when its downstream failed: no server error to retry", first.Status)
	case first.Status < 500:
		return fd.notProbed("the target answered %d after the fail_next hook: no server error to retry", first.Status)
	}
	called := 0
	if sink != nil {
		called = calls()
	}
	last, waited, ok := p.retryAfterError(fd, o, first)
	if !ok {
		return fd.f
	}
	n, counted := fd.count(o)
	if waited > 0 {
		fd.note("the key answered the in-flight status for %v after the error", waited.Round(time.Millisecond))
	}
	executed := success(last) || (sink != nil && calls() > called)
	switch {
	case p.inFlightStatus(last.Status):
		fd.unsafe("stuck key: %v after the failed attempt (%d) was answered, the retry still got %d", waited.Round(time.Millisecond), first.Status, last.Status)
		return fd.done("stuck")
	case executed:
		fd.note("the failed request (%d) was executed again by the retry, answered %d", first.Status, last.Status)
		if counted && n > 1 {
			fd.unsafe("duplicate record: %d records after the failed attempt and its retry", n)
		}
		return fd.done(string(targets.ErrorRetry))
	}
	fd.note("the failed request (%d) was answered %d by the retry without being executed again", first.Status, last.Status)
	if diffs := p.differences(first, last); len(diffs) > 0 {
		fd.deviates("the draft says a retry gets the original result replayed, an error included: the replayed error differs at %s", strings.Join(diffs, ", "))
	}
	return fd.done(string(targets.ErrorReplay))
}

// failingAttempt sends o's first attempt so that it fails: the sink fails its downstream call,
// or the fail_next hook is sent just before it. sent is false when the budget was spent.
func (p *prober) failingAttempt(o *framework.Op, sink *faults.Sink) (a history.Attempt, sent bool, err error) {
	fail := p.s.Faults.FailNextHook(0, o.Tenant, targets.Vars{Ref: o.Ref, Key: o.Key, Tenant: tenantName(o.Tenant)})
	if sink != nil {
		fail = sink.FailFault(1, http.StatusServiceUnavailable)
	} else {
		p.pace.wait(p.s) // the hook is a request to the target too
	}
	if err := p.inject(fail); err != nil {
		p.heal(fail)
		return history.Attempt{}, false, err
	}
	a, sent = p.send(o, framework.Send{})
	p.heal(fail)
	return a, sent, nil
}

// retryAfterError retries o after its failed first attempt, again at growing intervals while
// the key answers the in-flight status, for at most the lock timeout and a margin. It returns
// the last answer and how long after the first attempt's end the key was still in flight; ok
// is false when an attempt got no answer, the budget ran out or the probe was cancelled while
// the key was still in flight (the field then says why).
func (p *prober) retryAfterError(fd *finding, o *framework.Op, first history.Attempt) (last history.Attempt, waited time.Duration, ok bool) {
	stuckAfter := defaultStuckAfter
	if lt := p.t.LockTimeout; lt > 0 {
		stuckAfter = lt + stuckMargin
	}
	pause := 250 * time.Millisecond
	for {
		a, sent := p.send(o, framework.Send{})
		if !fd.took(a, sent, "") {
			return a, waited, false
		}
		if !p.inFlightStatus(a.Status) {
			return a, waited, true
		}
		waited = a.End.Sub(first.End)
		if waited >= stuckAfter {
			return a, waited, true
		}
		next := min(pause, stuckAfter-waited)
		pause *= 2
		timer := time.NewTimer(next)
		select {
		case <-timer.C:
		case <-p.s.Ctx().Done():
			timer.Stop()
			fd.notProbed("the probe ended while the key still answered %d, %v after the error", a.Status, waited.Round(time.Millisecond))
			return a, waited, false
		}
	}
}

// inFlightStatus reports an answer that says the key is still in progress: 409, or the
// target's declared in-flight status.
func (p *prober) inFlightStatus(status int) bool {
	return status == http.StatusConflict || p.t.Profile.InFlightStatus.Contains(status)
}

// failedHow describes the failing first attempt for the evidence.
func failedHow(sink *faults.Sink) string {
	if sink != nil {
		return "its downstream call failed (503)"
	}
	return "after the fail_next hook"
}

// tenantName is a tenant's name, "" for none.
func tenantName(t *targets.Tenant) string {
	if t == nil {
		return ""
	}
	return t.Name
}
