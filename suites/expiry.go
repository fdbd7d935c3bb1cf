package suites

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/targets"
)

// expiry: a key lives as long as the declared retention, no shorter and not for ever.
//
// The target MUST replay a retry sent at about half the declared retention, and MUST treat
// a retry sent after the retention plus a margin as the profile declares: `new` (processed
// again: a second record) or `reject` (the declared status, still one record).
//
// Catches: short-retention (keys expire early), no-expiry (keys never expire).
func init() {
	register(&Property{
		Name: "expiry",
		Must: `With a declared retention, a retry at about half the retention MUST replay; a retry after
the retention plus a margin MUST get what the profile declares for an expired key (new: processed
again, a second record; reject: the declared status, one record).`,
		Catches: []string{"short-retention", "no-expiry"},
		Needs:   []string{"retention", "profile.expired"},
		Labels:  []string{"wait:retention"},
		applies: func(e *Env) string {
			r := e.Target.Retention
			switch {
			case r <= 0:
				return "the target declares no retention"
			case r+expiryMargin(r) > e.Settings.MaxWait:
				return sprintf("the declared retention %v plus a margin is longer than --max-wait %v", r, e.Settings.MaxWait)
			}
			return ""
		},
		specs: expirySpecs,
	})
}

// expiryMargin is how long after the retention the expired retry is sent.
func expiryMargin(retention time.Duration) time.Duration {
	return max(time.Second, retention/5)
}

func expirySpecs(e *Env) {
	def := e.Target.Operations[0]
	if obs := e.observed(); len(obs) > 0 {
		def = obs[0]
	}
	r := e.Target.Retention
	It(sprintf("%s: a retry at half the retention (%v) replays; after %v it is %s", def.Name, r/2, r+expiryMargin(r),
		e.Target.Profile.Expired), func() {
		op := e.NewOp(def)
		first := e.ok(op.Do(Send{Instance: 0}))
		expectSuccess(first, "first answer")
		created := first.End
		e.sleepUntil(created.Add(r / 2))
		half := e.ok(op.Do(Send{Instance: 1}))
		e.expectSame(first, half, "the retry at half the retention")
		e.expectRecords(op, 1)
		e.sleepUntil(first.Start.Add(r + expiryMargin(r)))
		late := e.ok(op.Do(Send{Instance: 2}))
		if e.Target.Profile.Expired == targets.ExpiredReject {
			expectStatus(late, e.Target.Profile.ExpiredStatus, "the retry after the retention")
			e.expectRecords(op, 1)
			return
		}
		expectSuccess(late, "the retry after the retention")
		if len(Compare(first, late, e.Target.Profile)) == 0 {
			Fail(sprintf("the retry after the retention (%v + %v) replayed the first answer: the key did not expire:\n%s",
				r, expiryMargin(r), late))
		}
		e.expectRecords(op, 2)
	})
}
