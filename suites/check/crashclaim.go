package check

import (
	"net/http"

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
//
// An asynchronous operation's first attempt is answered 202 before its work (an operation's
// async block): the kill then came between the 202 and the record, and the retries MUST name
// the same operation.
func CrashAfterClaim(c CrashClaim, p targets.Profile) Result {
	j := newJudge(p)
	accepted := c.First.Outcome == history.OK && c.First.Status == http.StatusAccepted
	if c.First.Outcome == history.OK && !accepted {
		return Unknownf("the first attempt answered (status %d) although its process was killed", c.First.Status)
	}
	final, ok := j.completes(c.Final, "the retry after the restart", j.succeeded)
	if !ok {
		return j.result()
	}
	if accepted {
		j.same(c.First, final, "the retry after the restart")
	}
	if j.answered(c.After, "a retry after completion") {
		j.same(final, c.After, "a retry after completion")
	}
	j.records(c.Records, 1, c.First.Seq, final.Seq)
	j.effects(c.Downstream, 1, c.Records, c.First.Seq, final.Seq)
	return j.result()
}
