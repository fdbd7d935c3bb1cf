package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// asBob is an attempt of tenant bob.
func asBob(a history.Attempt) history.Attempt {
	a.Tenant = "bob"
	return a
}

// bobRecords is a taken count of bob's records.
func bobRecords(n int) Count {
	c := records(n)
	c.Tenant = "bob"
	return c
}

func TestTenantScope(t *testing.T) {
	a := sent(1, 201, `{"id":"o1","tenant":"alice"}`)
	own := asBob(sent(2, 201, `{"id":"o2","tenant":"bob"}`))
	tests := []struct {
		name       string
		a, b       history.Attempt
		recA, recB Count
		verdict    reports.Verdict
		want       []string
		says       []string
	}{
		{name: "bob's request is his own, one record each", a: a, b: own,
			recA: records(1), recB: bobRecords(1), verdict: reports.Pass},
		{name: "bob received alice's stored answer", a: a, b: asBob(sent(2, 201, `{"tenant":"alice", "id":"o1"}`)),
			recA: records(1), recB: bobRecords(0), verdict: reports.Fail,
			want: []string{"cross-tenant-response seqs=1,2", "missing-record seqs=2"},
			says: []string{"tenant bob received the answer stored for tenant alice"}},
		{name: "bob's request executed twice", a: a, b: own, recA: records(1), recB: bobRecords(2),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=2"},
			says: []string{"2 business records for orders ref r1 (tenant bob), want 1"}},
		{name: "bob's request rejected", a: a, b: asBob(sent(2, 409, `{}`)), recA: records(1), recB: bobRecords(0),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"},
			says: []string{"expected a 2xx for tenant bob with tenant alice's key, got 409"}},
		{name: "bob's request without an answer is unknown, not a missing record", a: a, b: asBob(noAnswer(2)),
			recA: records(1), recB: bobRecords(0), verdict: reports.Unknown,
			says: []string{"tenant bob with tenant alice's key (attempt #2) got no answer"}},
		{name: "bob's request without an answer yet two records", a: a, b: asBob(noAnswer(2)),
			recA: records(2), recB: bobRecords(2), verdict: reports.Fail,
			want: []string{"duplicate-record seqs=2", "duplicate-record seqs=1"}},
		{name: "alice's request failed", a: sent(1, 503, ``), b: own, recA: records(0), recB: bobRecords(1),
			verdict: reports.Fail, want: []string{"server-error seqs=1"}, says: []string{"expected a 2xx for the first tenant's request, got 503"}},
		{name: "the observer failed", a: a, b: own, recA: countFailed(), recB: bobRecords(1), verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := TenantScope(tt.a, tt.b, tt.recA, tt.recB, profile(t, "ietf"))
			expect(t, res, tt.verdict, tt.want, tt.says...)
			for _, an := range res.Anomalies {
				if an.Kind == reports.KindCrossTenantResponse && an.Tenant != "bob" {
					t.Errorf("the cross-tenant response is about tenant %q, want bob", an.Tenant)
				}
			}
		})
	}
}

// TestTenantScopeAcross: with an observer that counts a ref across tenants (per_tenant: false),
// one missing record is one anomaly that says what bob got and what was counted.
func TestTenantScopeAcross(t *testing.T) {
	a := sent(1, 201, `{"id":"o1","tenant":"alice"}`)
	own := asBob(sent(2, 201, `{"id":"o2","tenant":"bob"}`))
	leaked := asBob(sent(2, 201, `{"tenant":"alice", "id":"o1"}`))
	tests := []struct {
		name    string
		b       history.Attempt
		records Count
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "two records, one each", b: own, records: records(2), verdict: reports.Pass},
		{name: "bob received alice's stored answer: one missing record, said once", b: leaked, records: records(1), verdict: reports.Fail,
			want: []string{"cross-tenant-response seqs=1,2", "missing-record seqs=1,2"},
			says: []string{"tenant bob sent tenant alice's key with the same body and got 201 (the answer stored for tenant alice), " +
				"yet 1 business records of ref r1 were counted across tenants, want 2 (one each): bob's request left no record of its own"}},
		{name: "bob's own answer but no record", b: own, records: records(1), verdict: reports.Fail,
			want: []string{"missing-record seqs=1,2"}, says: []string{"got 201 (its own answer), yet 1 business records"}},
		{name: "three records", b: own, records: records(3), verdict: reports.Fail,
			want: []string{"duplicate-record seqs=1,2"}, says: []string{"3 business records of ref r1 were counted across tenants, want 2"}},
		{name: "bob rejected: one record is no violation of the count", b: asBob(sent(2, 409, `{}`)), records: records(1),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"}},
		{name: "bob without an answer", b: asBob(noAnswer(2)), records: records(1), verdict: reports.Unknown},
		{name: "the observer failed", b: own, records: countFailed(), verdict: reports.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, TenantScopeAcross(a, tt.b, tt.records, profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
}

func TestCredentials(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`)
	stranger := func(status int, body string) history.Attempt {
		a := sent(2, status, body)
		a.Tenant = ""
		return a
	}
	tests := []struct {
		name     string
		stranger history.Attempt
		records  Count
		verdict  reports.Verdict
		want     []string
		says     []string
	}{
		{name: "rejected with 401", stranger: stranger(401, `{"error":"unauthorized"}`), records: records(1), verdict: reports.Pass},
		{name: "rejected with 404 (any 4xx)", stranger: stranger(404, `not found`), records: records(1), verdict: reports.Pass},
		{name: "received the stored answer", stranger: stranger(201, `{"id":"o1"}`), records: records(1), verdict: reports.Fail,
			want: []string{"unauthenticated-response seqs=1,2"},
			says: []string{"a request with no credentials received the answer stored for tenant alice"}},
		{name: "processed as a new request", stranger: stranger(201, `{"id":"o9"}`), records: records(2), verdict: reports.Fail,
			want: []string{"wrong-status seqs=2", "duplicate-record seqs=1"},
			says: []string{"expected a 4xx rejection for a request with no credentials, got 201",
				"after the request with no credentials got 201, 2 business records for orders ref r1 (tenant alice) were counted, want 1"}},
		{name: "a server error", stranger: stranger(500, `{}`), records: records(1), verdict: reports.Fail,
			want: []string{"server-error seqs=2"}, says: []string{"got 500"}},
		{name: "no answer", stranger: noAnswer(2), records: records(1), verdict: reports.Unknown,
			says: []string{"the request with no credentials (attempt #2) got no answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Credentials(first, tt.stranger, tt.records, "no credentials", profile(t, "ietf")), tt.verdict, tt.want, tt.says...)
		})
	}
	t.Run("the first request failed", func(t *testing.T) {
		res := Credentials(sent(1, 400, `{}`), stranger(401, `{}`), records(0), "unknown credentials", profile(t, "ietf"))
		expect(t, res, reports.Fail, []string{"wrong-status seqs=1"}, "expected a 2xx for the first request, got 400")
	})
}
