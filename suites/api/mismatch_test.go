package api

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// refusesReuse wraps an API so that a key already used on one path is refused with 409 on any
// other (one key space for every endpoint, as Stripe's): a safe contract of its own.
func refusesReuse(next http.Handler) http.Handler {
	var mu sync.Mutex
	paths := map[string]string{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method == http.MethodPost && key != "" {
			id := r.Header.Get("Authorization") + "\x00" + key
			mu.Lock()
			first, seen := paths[id]
			if !seen {
				paths[id] = r.URL.Path
			}
			mu.Unlock()
			if seen && first != r.URL.Path {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"error":"this key was used on another endpoint"}`))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// TestSharedOperationScope: an API that refuses a key reused on another operation passes the
// scope spec declared operation_scope: shared, and fails it (as before) declared per-operation.
func TestSharedOperationScope(t *testing.T) {
	api := refusesReuse(referenceAPI(t, reference.MutantNone))
	const shared = "the key of orders reused on refunds is refused with 409 and leaves no record there (operation_scope: shared)"
	run, _ := runAgainst(t, api, twoOps, "  operation_scope: shared\n  operation_reuse_status: 409\n", "property:mismatch")
	if s, ok := specsOf(run, "mismatch")[shared]; !ok || s.Verdict != reports.Pass {
		t.Errorf("shared scope: %q = %+v, want pass", shared, s)
	}
	const independent = "the same key and body on orders and on refunds are two independent requests"
	run, _ = runAgainst(t, api, twoOps, "", "property:mismatch")
	if s := specsOf(run, "mismatch")[independent]; s.Verdict != reports.Fail || !slices.Equal(kindsOf(s), []reports.Kind{reports.KindWrongStatus}) {
		t.Errorf("per-operation scope: %q = %s %v, want a wrong-status failure", independent, s.Verdict, kindsOf(s))
	}
	// The reference, which scopes keys per operation, fails the declared shared scope.
	run, _ = runAgainst(t, referenceAPI(t, reference.MutantNone), twoOps, "  operation_scope: shared\n", "property:mismatch")
	sharedAny := "the key of orders reused on refunds is refused with 4xx and leaves no record there (operation_scope: shared)"
	if s := specsOf(run, "mismatch")[sharedAny]; s.Verdict != reports.Fail {
		t.Errorf("the reference under a declared shared scope: %s, want fail", s.Verdict)
	}
	// path-blind serves the orders answer on refunds: a foreign response under either scope.
	run, _ = runAgainst(t, referenceAPI(t, reference.MutantPathBlind), twoOps, "  operation_scope: shared\n", "property:mismatch")
	if s := specsOf(run, "mismatch")[sharedAny]; !slices.Contains(kindsOf(s), reports.KindForeignResponse) {
		t.Errorf("path-blind under a shared scope: %s %v, want a foreign-response", s.Verdict, kindsOf(s))
	}
}
