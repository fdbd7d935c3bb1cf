package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestRaceRound(t *testing.T) {
	const created = `{"id":"o1"}`
	ok := func(seq int64, header ...string) history.Attempt { return sent(seq, 201, created, header...) }
	busy := func(seq int64) history.Attempt { return sent(seq, 409, `{"title":"in flight"}`) }
	var notSent history.Attempt
	waitReplay := func(p *targets.Profile) { p.InFlight = targets.InFlightWaitReplay }
	tests := []struct {
		name    string
		change  func(*targets.Profile)
		burst   []history.Attempt
		retry   history.Attempt
		records Count
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{
			name:  "one success, its replays and the in-flight status; the retry replays",
			burst: []history.Attempt{ok(1), busy(2), busy(3), ok(4)}, retry: ok(5),
			records: records(1), verdict: reports.Pass,
		},
		{
			name:  "replays that differ only in volatile headers and the replay marker are one success",
			burst: []history.Attempt{ok(1, "Date", "Mon, 05 Jan 2026 10:00:00 GMT"), ok(2, "Date", "Mon, 05 Jan 2026 10:00:01 GMT", "Idempotent-Replayed", "true")},
			retry: ok(3), records: records(1), verdict: reports.Pass,
		},
		{
			name:   "the in-flight status as a class",
			change: func(p *targets.Profile) { p.InFlightStatus = targets.StatusSet{Classes: []int{4}} },
			burst:  []history.Attempt{ok(1), sent(2, 425, ``), busy(3)}, retry: notSent,
			records: records(1), verdict: reports.Pass,
		},
		{
			name:   "wait-replay: every request gets the success",
			change: waitReplay,
			burst:  []history.Attempt{ok(1), ok(2), ok(3)}, retry: ok(4),
			records: records(1), verdict: reports.Pass,
		},
		{
			name:  "two different successes and two records: executed twice",
			burst: []history.Attempt{ok(1), busy(2), sent(3, 201, `{"id":"o2"}`)}, retry: ok(4),
			records: records(2), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,3", "duplicate-record seqs=1,3"},
			says: []string{"the burst got 2 different successful answers (differ at $['id'])", "2 business records", "want 1"},
		},
		{
			name:  "a loser got a 5xx",
			burst: []history.Attempt{ok(1), sent(2, 500, `{}`), busy(3)}, retry: ok(4),
			records: records(1), verdict: reports.Fail,
			want: []string{"server-error seqs=2"},
			says: []string{"expected the success, its replay or the in-flight status 409 for a request of the burst, got 500"},
		},
		{
			name:  "a loser got the mismatch status",
			burst: []history.Attempt{ok(1), sent(2, 422, `{}`)}, retry: ok(3),
			records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2"}, says: []string{"got 422"},
		},
		{
			name:   "wait-replay: the in-flight status is not accepted",
			change: waitReplay,
			burst:  []history.Attempt{ok(1), busy(2)}, retry: ok(3),
			records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2"},
			says: []string{"expected the success or its replay (in_flight: wait-replay) for a request of the burst, got 409"},
		},
		{
			name:  "nobody succeeded",
			burst: []history.Attempt{busy(1), busy(2), busy(3)}, retry: notSent,
			records: records(0), verdict: reports.Fail,
			want: []string{"wrong-status"}, says: []string{"no request of the burst succeeded (statuses 409=3)"},
		},
		{
			name:  "nobody succeeded, but a record was left twice",
			burst: []history.Attempt{sent(1, 503, ``), busy(2)}, retry: notSent,
			records: records(2), verdict: reports.Fail,
			want: []string{"server-error seqs=1", "duplicate-record", "wrong-status"},
			says: []string{"no request of the burst succeeded (statuses 409=1 503=1)"},
		},
		{
			name:  "unanswered requests and no success are unknown, not a missing record",
			burst: []history.Attempt{noAnswer(1), busy(2), noAnswer(3)}, retry: notSent,
			records: records(0), verdict: reports.Unknown,
			says: []string{"2 of 3 requests of the burst got no answer (statuses 409=1)"},
		},
		{
			name:  "an unanswered request beside a success is unknown",
			burst: []history.Attempt{ok(1), noAnswer(2)}, retry: ok(3),
			records: records(1), verdict: reports.Unknown,
			says: []string{"1 of 2 requests of the burst got no answer (statuses 201=1)"},
		},
		{
			name:  "the retry after the burst does not replay",
			burst: []history.Attempt{ok(1), busy(2)}, retry: sent(3, 201, `{"id":"o3"}`),
			records: records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,3"},
			says: []string{"the retry after the burst differs from the first answer (#1) at $['id']"},
		},
		{
			name:  "the retry after the burst got no answer",
			burst: []history.Attempt{ok(1), busy(2)}, retry: noAnswer(3),
			records: records(1), verdict: reports.Unknown,
			says: []string{"the retry after the burst (attempt #3) got no answer"},
		},
		{
			name:  "one success without a record",
			burst: []history.Attempt{ok(1), busy(2)}, retry: notSent,
			records: records(0), verdict: reports.Fail,
			want: []string{"missing-record seqs=1"},
		},
		{
			name:    "an empty burst proves nothing",
			retry:   notSent,
			records: records(0), verdict: reports.Unknown,
			says: []string{"no request of the burst was sent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, "ietf", tt.change)
			expect(t, RaceRound(tt.burst, tt.retry, tt.records, p), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestStatusCounts(t *testing.T) {
	if got, want := statusCounts(map[int]int{409: 15, 201: 1, 500: 2}), "201=1 409=15 500=2"; got != want {
		t.Errorf("statusCounts = %q, want %q", got, want)
	}
	if got := statusCounts(nil); got != "" {
		t.Errorf("statusCounts(nil) = %q, want empty", got)
	}
}
