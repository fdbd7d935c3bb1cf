package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

const order = `{"id":"o1","amount":5}`

func TestMismatch(t *testing.T) {
	first := sent(1, 201, order)
	again := sent(3, 201, order)
	tests := []struct {
		name           string
		base           string
		change         func(*targets.Profile)
		first          history.Attempt // the first send when not the usual 201
		variant, again history.Attempt
		records        Count
		verdict        reports.Verdict
		want           []string
		says           []string
	}{
		{name: "the variant gets 422 (ietf), the original replays", variant: sent(2, 422, `{"title":"mismatch"}`), again: again,
			records: records(1), verdict: reports.Pass},
		{name: "the variant gets 400 (stripe)", base: "stripe", variant: sent(2, 400, `{}`),
			again: sent(3, 201, order, "Idempotent-Replayed", "true"), records: records(1), verdict: reports.Pass},
		{name: "stripe declares 400, the variant gets 422", base: "stripe", variant: sent(2, 422, `{}`), again: again,
			records: records(1), verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected 400 for the same key with another payload, got 422"}},
		{name: "a declared class: 409 is a 4xx", change: func(p *targets.Profile) { p.MismatchStatus = targets.StatusSet{Classes: []int{4}} },
			variant: sent(2, 409, `{}`), again: again, records: records(1), verdict: reports.Pass},
		{name: "a declared list", change: func(p *targets.Profile) { p.MismatchStatus = targets.StatusSet{Codes: []int{400, 409, 422}} },
			variant: sent(2, 404, `{}`), again: again, records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2"}, says: []string{"expected one of 400, 409, 422 for the same key with another payload, got 404"}},
		{name: "the variant is replayed", variant: sent(2, 201, order), again: again, records: records(1), verdict: reports.Fail,
			want: []string{"mismatch-accepted seqs=1,2"},
			says: []string{"the same key with another payload got 201: the API replayed the first answer instead of rejecting the mismatch"}},
		{name: "the variant is processed as new", variant: sent(2, 201, `{"id":"o2","amount":7}`), again: again, records: records(2),
			verdict: reports.Fail, want: []string{"mismatch-accepted seqs=1,2", "duplicate-record seqs=1"},
			says: []string{"the API processed it as a new operation"}},
		{name: "the variant gets a 5xx", variant: sent(2, 500, `{}`), again: again, records: records(1), verdict: reports.Fail,
			want: []string{"server-error seqs=2"}, says: []string{"expected 422 for the same key with another payload, got 500"}},
		{name: "the variant got no answer", variant: noAnswer(2), again: again, records: records(1), verdict: reports.Unknown,
			says: []string{"the same key with another payload (attempt #2) got no answer"}},
		{name: "the original no longer replays", variant: sent(2, 422, `{}`), again: sent(3, 201, `{"id":"o1","amount":7}`),
			records: records(1), verdict: reports.Fail, want: []string{"replay-differs what=body seqs=1,3"},
			says: []string{"the retry with the original payload after the mismatch differs from the first answer (#1) at $['amount']"}},
		{name: "the original retry got no answer", variant: sent(2, 422, `{}`), again: noAnswer(3), records: records(1), verdict: reports.Unknown},
		{name: "the first send failed", first: sent(1, 503, `{}`), variant: sent(2, 422, `{}`), again: again, records: records(0), verdict: reports.Fail,
			want: []string{"server-error seqs=1"}, says: []string{"expected a 2xx for the first send, got 503"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, tt.base, tt.change)
			f := first
			if tt.first.Seq != 0 {
				f = tt.first
			}
			expect(t, Mismatch(f, tt.variant, tt.again, tt.records, p), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestMismatchFields(t *testing.T) {
	first := sent(1, 201, order)
	again := sent(9, 201, order)
	field := func(path string, a history.Attempt) FieldVariant { return FieldVariant{Field: path, Attempt: a} }
	tests := []struct {
		name     string
		variants []FieldVariant
		again    history.Attempt
		records  Count
		verdict  reports.Verdict
		want     []string
		says     []string
	}{
		{
			name: "every changed field rejected: the mismatch status, a validation error, a conflict",
			variants: []FieldVariant{field("$.amount", sent(2, 422, `{}`)), field("$.currency", sent(3, 400, `{"error":"invalid currency"}`)),
				field("?expand", sent(4, 409, `{}`))},
			again: again, records: records(1), verdict: reports.Pass,
		},
		{
			name:     "a changed field replayed",
			variants: []FieldVariant{field("$.amount", sent(2, 422, `{}`)), field("$.note", sent(3, 201, order))},
			again:    again, records: records(1), verdict: reports.Fail,
			want: []string{"mismatch-accepted field=$.note seqs=1,3"},
			says: []string{"the same key with $.note changed got 201: the API replayed the first answer"},
		},
		{
			name:     "a changed field processed as new",
			variants: []FieldVariant{field("$.amount", sent(2, 201, `{"id":"o2","amount":6}`))},
			again:    again, records: records(1), verdict: reports.Fail,
			want: []string{"mismatch-accepted field=$.amount seqs=1,2"},
			says: []string{"processed it as a new operation"},
		},
		{
			name:     "a changed field gets a 5xx",
			variants: []FieldVariant{field("$.amount", sent(2, 500, `{}`))},
			again:    again, records: records(1), verdict: reports.Fail,
			want: []string{"server-error field=$.amount seqs=2"},
			says: []string{"expected a 4xx for the same key with $.amount changed, got 500"},
		},
		{
			name:     "a changed field gets a redirect",
			variants: []FieldVariant{field("?page", sent(2, 303, ``))},
			again:    again, records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status field=?page seqs=2"},
			says: []string{"expected a 4xx for the same key with ?page changed, got 303"},
		},
		{
			name:     "a changed field without an answer",
			variants: []FieldVariant{field("$.amount", noAnswer(2)), field("$.note", sent(3, 422, `{}`))},
			again:    again, records: records(1), verdict: reports.Unknown,
			says: []string{"the same key with $.amount changed (attempt #2) got no answer"},
		},
		{
			name:     "the original no longer replays",
			variants: []FieldVariant{field("$.amount", sent(2, 422, `{}`))},
			again:    sent(9, 422, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"replay-differs what=status seqs=1,9"},
			says: []string{"the retry with the original payload after the changed fields differs"},
		},
		{
			name:     "a second record",
			variants: []FieldVariant{field("$.amount", sent(2, 422, `{}`))},
			again:    again, records: records(2), verdict: reports.Fail,
			want: []string{"duplicate-record seqs=1"},
		},
		{
			name:  "no fields to change",
			again: again, records: records(1), verdict: reports.Pass,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, MismatchFields(first, tt.variants, tt.again, tt.records, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
	t.Run("the first send failed", func(t *testing.T) {
		res := MismatchFields(sent(1, 400, `{}`), []FieldVariant{field("$.amount", sent(2, 201, order))}, again, records(0), profile(t, "ietf"))
		expect(t, res, reports.Fail, []string{"wrong-status seqs=1"}, "expected a 2xx for the first send, got 400")
	})
}

func TestReformat(t *testing.T) {
	first := sent(1, 201, order, "Date", "Mon, 05 Jan 2026 10:00:00 GMT")
	tests := []struct {
		name    string
		change  func(*targets.Profile)
		first   history.Attempt
		again   history.Attempt
		records Count
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "replayed", first: first, again: sent(2, 201, order, "Date", "Mon, 05 Jan 2026 10:00:03 GMT"), records: records(1), verdict: reports.Pass},
		{name: "treated as a mismatch", first: first, again: sent(2, 422, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1,2"},
			says: []string{"the same payload with reordered fields and other white space got 422: it was treated as a mismatch"}},
		{name: "treated as a mismatch under a class", change: func(p *targets.Profile) { p.MismatchStatus = targets.StatusSet{Classes: []int{4}} },
			first: first, again: sent(2, 409, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"wrong-status seqs=1,2"}, says: []string{"got 409: it was treated as a mismatch"}},
		{name: "another status than the mismatch status does not replay", first: first, again: sent(2, 400, `{}`), records: records(1),
			verdict: reports.Fail, want: []string{"replay-differs what=status seqs=1,2"}, says: []string{"the reformatted retry differs"}},
		{name: "processed as new", first: first, again: sent(2, 201, `{"id":"o2","amount":5}`), records: records(2), verdict: reports.Fail,
			want: []string{"replay-differs what=body seqs=1,2", "duplicate-record seqs=1"}},
		{name: "no answer", first: first, again: noAnswer(2), records: records(1), verdict: reports.Unknown},
		{name: "the first send failed", first: sent(1, 500, ``), again: sent(2, 201, order), records: records(1), verdict: reports.Fail,
			want: []string{"server-error seqs=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, "ietf", tt.change)
			expect(t, Reformat(tt.first, tt.again, tt.records, p), tt.verdict, tt.want, tt.says...)
		})
	}
}

// onRefunds is attempt #2, on the second operation (refunds).
func onRefunds(status int, body string) history.Attempt {
	b := sent(2, status, body)
	b.Op = "refunds"
	return b
}

// refundRecords is a taken count of the second operation's records.
func refundRecords(n int) Count {
	c := records(n)
	c.Op, c.Ref = "refunds", "r2"
	return c
}

func TestOperationScope(t *testing.T) {
	a := sent(1, 201, order)
	other := onRefunds
	refunds := refundRecords(1)
	tests := []struct {
		name       string
		a, b       history.Attempt
		recA, recB Count
		verdict    reports.Verdict
		want       []string
		says       []string
	}{
		{name: "two independent operations", a: a, b: other(201, `{"id":"rf1"}`), recA: records(1), recB: refunds, verdict: reports.Pass},
		{name: "the second operation got the first's stored body", a: a, b: other(201, order), recA: records(1), recB: notCounted,
			verdict: reports.Fail, want: []string{"foreign-response seqs=1,2"},
			says: []string{"refunds answered with the body orders stored for the same key"}},
		{name: "the second operation left no record", a: a, b: other(201, `{"id":"rf1"}`), recA: records(1), recB: refundRecords(0),
			verdict: reports.Fail, want: []string{"missing-record seqs=2"}, says: []string{"0 business records for refunds ref r2 (tenant alice), want 1"}},
		{name: "the first operation got two records", a: a, b: other(201, `{"id":"rf1"}`), recA: records(2), recB: refunds,
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "the second operation rejected: no record is expected of it", a: a, b: other(422, `{}`), recA: records(1),
			recB: refundRecords(0), verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected a 2xx for the same key and body on the second operation, got 422"}},
		{name: "the second operation without an answer is unknown, not a missing record", a: a, b: noAnswer(2), recA: records(1),
			recB: refundRecords(0), verdict: reports.Unknown},
		{name: "the second operation without an answer but two records", a: a, b: noAnswer(2), recA: records(1),
			recB: refundRecords(2), verdict: reports.Fail, want: []string{"duplicate-record seqs=2"}},
		{name: "the first operation failed", a: sent(1, 500, ``), b: other(201, order), recA: records(0), recB: refunds,
			verdict: reports.Fail, want: []string{"server-error seqs=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, OperationScope(tt.a, tt.b, tt.recA, tt.recB, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}

// TestOperationScopeShared: under operation_scope: shared a key reused on another operation is
// refused with operation_reuse_status and leaves no record there; serving the stored answer stays
// a foreign response.
func TestOperationScopeShared(t *testing.T) {
	a := sent(1, 201, order)
	other := onRefunds
	shared := func(status string) func(*targets.Profile) {
		return func(p *targets.Profile) {
			p.OperationScope = targets.ScopeShared
			if status != "" {
				p.OperationReuseStatus = targets.Status(409)
			}
		}
	}
	tests := []struct {
		name       string
		b          history.Attempt
		recA, recB Count
		change     func(*targets.Profile)
		verdict    reports.Verdict
		want       []string
		says       []string
	}{
		{name: "refused with a 4xx (the default), no record there", b: other(400, `{"error":"key used on another endpoint"}`),
			recA: records(1), recB: refundRecords(0), change: shared(""), verdict: reports.Pass},
		{name: "refused with the declared 409", b: other(409, `{}`), recA: records(1), recB: refundRecords(0), change: shared("409"),
			verdict: reports.Pass},
		{name: "refused with another status than declared", b: other(422, `{}`), recA: records(1), recB: refundRecords(0),
			change: shared("409"), verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected 409 for the same key on refunds (operation_scope: shared), got 422"}},
		{name: "refused but recorded", b: other(400, `{}`), recA: records(1), recB: refundRecords(1), change: shared(""),
			verdict: reports.Fail, want: []string{"rejected-but-recorded seqs=2"}},
		{name: "processed as its own request", b: other(201, `{"id":"rf1"}`), recA: records(1), recB: refundRecords(1),
			change: shared(""), verdict: reports.Fail, want: []string{"wrong-status seqs=1,2"},
			says: []string{"refunds processed the key of orders as its own request (201): operation_scope: shared declares it refused with a 4xx"}},
		{name: "the stored answer served: a foreign response under either scope", b: other(201, order), recA: records(1),
			recB: refundRecords(0), change: shared(""), verdict: reports.Fail, want: []string{"foreign-response seqs=1,2"}},
		{name: "a second execution of the first operation", b: other(400, `{}`), recA: records(2), recB: refundRecords(0),
			change: shared(""), verdict: reports.Fail, want: []string{"duplicate-record seqs=1"}},
		{name: "a 5xx is a server error", b: other(500, `{}`), recA: records(1), recB: refundRecords(0), change: shared(""),
			verdict: reports.Fail, want: []string{"server-error seqs=2"}},
		{name: "per-operation (the default) still fails the refusal", b: other(400, `{}`), recA: records(1), recB: refundRecords(0),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected a 2xx for the same key and body on the second operation, got 400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, OperationScope(a, tt.b, tt.recA, tt.recB, profile(t, "ietf", tt.change)), tt.verdict, tt.want, tt.says...)
		})
	}
}
