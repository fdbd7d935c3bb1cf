package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestControl(t *testing.T) {
	first := sent(1, 201, `{"id":"o1","amount":5}`)
	second := sent(2, 201, `{"id":"o2","amount":5}`)
	same := sent(2, 201, `{"id":"o1","amount":5}`)
	tests := []struct {
		name          string
		first, second history.Attempt
		records       Count
		verdict       reports.Verdict
		want          []string
		says          []string
	}{
		{name: "two keys, two operations", first: first, second: second, records: records(2), verdict: reports.Pass},
		{name: "two keys, two answers, no observer", first: first, second: second, records: notCounted, verdict: reports.Pass},
		{name: "deduplicated by body: one record", first: first, second: same, records: records(1), verdict: reports.Fail,
			want: []string{"missing-record seqs=1,2"}, says: []string{"1 business records for orders ref r1 (tenant alice), want 2"}},
		{name: "deduplicated by body: no observer, the same answer", first: first, second: same, records: notCounted,
			verdict: reports.Fail, want: []string{"foreign-response seqs=1,2"},
			says: []string{"the second key got the answer stored for the first key: requests are deduplicated by body"}},
		{name: "the same answer but two records: counting beats comparing", first: first, second: same, records: records(2),
			verdict: reports.Pass},
		{name: "the second key rejected", first: first, second: sent(2, 409, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2"}, says: []string{"expected a 2xx for the second key with the same body, got 409"}},
		{name: "the first key failed", first: sent(1, 502, ``), second: second, records: records(1), verdict: reports.Fail,
			want: []string{"server-error seqs=1"}},
		{name: "the second key got no answer", first: first, second: noAnswer(2), records: records(1), verdict: reports.Unknown},
		{name: "three records", first: first, second: second, records: records(3), verdict: reports.Fail,
			want: []string{"duplicate-record seqs=1,2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Control(tt.first, tt.second, tt.records, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}
