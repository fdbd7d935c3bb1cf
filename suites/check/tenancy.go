package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// TenantScope judges tenant B sending tenant A's key with an identical body (tenancy): B's
// request MUST be processed as B's own (a success, never A's stored body), and the records MUST
// be as many as the observer counts for two operations: wantA and wantB (1 each when it counts
// per tenant, 2 each when it counts across tenants).
func TenantScope(a, b history.Attempt, recordsA, recordsB Count, wantA, wantB int, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(a, "the first tenant's request") {
		return j.result()
	}
	what := fmt.Sprintf("tenant %s with tenant %s's key", b.Tenant, a.Tenant)
	acked := j.success(b, what)
	if acked && j.sameBody(a, b) {
		j.add(anomaly(reports.KindCrossTenantResponse, b, fmt.Sprintf("tenant %s received the answer stored for tenant %s", b.Tenant, a.Tenant), a.Seq, b.Seq))
	}
	j.recordsIf(acked, recordsB, wantB, b.Seq)
	j.recordsIf(acked, recordsA, wantA, a.Seq)
	return j.result()
}

// Credentials judges a request that carries a stored key with missing or unknown credentials
// (tenancy): it MUST be rejected (4xx) and MUST NOT receive the stored answer; the original's
// record stays the only one.
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
	j.records(records, 1, first.Seq)
	return j.result()
}
