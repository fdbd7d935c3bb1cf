package suites

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/retrysafe/retrysafe/suites/history"
)

// ok returns an attempt that got an answer. An attempt whose outcome is unknown (timeout,
// lost response) ends the spec as unknown; one that could not be sent fails it.
func (e *Env) ok(a history.Attempt) history.Attempt {
	e.halt() // an attempt cut short by Close is no evidence
	switch a.Outcome {
	case history.Unknown:
		e.unknown("attempt %d (%s, key %s) got no answer: %s", a.Seq, a.Op, a.Key, a.Err)
	case history.Failed:
		Fail(sprintf("attempt %d (%s, key %s) could not be sent: %s", a.Seq, a.Op, a.Key, a.Err), 1)
	}
	return a
}

// expectSame fails when again differs from first (status, headers, body).
func (e *Env) expectSame(first, again history.Attempt, format string, args ...any) {
	diffs := Compare(first, again, e.Target.Profile)
	if len(diffs) == 0 {
		return
	}
	e.noteDiff(diffs)
	Fail(sprintf("%s differs from the first answer at %s\nfirst:\n%s\nthis one:\n%s",
		sprintf(format, args...), strings.Join(diffs, ", "), first, again), 1)
}

// expectRecords checks the exact number of business records of an operation, when the
// operation has an observer.
func (e *Env) expectRecords(op *Op, want int) {
	if op.Def.Observer == nil {
		return
	}
	got, err := op.Count()
	if err != nil {
		e.unknown("the observer of %s could not count records: %v", op.Def.Name, err)
	}
	ExpectWithOffset(1, got).To(Equal(want),
		"business records of %s for ref %s (tenant %s, key %s)", op.Def.Name, op.Ref, tenantName(op), op.Key)
}

// expectStatus checks an answer's status.
func expectStatus(a history.Attempt, want int, what string) {
	ExpectWithOffset(1, a.Status).To(Equal(want), "%s: expected status %d, got:\n%s", what, want, a)
}

// expectRejected checks that an answer is a client error (4xx).
func expectRejected(a history.Attempt, what string) {
	ExpectWithOffset(1, a.Status).To(And(BeNumerically(">=", 400), BeNumerically("<", 500)),
		"%s: expected a 4xx rejection, got:\n%s", what, a)
}

// expectSuccess checks an answer is 2xx.
func expectSuccess(a history.Attempt, what string) {
	ExpectWithOffset(1, a.Status).To(And(BeNumerically(">=", 200), BeNumerically("<", 300)),
		"%s: expected a 2xx success, got:\n%s", what, a)
}

func tenantName(op *Op) string {
	if op.Tenant == nil {
		return "-"
	}
	return op.Tenant.Name
}
