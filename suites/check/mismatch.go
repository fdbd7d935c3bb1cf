package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Mismatch judges the same key sent with another payload (mismatch): the variant MUST get the
// profile's mismatch status, the original MUST stay untouched (a retry replays it, one record).
func Mismatch(first, variant, again history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first send") {
		return j.result()
	}
	if j.answered(variant, "the same key with another payload") {
		switch {
		case is2xx(variant.Status):
			j.accepted(first, variant, "", "another payload")
		case !p.MismatchStatus.Contains(variant.Status):
			j.wrongStatus(variant, p.MismatchStatus.Words(), "the same key with another payload")
		}
	}
	if j.answered(again, "the retry with the original payload") {
		j.same(first, again, "the retry with the original payload after the mismatch")
	}
	j.records(records, 1, first.Seq)
	return j.result()
}

// accepted adds the mismatch-accepted anomaly of a variant that got a 2xx: it replayed the first
// answer, or it was processed as a new operation.
func (j *judge) accepted(first, variant history.Attempt, field, differs string) {
	how := "processed it as a new operation"
	if j.sameBody(first, variant) {
		how = "replayed the first answer"
	}
	an := anomaly(reports.KindMismatchAccepted, variant,
		fmt.Sprintf("the same key with %s got %d: the API %s instead of rejecting the mismatch", differs, variant.Status, how),
		first.Seq, variant.Seq)
	an.Field = field
	j.add(an)
}

// FieldVariant is the first request's key sent with one field of the body (or one query
// parameter) changed.
type FieldVariant struct {
	// Field is the JSONPath of the field changed (for a query parameter: "?name").
	Field string
	// Attempt is what the variant got.
	Attempt history.Attempt
}

// MismatchFields judges the same key sent once per field of the body with that field changed
// (mismatch, field by field): every variant MUST be rejected (any 4xx counts, a validation error
// included); one replayed or processed is a mismatch-accepted anomaly naming the field. The
// original MUST stay untouched.
func MismatchFields(first history.Attempt, variants []FieldVariant, again history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first send") {
		return j.result()
	}
	for _, v := range variants {
		what := "the same key with " + v.Field + " changed"
		if !j.answered(v.Attempt, what) {
			continue
		}
		switch s := v.Attempt.Status; {
		case is2xx(s):
			j.accepted(first, v.Attempt, v.Field, v.Field+" changed")
		case s >= 400 && s < 500:
		default:
			an := anomaly(reports.KindWrongStatus, v.Attempt, fmt.Sprintf("expected a 4xx for %s, got %d", what, s), v.Attempt.Seq)
			if s >= 500 {
				an.Kind = reports.KindServerError
			}
			an.Field = v.Field
			j.add(an)
		}
	}
	if j.answered(again, "the retry with the original payload") {
		j.same(first, again, "the retry with the original payload after the changed fields")
	}
	j.records(records, 1, first.Seq)
	return j.result()
}

// Reformat judges the same payload with its fields reordered and other white space (mismatch):
// it MUST be a replay, not a mismatch, and one record MUST result.
func Reformat(first, again history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first send") {
		return j.result()
	}
	if j.answered(again, "the reformatted retry") {
		if !is2xx(again.Status) && p.MismatchStatus.Contains(again.Status) {
			j.add(anomaly(reports.KindWrongStatus, again, fmt.Sprintf(
				"the same payload with reordered fields and other white space got %d: it was treated as a mismatch", again.Status),
				first.Seq, again.Seq))
		} else {
			j.same(first, again, "the reformatted retry")
		}
	}
	j.records(records, 1, first.Seq)
	return j.result()
}

// OperationScope judges the same key and body sent to two operations (mismatch). Under
// operation_scope per-operation the second MUST be an independent request with its own answer
// and record; under shared it MUST be refused with operation_reuse_status and leave no record
// there. Under either, the first operation's stored answer served to the second is a foreign
// response, and the first operation keeps its one record.
func OperationScope(a, b history.Attempt, recordsA, recordsB Count, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(a, "the first operation") {
		return j.result()
	}
	if p.OperationScope == targets.ScopeShared {
		j.reuseRefused(a, b, recordsB)
		j.records(recordsA, 1, a.Seq)
		return j.result()
	}
	acked := j.success(b, "the same key and body on the second operation")
	if acked && j.sameBody(a, b) {
		j.add(anomaly(reports.KindForeignResponse, b, fmt.Sprintf("%s answered with the body %s stored for the same key", b.Op, a.Op), a.Seq, b.Seq))
	}
	j.records(recordsA, 1, a.Seq)
	j.recordsIf(acked, recordsB, 1, b.Seq)
	return j.result()
}

// reuseRefused judges the second operation's answer to a key of the first under operation_scope
// shared: refused with operation_reuse_status, no record there.
func (j *judge) reuseRefused(a, b history.Attempt, recordsB Count) {
	what := fmt.Sprintf("the same key on %s (operation_scope: shared)", b.Op)
	if !j.answered(b, what) {
		return
	}
	switch want := j.p.OperationReuseStatus; {
	case is2xx(b.Status) && j.sameBody(a, b):
		j.add(anomaly(reports.KindForeignResponse, b, fmt.Sprintf("%s answered with the body %s stored for the same key", b.Op, a.Op), a.Seq, b.Seq))
	case is2xx(b.Status):
		j.add(anomaly(reports.KindWrongStatus, b, fmt.Sprintf(
			"%s processed the key of %s as its own request (%d): operation_scope: shared declares it refused with %s",
			b.Op, a.Op, b.Status, want.Words()), a.Seq, b.Seq))
	case !want.Contains(b.Status):
		j.wrongStatus(b, want.Words(), what)
	default:
		j.noRecord(recordsB, what, b.Seq)
	}
}
