package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestHostile(t *testing.T) {
	other := sent(1, 201, `{"id":"o1"}`)
	key := func(seq int64, status int, body string, of bool, recs Count) HostileSend {
		a := sent(seq, status, body)
		a.Key = "hostile"
		return HostileSend{What: "a key with ':'", Of: of, Attempt: a, Records: recs}
	}
	silent := func(seq int64) HostileSend {
		a := noAnswer(seq)
		a.Key = "idempotency:k\x01"
		return HostileSend{What: "a key with a control character", Attempt: a}
	}
	plain := sent(9, 201, `{"id":"o9"}`)
	tests := []struct {
		name    string
		h       HostileKeys
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "refused and accepted, each its own", h: HostileKeys{Other: other, Keys: []HostileSend{
			key(2, 400, `{}`, false, records(0)), key(3, 201, `{"id":"o3"}`, false, records(1)), key(4, 201, `{"id":"o4"}`, true, Count{})},
			OtherRecord: records(2), Plain: plain}, verdict: reports.Pass},
		{name: "a 5xx", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 503, `{}`, true, Count{})}, OtherRecord: records(1), Plain: plain},
			verdict: reports.Fail, want: []string{"server-error seqs=2"}, says: []string{"a key with ':' got 503: a server error"}},
		{name: "another key's answer", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 201, `{"id":"o1"}`, true, Count{})},
			OtherRecord: records(1), Plain: plain}, verdict: reports.Fail,
			want: []string{"foreign-response seqs=1,2", "missing-record seqs=1"}, says: []string{"got the answer stored for the key of attempt #1"}},
		{name: "refused but recorded", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 400, `{}`, false, records(1))},
			OtherRecord: records(1), Plain: plain}, verdict: reports.Fail, want: []string{"rejected-but-recorded seqs=2"}},
		{name: "accepted twice", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 201, `{"id":"o2"}`, false, records(2))},
			OtherRecord: records(1), Plain: plain}, verdict: reports.Fail, want: []string{"duplicate-record seqs=2"}},
		{name: "the target died at a key", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 201, `{"id":"o2"}`, false, records(1)), silent(3)},
			OtherRecord: records(1), Alive: "GET http://127.0.0.1:1/ got no answer: connection refused", Plain: noAnswer(9)},
			verdict: reports.Fail, want: []string{"target-crashed seqs=3,9"},
			says: []string{`the API stopped answering at a key with a control character, key "idempotency:k\x01" (attempt #3): GET http://127.0.0.1:1/ got no answer: connection refused, and a plain request got no answer`}},
		{name: "the target died after the last key", h: HostileKeys{Other: other, Keys: []HostileSend{key(2, 201, `{"id":"o2"}`, false, records(1))},
			OtherRecord: records(1), Plain: sent(9, 503, `{}`)},
			verdict: reports.Fail, want: []string{"target-crashed seqs=2,9"},
			says: []string{`the API stopped answering after a key with ':', key "hostile" (attempt #2): its health check answered, and a plain request got 503`}},
		{name: "a key without an answer and no record, the API alive: a refusal", h: HostileKeys{Other: other,
			Keys: []HostileSend{hostileRecords(silent(2), records(0))}, OtherRecord: records(1), Plain: plain}, verdict: reports.Pass},
		{name: "a key without an answer yet a record", h: HostileKeys{Other: other, Keys: []HostileSend{hostileRecords(silent(2), records(1))},
			OtherRecord: records(1), Plain: plain},
			verdict: reports.Unknown, says: []string{"a key with a control character (attempt #2) got no answer, yet left 1 records"}},
		{name: "a key built on another without an answer, one more record", h: HostileKeys{Other: other,
			Keys: []HostileSend{ofKey(silent(2))}, OtherRecord: records(2), Plain: plain}, verdict: reports.Unknown},
		{name: "a key built on another without an answer, no more record", h: HostileKeys{Other: other,
			Keys: []HostileSend{ofKey(silent(2))}, OtherRecord: records(1), Plain: plain}, verdict: reports.Pass},
		{name: "the plain request first failed", h: HostileKeys{Other: sent(1, 400, `{}`)}, verdict: reports.Fail, want: []string{"wrong-status seqs=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Hostile(tt.h, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestProcessedTwice(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	tests := []struct {
		name    string
		second  history.Attempt
		recB    Count
		verdict reports.Verdict
		want    []string
	}{
		{"two operations", sent(2, 201, `{"id":"o2"}`), records(1), reports.Pass, nil},
		{"the first caller's answer", sent(2, 201, `{"id":"o1"}`), records(0), reports.Fail, []string{"foreign-response seqs=1,2", "missing-record seqs=2"}},
		{"refused", sent(2, 409, `{}`), records(0), reports.Fail, []string{"wrong-status seqs=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, ProcessedTwice(first, tt.second, records(1), tt.recB, "an empty key", profile(t, "ietf")), tt.verdict, tt.want)
		})
	}
}

func hostileRecords(k HostileSend, c Count) HostileSend { k.Records = c; return k }

func ofKey(k HostileSend) HostileSend { k.Of = true; return k }
