package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestCrashAfterClaim(t *testing.T) {
	const created = `{"id":"o1"}`
	final := func(as ...history.Attempt) Eventually { return Eventually{Attempts: as, Within: 35 * time.Second} }
	ok := CrashClaim{
		First:   noAnswer(1),
		Final:   final(noAnswer(2), sent(3, 409, ``), sent(4, 201, created)),
		After:   sent(5, 201, created, "Date", "Mon, 05 Jan 2026 10:00:09 GMT"),
		Records: records(1), Downstream: sink(1, 1, 1),
	}
	with := func(change func(*CrashClaim)) CrashClaim {
		c := ok
		change(&c)
		return c
	}
	tests := []struct {
		name    string
		c       CrashClaim
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "completes after the lock timeout, one record, one effect", c: ok, verdict: reports.Pass},
		{name: "429 during completion is tolerated", c: with(func(c *CrashClaim) { c.Final = final(sent(2, 429, ``), sent(3, 201, created)) }),
			verdict: reports.Pass},
		{name: "two downstream calls with one key are one effect", c: with(func(c *CrashClaim) { c.Downstream = sink(2, 1, 1) }), verdict: reports.Pass},
		{name: "stuck: the claim was never released", c: with(func(c *CrashClaim) { c.Final = final(sent(2, 409, ``), sent(3, 409, ``)) }),
			verdict: reports.Fail, want: []string{"stuck-key seqs=2,3"},
			says: []string{"the retry after the restart still answered 409 (in flight) 35s later: the key is stuck"}},
		{name: "a 5xx while completing", c: with(func(c *CrashClaim) { c.Final = final(sent(2, 500, ``), sent(3, 201, created)) }),
			verdict: reports.Fail, want: []string{"server-error seqs=2"},
			says: []string{"expected the in-flight status or the final answer for the retry after the restart, got 500"}},
		{name: "no answer after the restart", c: with(func(c *CrashClaim) { c.Final = final(noAnswer(2), noAnswer(3)) }), verdict: reports.Unknown,
			says: []string{"the retry after the restart got no answer within 35s"}},
		{name: "rate limited to the end", c: with(func(c *CrashClaim) { c.Final = final(sent(2, 409, ``), sent(3, 429, ``)) }), verdict: reports.Unknown,
			says: []string{"still rate limited (429)"}},
		{name: "not retried", c: with(func(c *CrashClaim) { c.Final = Eventually{} }), verdict: reports.Unknown},
		{name: "the retry after completion does not replay", c: with(func(c *CrashClaim) { c.After = sent(5, 201, `{"id":"o2"}`) }),
			verdict: reports.Fail, want: []string{"replay-differs what=body seqs=4,5"},
			says: []string{"a retry after completion differs from the first answer (#4)"}},
		{name: "the retry after completion got no answer", c: with(func(c *CrashClaim) { c.After = noAnswer(5) }), verdict: reports.Unknown},
		{name: "two records", c: with(func(c *CrashClaim) { c.Records = records(2) }), verdict: reports.Fail, want: []string{"duplicate-record seqs=1,4"}},
		{name: "no record", c: with(func(c *CrashClaim) { c.Records = records(0) }), verdict: reports.Fail, want: []string{"missing-record seqs=1,4"}},
		{name: "two effects", c: with(func(c *CrashClaim) { c.Downstream = sink(2, 2, 2) }), verdict: reports.Fail,
			want: []string{"duplicate-downstream-effect seqs=1,4"}},
		{name: "the killed attempt answered", c: with(func(c *CrashClaim) { c.First = sent(1, 201, created) }), verdict: reports.Unknown,
			says: []string{"the first attempt answered (status 201) although its process was killed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, CrashAfterClaim(tt.c, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}
