package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestSlowFirstAttempt(t *testing.T) {
	const created = `{"id":"o1"}`
	final := func(as ...history.Attempt) Eventually { return Eventually{Attempts: as, Within: 10 * time.Second} }
	ok := SlowFirst{
		First:     noAnswer(1),
		Retry:     sent(2, 409, `{"title":"in flight"}`),
		HeldCalls: sink(1, 1, 0),
		Final:     final(sent(3, 409, ``), sent(4, 201, created)),
		Records:   records(1), Downstream: sink(1, 1, 1),
	}
	with := func(change func(*SlowFirst)) SlowFirst {
		s := ok
		change(&s)
		return s
	}
	waitReplay := func(p *targets.Profile) { p.InFlight = targets.InFlightWaitReplay }
	tests := []struct {
		name    string
		change  func(*targets.Profile)
		s       SlowFirst
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the in-flight status, then the success; one record, one call", s: ok, verdict: reports.Pass},
		{name: "429 while completing is tolerated", s: with(func(s *SlowFirst) { s.Final = final(sent(3, 429, ``), sent(4, 201, created)) }),
			verdict: reports.Pass},
		{name: "the retry waited and got the replay", change: waitReplay, s: with(func(s *SlowFirst) {
			s.Retry, s.Waited, s.Final = sent(2, 201, created), true, final(sent(3, 201, created))
		}), verdict: reports.Pass},
		{name: "no sink", s: with(func(s *SlowFirst) { s.HeldCalls, s.Downstream = Downstream{}, Downstream{} }), verdict: reports.Pass},
		{name: "the retry executed while the first was held", s: with(func(s *SlowFirst) { s.Retry = sent(2, 201, `{"id":"o2"}`) }),
			verdict: reports.Fail, want: []string{"duplicate-execution seqs=1,2"},
			says: []string{"the retry while the first attempt was in flight got 201: it was executed a second time"}},
		{name: "the retry got a 5xx", s: with(func(s *SlowFirst) { s.Retry = sent(2, 500, ``) }),
			verdict: reports.Fail, want: []string{"server-error seqs=2"},
			says: []string{"expected the in-flight status 409 for the retry while the first attempt is in flight, got 500"}},
		{name: "the retry got another 4xx", s: with(func(s *SlowFirst) { s.Retry = sent(2, 422, ``) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"}},
		{name: "wait-replay: the in-flight status is wrong", change: waitReplay, s: with(func(s *SlowFirst) { s.Final = final(sent(3, 201, created)) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected no answer before the first attempt completes (in_flight: wait-replay) for the retry while the first attempt is in flight, got 409"}},
		{name: "the provider called again while held", s: with(func(s *SlowFirst) { s.HeldCalls = sink(2, 2, 0) }),
			verdict: reports.Fail, want: []string{"duplicate-execution seqs=1,2"},
			says: []string{"reached the downstream provider 2 times while the first attempt was in flight, want 1"}},
		{name: "the waiting retry failed", change: waitReplay, s: with(func(s *SlowFirst) {
			s.Retry, s.Waited, s.Final = sent(2, 503, ``), true, final(sent(3, 201, created))
		}), verdict: reports.Fail, want: []string{"server-error seqs=2"}, says: []string{"expected a 2xx for the waiting retry after the release, got 503"}},
		{name: "the retry while held got no answer", s: with(func(s *SlowFirst) { s.Retry = noAnswer(2) }), verdict: reports.Unknown,
			says: []string{"the retry while the first attempt is in flight (attempt #2) got no answer"}},
		{name: "stuck after the release", s: with(func(s *SlowFirst) { s.Final = final(sent(3, 409, ``), sent(4, 409, ``)) }),
			verdict: reports.Fail, want: []string{"stuck-key seqs=3,4"},
			says: []string{"a retry after the release still answered 409 (in flight) 10s later: the key is stuck"}},
		{name: "no answer after the release", s: with(func(s *SlowFirst) { s.Final = final(noAnswer(3)) }), verdict: reports.Unknown},
		{name: "two records", s: with(func(s *SlowFirst) { s.Records = records(2) }), verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "two effects", s: with(func(s *SlowFirst) { s.Downstream = sink(2, 2, 2) }), verdict: reports.Fail,
			want: []string{"duplicate-downstream-effect seqs=1"}},
		{name: "two calls in all with one effect", s: with(func(s *SlowFirst) { s.Downstream = sink(2, 1, 1) }), verdict: reports.Fail,
			want: []string{"duplicate-execution seqs=1"}, says: []string{"reached the downstream provider 2 times in all, want 1"}},
		{name: "the first attempt answered", s: with(func(s *SlowFirst) { s.First = sent(1, 201, created) }), verdict: reports.Unknown,
			says: []string{"the first attempt answered (status 201) while it was held in flight"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, "ietf", tt.change)
			expect(t, SlowFirstAttempt(tt.s, p), tt.verdict, tt.want, tt.says...)
		})
	}
}
