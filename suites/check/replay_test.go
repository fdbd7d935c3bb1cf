package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestReplay(t *testing.T) {
	const created = `{"id":"o1","amount":5}`
	first := sent(1, 201, created, "Location", "/orders/o1", "Date", "Mon, 05 Jan 2026 10:00:00 GMT")
	replay := func(seq int64, header ...string) history.Attempt {
		return sent(seq, 201, created, append([]string{"Location", "/orders/o1"}, header...)...)
	}
	tests := []struct {
		name     string
		base     string
		attempts []history.Attempt
		records  Count
		verdict  reports.Verdict
		want     []string
		says     []string
	}{
		{
			name:     "replays equal to the first answer, one record",
			attempts: []history.Attempt{first, replay(2), replay(3)},
			records:  records(1), verdict: reports.Pass,
		},
		{
			name: "a replay that differs only in Date, a request id and Content-Length",
			attempts: []history.Attempt{first, replay(2, "Date", "Mon, 05 Jan 2026 10:00:07 GMT", "X-Request-Id", "req-2",
				"Content-Length", "24")},
			records: records(1), verdict: reports.Pass,
		},
		{
			name:     "a replay with the body's members reordered",
			attempts: []history.Attempt{first, sent(2, 201, `{"amount":5, "id":"o1"}`, "Location", "/orders/o1")},
			records:  records(1), verdict: reports.Pass,
		},
		{
			name:     "a replay whose body differs",
			attempts: []history.Attempt{first, replay(2), sent(3, 201, `{"id":"o2","amount":5}`, "Location", "/orders/o1")},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,3"},
			says: []string{"replay 3 of 3 differs from the first answer (#1) at $['id']"},
		},
		{
			name:     "a replay with another status",
			attempts: []history.Attempt{first, sent(2, 409, created, "Location", "/orders/o1")},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=status seqs=1,2"},
			says: []string{"status (201 != 409)"},
		},
		{
			name:     "a replay with another Location",
			attempts: []history.Attempt{first, sent(2, 201, created, "Location", "/orders/o2")},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=header seqs=1,2"},
			says: []string{"at header Location"},
		},
		{
			name:     "a 2xx replay with the replay header (stripe)",
			base:     "stripe",
			attempts: []history.Attempt{first, replay(2, "Idempotent-Replayed", "true")},
			records:  records(1), verdict: reports.Pass,
		},
		{
			name:     "a replay without the replay header (stripe)",
			base:     "stripe",
			attempts: []history.Attempt{first, replay(2)},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=header seqs=2"},
			says: []string{"replay 2 of 2 lacks the replay header Idempotent-Replayed"},
		},
		{
			name:     "a replay marked as not replayed (stripe)",
			base:     "stripe",
			attempts: []history.Attempt{first, replay(2, "Idempotent-Replayed", "false")},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=header seqs=2"},
			says: []string{`carries Idempotent-Replayed: false, want "true"`},
		},
		{
			name:     "a first send that failed",
			attempts: []history.Attempt{sent(1, 500, `{}`), replay(2)},
			records:  records(0), verdict: reports.Fail,
			want: []string{"server-error seqs=1"},
			says: []string{"expected a 2xx for the first send, got 500"},
		},
		{
			name:     "a first send rejected",
			attempts: []history.Attempt{sent(1, 422, `{}`)},
			records:  records(0), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1"},
			says: []string{"expected a 2xx for the first send, got 422"},
		},
		{
			name:     "executed twice",
			attempts: []history.Attempt{first, replay(2)},
			records:  records(2), verdict: reports.Fail,
			want: []string{"duplicate-record seqs=1"},
			says: []string{"2 business records for orders ref r1 (tenant alice), want 1"},
		},
		{
			name:     "acknowledged without a record",
			attempts: []history.Attempt{first, replay(2)},
			records:  records(0), verdict: reports.Fail,
			want: []string{"missing-record seqs=1"},
			says: []string{"0 business records", "want 1"},
		},
		{
			name:     "a replay without an answer is unknown, not a failure",
			attempts: []history.Attempt{first, noAnswer(2), replay(3)},
			records:  records(1), verdict: reports.Unknown,
			says: []string{"replay 2 of 3 (attempt #2) got no answer"},
		},
		{
			name:     "a first send without an answer",
			attempts: []history.Attempt{noAnswer(1), replay(2)},
			records:  records(1), verdict: reports.Unknown,
			says: []string{"the first send (attempt #1) got no answer"},
		},
		{
			name:     "an anomaly outweighs an unknown replay",
			attempts: []history.Attempt{first, noAnswer(2), sent(3, 200, created, "Location", "/orders/o1")},
			records:  records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=status seqs=1,3"},
		},
		{
			name:     "the observer failed",
			attempts: []history.Attempt{first, replay(2)},
			records:  countFailed(), verdict: reports.Unknown,
			says: []string{"could not count the records of orders ref r1"},
		},
		{
			name:     "without an observer the answers decide",
			attempts: []history.Attempt{first, replay(2)},
			records:  notCounted, verdict: reports.Pass,
		},
		{
			name: "nothing sent", records: records(0), verdict: reports.Unknown,
			says: []string{"no request was sent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Replay(tt.attempts, tt.records, profile(t, tt.base)), tt.verdict, tt.want, tt.says...)
		})
	}
}
