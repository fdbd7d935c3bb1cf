package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

const retention = 24 * time.Hour

func TestExpiryWithin(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`, "Date", "Mon, 05 Jan 2026 10:00:00 GMT")
	replay := func(seq int64, after time.Duration, n int) Retry {
		return Retry{After: after, Attempt: sent(seq, 201, `{"id":"o1"}`, "Date", "Tue, 06 Jan 2026 09:00:00 GMT"), Records: records(n)}
	}
	tests := []struct {
		name    string
		retries []Retry
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "replays at growing delays, one record", retries: []Retry{replay(2, time.Hour, 1), replay(3, 6*time.Hour, 1), replay(4, 12*time.Hour, 1)},
			verdict: reports.Pass},
		{name: "no observer", retries: []Retry{{After: time.Hour, Attempt: sent(2, 201, `{"id":"o1"}`)}}, verdict: reports.Pass},
		{name: "forgotten at 6h: executed again", retries: []Retry{replay(2, time.Hour, 1), replay(3, 6*time.Hour, 2), replay(4, 12*time.Hour, 3)},
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1,3"},
			says: []string{"the retry 6h0m0s after the first send (retention 24h0m0s) was executed again (2 business records): the key was forgotten before the declared retention"}},
		{name: "forgotten at 1h: another answer", retries: []Retry{{After: time.Hour, Attempt: sent(2, 201, `{"id":"o2"}`), Records: records(1)},
			replay(3, 6*time.Hour, 1)},
			verdict: reports.Fail, want: []string{"replay-differs what=body seqs=1,2"},
			says: []string{"the retry 1h0m0s after the first send (retention 24h0m0s) differs from the first answer (#1) at $['id']"}},
		{name: "a replay whose record vanished", retries: []Retry{replay(2, time.Hour, 0)}, verdict: reports.Fail,
			want: []string{"missing-record seqs=1,2"}},
		{name: "a retry without an answer does not end the check", retries: []Retry{{After: time.Hour, Attempt: noAnswer(2), Records: records(1)},
			replay(3, 6*time.Hour, 2)},
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1,3"}},
		{name: "a retry without an answer", retries: []Retry{{After: time.Hour, Attempt: noAnswer(2), Records: records(1)}},
			verdict: reports.Unknown, says: []string{"the retry 1h0m0s after the first send (retention 24h0m0s) (attempt #2) got no answer"}},
		{name: "the observer failed: one reason", retries: []Retry{{After: time.Hour, Attempt: sent(2, 201, `{"id":"o1"}`), Records: countFailed()}},
			verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ExpiryWithin(first, tt.retries, retention, profile(t, "ietf"))
			expect(t, res, tt.verdict, tt.want, tt.says...)
			if len(res.Unknown) > 1 {
				t.Errorf("unknown reasons repeat: %q", res.Unknown)
			}
		})
	}
	t.Run("the first send failed", func(t *testing.T) {
		res := ExpiryWithin(sent(1, 500, ``), []Retry{replay(2, time.Hour, 1)}, retention, profile(t, "ietf"))
		expect(t, res, reports.Fail, []string{"server-error seqs=1"})
	})
}

func TestExpiryAfter(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	late := func(status int, body string, n int, header ...string) Retry {
		return Retry{After: retention + 5*time.Hour, Attempt: sent(2, status, body, header...), Records: records(n)}
	}
	reject := func(p *targets.Profile) { p.Expired, p.ExpiredStatus = targets.ExpiredReject, targets.Status(410) }
	tests := []struct {
		name    string
		base    string
		change  func(*targets.Profile)
		late    Retry
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "new: processed again", late: late(201, `{"id":"o2"}`, 2), verdict: reports.Pass},
		{name: "new: still replayed", late: late(201, `{"id":"o1"}`, 1), verdict: reports.Fail, want: []string{"not-expired seqs=1,2"},
			says: []string{"the retry 29h0m0s after the first send (retention 24h0m0s) replayed the first answer: the key did not expire"}},
		{name: "new: still replayed with the replay header (stripe)", base: "stripe", late: late(201, `{"id":"o1"}`, 1, "Idempotent-Replayed", "true"),
			verdict: reports.Fail, want: []string{"not-expired seqs=1,2"}},
		{name: "new: processed again without a second record", late: late(201, `{"id":"o2"}`, 1), verdict: reports.Fail,
			want: []string{"missing-record seqs=1,2"}, says: []string{"1 business records", "want 2"}},
		{name: "new: processed twice more", late: late(201, `{"id":"o2"}`, 3), verdict: reports.Fail, want: []string{"duplicate-record seqs=1,2"}},
		{name: "new: rejected", late: late(409, `{}`, 1), verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected a 2xx for the retry 29h0m0s after the first send (retention 24h0m0s), got 409"}},
		{name: "reject: the declared status", change: reject, late: late(410, `{}`, 1), verdict: reports.Pass},
		{name: "reject: a class", change: func(p *targets.Profile) {
			p.Expired, p.ExpiredStatus = targets.ExpiredReject, targets.StatusSet{Classes: []int{4}}
		}, late: late(422, `{}`, 1), verdict: reports.Pass},
		{name: "reject: processed instead", change: reject, late: late(201, `{"id":"o2"}`, 2), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2", "duplicate-record seqs=1"}, says: []string{"expected 410 for the retry", "got 201"}},
		{name: "reject: replayed instead", change: reject, late: late(201, `{"id":"o1"}`, 1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2"}},
		{name: "no answer", late: Retry{After: retention + time.Hour, Attempt: noAnswer(2), Records: records(2)}, verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, tt.base, tt.change)
			expect(t, ExpiryAfter(first, tt.late, retention, p), tt.verdict, tt.want, tt.says...)
		})
	}
	t.Run("the first send failed", func(t *testing.T) {
		res := ExpiryAfter(sent(1, 503, ``), late(201, `{}`, 1), retention, profile(t, "ietf"))
		expect(t, res, reports.Fail, []string{"server-error seqs=1"})
	})
}
