package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestKeyRejected(t *testing.T) {
	tests := []struct {
		name    string
		a       history.Attempt
		records Count
		status  targets.StatusSet
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the declared status, no record", a: sent(1, 400, `{}`), records: records(0), status: targets.Status(400), verdict: reports.Pass},
		{name: "the declared status, no observer", a: sent(1, 400, `{}`), records: notCounted, status: targets.Status(400), verdict: reports.Pass},
		{name: "one of a declared list", a: sent(1, 422, `{}`), records: records(0), status: targets.StatusSet{Codes: []int{400, 422}},
			verdict: reports.Pass},
		{name: "a declared class", a: sent(1, 428, `{}`), records: records(0), status: targets.StatusSet{Classes: []int{4}}, verdict: reports.Pass},
		{name: "another 4xx", a: sent(1, 422, `{}`), records: records(0), status: targets.Status(400), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1"}, says: []string{"expected 400 for a request without a key, got 422"}},
		{name: "processed although a rejection is declared", a: sent(1, 201, `{"id":"o1"}`), records: records(1), status: targets.Status(400),
			verdict: reports.Fail, want: []string{"wrong-status seqs=1", "rejected-but-recorded seqs=1"},
			says: []string{"expected 400 for a request without a key, got 201", "a request without a key left 1 business records"}},
		{name: "rejected, yet recorded", a: sent(1, 400, `{}`), records: records(1), status: targets.Status(400), verdict: reports.Fail,
			want: []string{"rejected-but-recorded seqs=1"}},
		{name: "a 5xx", a: sent(1, 500, `{}`), records: records(0), status: targets.Status(400), verdict: reports.Fail,
			want: []string{"server-error seqs=1"}, says: []string{"a request without a key got 500: a server error for a client's malformed request"}},
		{name: "a 5xx is a server error even where the profile declares 5xx", a: sent(1, 503, `{}`), records: records(0),
			status: targets.StatusSet{Classes: []int{5}}, verdict: reports.Fail, want: []string{"server-error seqs=1"}},
		{name: "a 5xx that left a record", a: sent(1, 500, `{}`), records: records(1), status: targets.Status(400), verdict: reports.Fail,
			want: []string{"server-error seqs=1", "rejected-but-recorded seqs=1"}},
		{name: "processed, as declared", a: sent(1, 201, `{"id":"o1"}`), records: records(1), status: targets.Processed, verdict: reports.Pass},
		{name: "rejected where processing is declared", a: sent(1, 400, `{}`), records: records(0), status: targets.Processed,
			verdict: reports.Fail, want: []string{"wrong-status seqs=1"}, says: []string{"expected a 2xx for a request without a key, got 400"}},
		{name: "processed without a record", a: sent(1, 201, `{}`), records: records(0), status: targets.Processed, verdict: reports.Fail,
			want: []string{"missing-record seqs=1"}},
		{name: "processed twice", a: sent(1, 201, `{}`), records: records(2), status: targets.Processed, verdict: reports.Fail,
			want: []string{"duplicate-record seqs=1"}},
		{name: "no answer", a: noAnswer(1), records: records(1), status: targets.Status(400), verdict: reports.Unknown,
			says: []string{"a request without a key (attempt #1) got no answer"}},
		{name: "the observer failed", a: sent(1, 400, `{}`), records: countFailed(), status: targets.Status(400), verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, KeyRejected(tt.a, tt.records, tt.status, "a request without a key", profile(t, "stripe")), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestKeysAtLimit(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	second := sent(2, 201, `{"id":"o2"}`)
	replay := sent(3, 201, `{"id":"o1"}`)
	tests := []struct {
		name                 string
		first, second, retry history.Attempt
		records              Count
		verdict              reports.Verdict
		want                 []string
		says                 []string
	}{
		{name: "two operations, the retry replays", first: first, second: second, retry: replay, records: records(2), verdict: reports.Pass},
		{name: "the second key collides (one record)", first: first, second: sent(2, 201, `{"id":"o1"}`), retry: replay, records: records(1),
			verdict: reports.Fail, want: []string{"missing-record seqs=1,2"}},
		{name: "the second key collides (no observer)", first: first, second: sent(2, 201, `{"id":"o1"}`), retry: replay, records: notCounted,
			verdict: reports.Fail, want: []string{"foreign-response seqs=1,2"},
			says: []string{"the second key at the limit got the answer stored for the first: long keys collide"}},
		{name: "equal answers, two records", first: first, second: sent(2, 201, `{"id":"o1"}`), retry: replay, records: records(2),
			verdict: reports.Pass},
		{name: "the retry does not replay", first: first, second: second, retry: sent(3, 201, `{"id":"o3"}`), records: records(2),
			verdict: reports.Fail, want: []string{"replay-differs what=body seqs=1,3"},
			says: []string{"the retry of the first key at the limit differs from the first answer (#1)"}},
		{name: "the retry got no answer", first: first, second: second, retry: noAnswer(3), records: records(2), verdict: reports.Unknown},
		{name: "the second key rejected as too long", first: first, second: sent(2, 400, `{}`), retry: replay, records: records(1),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"}, says: []string{"expected a 2xx for the second key at the limit, got 400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, KeysAtLimit(tt.first, tt.second, tt.retry, tt.records, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestKeyForm(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	tests := []struct {
		name         string
		first, again history.Attempt
		records      Count
		verdict      reports.Verdict
		want         []string
		says         []string
	}{
		{name: "accepted and replayed", first: first, again: sent(2, 201, `{"id":"o1"}`), records: records(1), verdict: reports.Pass},
		{name: "rejected", first: sent(1, 400, `{}`), again: sent(2, 400, `{}`), records: records(0), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1"}, says: []string{"expected a 2xx for a quoted key, got 400"}},
		{name: "not replayed", first: first, again: sent(2, 201, `{"id":"o2"}`), records: records(2), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,2", "duplicate-record seqs=1"},
			says: []string{"the retry with the quoted key differs from the first answer (#1)"}},
		{name: "the retry got no answer", first: first, again: noAnswer(2), records: records(1), verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, KeyForm(tt.first, tt.again, tt.records, targets.KeyQuoted, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestKeyFormsSame(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	tests := []struct {
		name         string
		first, other history.Attempt
		records      Count
		verdict      reports.Verdict
		want         []string
		says         []string
	}{
		{name: "the bare form replays the quoted one", first: first, other: sent(2, 201, `{"id":"o1"}`), records: records(1), verdict: reports.Pass},
		{name: "the bare form is another key", first: first, other: sent(2, 201, `{"id":"o2"}`), records: records(2), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,2", "duplicate-record seqs=1,2"},
			says: []string{"the same key sent in the bare form differs from the first answer (#1)"}},
		{name: "the bare form is a mismatch", first: first, other: sent(2, 422, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=status seqs=1,2"}},
		{name: "the quoted form rejected", first: sent(1, 400, `{}`), other: first, records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1"}, says: []string{"expected a 2xx for a quoted key, got 400"}},
		{name: "the bare form got no answer", first: first, other: noAnswer(2), records: records(1), verdict: reports.Unknown,
			says: []string{"the same key in the bare form (attempt #2) got no answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := KeyFormsSame(tt.first, tt.other, tt.records, targets.KeyQuoted, targets.KeyBare, profile(t, "ietf"))
			expect(t, res, tt.verdict, tt.want, tt.says...)
		})
	}
}
