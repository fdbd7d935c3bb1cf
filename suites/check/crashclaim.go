package check

import (
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// CrashClaim is what the crash-after-claim property observed: a first attempt whose process
// was killed between claim and write, retries after the restart, and one more retry.
type CrashClaim struct {
	// First is the attempt whose process was killed.
	First history.Attempt
	// Final are the retries after the restart, until one succeeded.
	Final Eventually
	// After is one more retry once it had completed.
	After history.Attempt
	// Records and Downstream are counted at the end.
	Records    Count
	Downstream Downstream
}

// CrashAfterClaim judges the retry after a crash between claim and write (crash-after-claim):
// it MUST complete within the lock timeout plus a margin, with one record and one downstream
// effect.
func CrashAfterClaim(c CrashClaim, p targets.Profile) Result {
	j := newJudge(p)
	if c.First.Outcome == history.OK {
		return Unknownf("the first attempt answered (status %d) although its process was killed", c.First.Status)
	}
	final, ok := j.completes(c.Final, "the retry after the restart", succeeded)
	if !ok {
		return j.result()
	}
	if j.answered(c.After, "a retry after completion") {
		j.same(final, c.After, "a retry after completion")
	}
	j.records(c.Records, 1, c.First.Seq, final.Seq)
	j.effects(c.Downstream, 1, c.Records, c.First.Seq, final.Seq)
	return j.result()
}
