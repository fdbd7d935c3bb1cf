package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// TenantScope judges tenant B sending tenant A's key with an identical body (tenancy), counted
// per tenant: B's request MUST be processed as B's own (a success, never A's stored body), and
// each tenant MUST have one record.
func TenantScope(a, b history.Attempt, recordsA, recordsB Count, p targets.Profile) Result {
	j := newJudge(p)
	acked, ok := j.otherTenant(a, b)
	if !ok {
		return j.result()
	}
	j.recordsIf(acked, recordsB, 1, b.Seq)
	j.recordsIf(acked, recordsA, 1, a.Seq)
	return j.result()
}

// TenantScopeAcross is TenantScope where the observer counts a ref across every tenant
// (observer.per_tenant: false): the one count MUST be 2 once B's request is acknowledged. Fewer
// is one missing record, said as what B got and what was counted; more is a duplicate.
func TenantScopeAcross(a, b history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	acked, ok := j.otherTenant(a, b)
	if !ok || !j.counted(records) {
		return j.result()
	}
	got := "its own answer"
	if j.sameBody(a, b) {
		got = "the answer stored for tenant " + a.Tenant
	}
	switch n := records.N; {
	case acked && n < 2:
		j.add(countAnomaly(reports.KindMissingRecord, records, fmt.Sprintf(
			"tenant %s sent tenant %s's key with the same body and got %d (%s), yet %d business records of ref %s were counted across tenants, want 2 (one each): %s's request left no record of its own",
			b.Tenant, a.Tenant, b.Status, got, n, records.Ref, b.Tenant), a.Seq, b.Seq))
	case n > 2:
		j.add(countAnomaly(reports.KindDuplicateRecord, records, fmt.Sprintf(
			"tenant %s sent tenant %s's key with the same body and got %d, and %d business records of ref %s were counted across tenants, want 2 (one each): an operation was executed more than once",
			b.Tenant, a.Tenant, b.Status, n, records.Ref), a.Seq, b.Seq))
	}
	return j.result()
}

// otherTenant judges the answers of tenant A's request and of tenant B's with A's key: A's MUST
// succeed (ok false otherwise), B's MUST succeed (acked) and MUST NOT carry A's stored body.
func (j *judge) otherTenant(a, b history.Attempt) (acked, ok bool) {
	if !j.success(a, "the first tenant's request") {
		return false, false
	}
	what := fmt.Sprintf("tenant %s with tenant %s's key", b.Tenant, a.Tenant)
	acked = j.success(b, what)
	if acked && j.sameBody(a, b) {
		j.add(anomaly(reports.KindCrossTenantResponse, b, fmt.Sprintf("tenant %s received the answer stored for tenant %s", b.Tenant, a.Tenant), a.Seq, b.Seq))
	}
	return acked, true
}

// Credentials judges a request that carries a stored key with missing or unknown credentials
// (tenancy): it MUST be rejected (4xx) and MUST NOT receive the stored answer; the original's
// record stays the only one (a count that differs says what the stranger got).
func Credentials(first, stranger history.Attempt, records Count, what string, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first request") {
		return j.result()
	}
	if j.answered(stranger, "the request with "+what) {
		switch {
		case j.sameBody(first, stranger):
			j.add(anomaly(reports.KindUnauthenticatedResponse, stranger,
				fmt.Sprintf("a request with %s received the answer stored for tenant %s", what, first.Tenant), first.Seq, stranger.Seq))
		case stranger.Status < 400 || stranger.Status >= 500:
			j.wrongStatus(stranger, "a 4xx rejection", "a request with "+what)
		}
	}
	if !j.counted(records) || records.N == 1 {
		return j.result()
	}
	got := "got no answer"
	if stranger.Outcome == history.OK {
		got = fmt.Sprintf("got %d", stranger.Status)
	}
	kind, why := reports.KindMissingRecord, "the first request, acknowledged with a 2xx, left no record"
	if records.N > 1 {
		kind, why = reports.KindDuplicateRecord, "an operation was executed more than once"
	}
	j.add(countAnomaly(kind, records, fmt.Sprintf("after the request with %s %s, %d business records for %s were counted, want 1: %s",
		what, got, records.N, records.subject(), why), first.Seq))
	return j.result()
}
