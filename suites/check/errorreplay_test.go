package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestErrorReplay(t *testing.T) {
	const failure = `{"title":"downstream failed"}`
	retries := func(as ...history.Attempt) Eventually { return Eventually{Attempts: as, Within: 5 * time.Second} }
	replayed := ErrorRetries{
		First:   sent(1, 503, failure),
		Retries: retries(sent(2, 503, failure, "Date", "Mon, 05 Jan 2026 10:00:09 GMT")),
		Records: records(0), Downstream: sink(1, 1, 0),
	}
	retried := ErrorRetries{
		First:   sent(1, 503, failure),
		Retries: retries(sent(2, 201, `{"id":"o1"}`)),
		Records: records(1), Downstream: sink(2, 1, 1),
	}
	with := func(e ErrorRetries, change func(*ErrorRetries)) ErrorRetries {
		change(&e)
		return e
	}
	retry := func(p *targets.Profile) { p.ErrorPolicy = targets.ErrorRetry }
	tests := []struct {
		name    string
		change  func(*targets.Profile)
		e       ErrorRetries
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "replay: the stored error replayed, no record, one call", e: replayed, verdict: reports.Pass},
		{name: "replay: 429 while waiting is tolerated", e: with(replayed, func(e *ErrorRetries) {
			e.Retries = retries(sent(2, 429, ``), sent(3, 503, failure))
		}), verdict: reports.Pass},
		{name: "replay: no sink", e: with(replayed, func(e *ErrorRetries) { e.Downstream = Downstream{} }), verdict: reports.Pass},
		{name: "replay: executed again and succeeded", e: with(replayed, func(e *ErrorRetries) {
			e.Retries, e.Downstream = retries(sent(2, 201, `{"id":"o1"}`)), sink(2, 1, 1)
		}), verdict: reports.Fail, want: []string{"replay-differs what=status seqs=1,2"},
			says: []string{"the retry after the error got 201: it was executed again instead of replaying the stored 503 (replay policy)"}},
		{name: "replay: another error", e: with(replayed, func(e *ErrorRetries) { e.Retries = retries(sent(2, 500, failure)) }),
			verdict: reports.Fail, want: []string{"replay-differs what=status seqs=1,2"}, says: []string{"status (503 != 500)"}},
		{name: "replay: the failure left a record", e: with(replayed, func(e *ErrorRetries) { e.Records = records(1) }),
			verdict: reports.Fail, want: []string{"rejected-but-recorded seqs=1"},
			says: []string{"the failed attempt, whose error is replayed, left 1 business records"}},
		{name: "replay: the provider called again", e: with(replayed, func(e *ErrorRetries) { e.Downstream = sink(2, 1, 0) }),
			verdict: reports.Fail, want: []string{"replay-differs what=status seqs=1,2"},
			says: []string{"the retry after the error reached the downstream provider again (2 calls)"}},
		{name: "replay: stuck in flight", e: with(replayed, func(e *ErrorRetries) { e.Retries = retries(sent(2, 409, ``), sent(3, 409, ``)) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=1,2", "stuck-key seqs=2,3"}},
		{name: "replay: in flight after its error was answered", e: with(replayed, func(e *ErrorRetries) {
			e.Retries = retries(sent(2, 409, ``), sent(3, 503, failure))
		}), verdict: reports.Fail, want: []string{"wrong-status seqs=1,2"},
			says: []string{"the retry sent once the error (#1) was answered got 409: in flight after its error was answered"}},
		{name: "wait-replay: held after its error was answered", change: func(p *targets.Profile) { p.InFlight = targets.InFlightWaitReplay },
			e:       with(replayed, func(e *ErrorRetries) { e.Retries = retries(lasting(sent(2, 503, failure), 250*time.Millisecond)) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=1,2"}, says: []string{"was held 250ms (the failed attempt took 10ms)"}},
		{name: "wait-replay: answered at once", change: func(p *targets.Profile) { p.InFlight = targets.InFlightWaitReplay },
			e:       with(replayed, func(e *ErrorRetries) { e.Retries = retries(lasting(sent(2, 503, failure), 20*time.Millisecond)) }),
			verdict: reports.Pass},
		{name: "either: the in-flight status after the answer", change: func(p *targets.Profile) { p.InFlight = targets.InFlightEither },
			e:       with(replayed, func(e *ErrorRetries) { e.Retries = retries(sent(2, 409, ``), sent(3, 503, failure)) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=1,2"}},
		{name: "replay: the observer failed", e: with(replayed, func(e *ErrorRetries) { e.Records = countFailed() }), verdict: reports.Unknown},
		{name: "retry: executed again, one record, one effect", change: retry, e: retried, verdict: reports.Pass},
		{name: "retry: after a 429", change: retry, e: with(retried, func(e *ErrorRetries) {
			e.Retries = retries(sent(2, 429, ``), sent(3, 201, `{"id":"o1"}`))
		}), verdict: reports.Pass},
		{name: "retry: in flight after its error was answered", change: retry, e: with(retried, func(e *ErrorRetries) {
			e.Retries = retries(sent(2, 409, ``), sent(3, 201, `{"id":"o1"}`))
		}), verdict: reports.Fail, want: []string{"wrong-status seqs=1,2"}},
		{name: "retry: the error replayed", change: retry, e: with(retried, func(e *ErrorRetries) {
			e.Retries, e.Records = retries(sent(2, 503, failure)), records(0)
		}), verdict: reports.Fail, want: []string{"server-error seqs=2"}, says: []string{"got 503"}},
		{name: "retry: two records", change: retry, e: with(retried, func(e *ErrorRetries) { e.Records = records(2) }),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1,2"}},
		{name: "retry: two effects", change: retry, e: with(retried, func(e *ErrorRetries) { e.Downstream = sink(2, 2, 2) }),
			verdict: reports.Fail, want: []string{"duplicate-downstream-effect seqs=1,2"}},
		{name: "retry: no answer", change: retry, e: with(retried, func(e *ErrorRetries) { e.Retries = retries(noAnswer(2)) }),
			verdict: reports.Unknown},
		{name: "the failure was not reported", e: with(replayed, func(e *ErrorRetries) { e.First = sent(1, 201, `{"id":"o1"}`) }),
			verdict: reports.Unknown, says: []string{"the target did not report the failure (attempt #1 got 201): the error policy cannot be observed"}},
		{name: "the failing attempt got no answer", e: with(replayed, func(e *ErrorRetries) { e.First = noAnswer(1) }),
			verdict: reports.Unknown, says: []string{"the failing attempt (attempt #1) got no answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, "ietf", tt.change)
			expect(t, ErrorReplay(tt.e, p), tt.verdict, tt.want, tt.says...)
		})
	}
}

// lasting makes an attempt take d.
func lasting(a history.Attempt, d time.Duration) history.Attempt {
	a.End = a.Start.Add(d)
	return a
}
