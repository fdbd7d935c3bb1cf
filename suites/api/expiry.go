package api

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// expiry: a key lives as long as the declared retention, no shorter and not for ever.
//
// The target MUST replay retries sent within the declared retention, and MUST treat a retry
// sent after the retention plus a margin as the profile declares: `new` (processed again: a
// second record) or `reject` (the declared status, still one record). A retention longer than
// the run may wait is still checked from below: retries at growing delays up to --max-wait
// must replay, and the expiry itself is reported as not reached.
//
// Catches: short-retention and forgets-early (keys expire early), no-expiry (keys never expire).
func init() {
	p := &Property{
		Name: "expiry",
		Must: `With a declared retention, retries within the retention MUST replay (checked at growing
delays up to --max-wait when the retention is longer); a retry after the retention plus a margin MUST
get what the profile declares for an expired key (new: processed again, a second record; reject: the
declared status, one record).`,
		Catches: []string{"short-retention", "forgets-early", "no-expiry"},
		Needs:   []string{"retention", "profile.expired"},
		Labels:  []string{"wait:retention"},
		Covers:  "the first operation with an observer (waiting out a retention once is enough)",
		Applies: func(e *Env) string {
			if e.Target.Retention <= 0 {
				return "the target declares no retention"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		def := e.FirstObserved()
		return []*Spec{expiryWithinSpec(p, e, def), expiryAfterSpec(p, e, def)}
	}
	register(p)
}

// expiryMargin is how long after the retention the expired retry is sent.
func expiryMargin(retention time.Duration) time.Duration {
	return max(time.Second, retention/5)
}

// expiryReached reports whether the run may wait out the retention.
func expiryReached(e *Env) bool {
	r := e.Target.Retention
	return r+expiryMargin(r) <= e.Settings.MaxWait
}

// withinDelays are the delays after the first send at which the lower-bound spec retries: half
// the retention when the run waits it out, else growing delays (as providers back off) up to
// --max-wait.
func withinDelays(e *Env) []time.Duration {
	r, wait := e.Target.Retention, e.Settings.MaxWait
	if expiryReached(e) {
		return []time.Duration{r / 2}
	}
	var out []time.Duration
	for _, d := range []time.Duration{2 * time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute} {
		if d < wait && d < r {
			out = append(out, d)
		}
	}
	return append(out, min(wait, r/2))
}

func expiryWithinSpec(p *Property, e *Env, def *targets.Operation) *Spec {
	delays := withinDelays(e)
	return spec(p, fmt.Sprintf("%s: retries %v after the first send, within the retention (%v), replay",
		def.Name, delays, e.Target.Retention), func(s *S) check.Result {
		op := s.NewOp(def)
		first := op.Do(framework.Send{Instance: 0})
		var retries []check.Retry
		for i, d := range delays {
			if !framework.Succeeded(first) || !s.WaitUntil(fmt.Sprintf("the retry %s after the first send (the retention is %s)", framework.Seconds(d), framework.Seconds(e.Target.Retention)), first.Start.Add(d)) {
				break
			}
			a := op.Do(framework.Send{Instance: i + 1})
			retries = append(retries, check.Retry{After: time.Since(first.Start), Attempt: a, Records: op.Count()})
		}
		return check.ExpiryWithin(first, retries, s.Target.Retention, s.Target.Profile)
	})
}

func expiryAfterSpec(p *Property, e *Env, def *targets.Operation) *Spec {
	r := e.Target.Retention
	text := fmt.Sprintf("%s: a retry %v after the first send is %s", def.Name, r+expiryMargin(r), e.Target.Profile.Expired)
	if !expiryReached(e) {
		return &Spec{Property: p, Text: text, Skip: fmt.Sprintf("not reached: the declared retention %v plus a margin is longer than --max-wait %v",
			r, e.Settings.MaxWait)}
	}
	return spec(p, text, func(s *S) check.Result {
		op := s.NewOp(def)
		first := op.Do(framework.Send{Instance: 0})
		if !framework.Succeeded(first) || !s.WaitUntil(fmt.Sprintf("the retention (%s) to expire", framework.Seconds(r)), first.Start.Add(r+expiryMargin(r))) {
			return check.ExpiryAfter(first, check.Retry{}, r, s.Target.Profile)
		}
		late := op.Do(framework.Send{Instance: 1})
		return check.ExpiryAfter(first, check.Retry{After: time.Since(first.Start), Attempt: late, Records: op.Count()}, r, s.Target.Profile)
	})
}
