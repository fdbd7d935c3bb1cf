package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// KeyRejected judges a request with a missing, empty or over-long key (keys): it MUST get the
// declared status and leave no record, or, where the profile declares it processed, succeed
// with one record. A 5xx is a server error whatever the profile declares: a client's malformed
// key is never the server's failure.
func KeyRejected(a history.Attempt, records Count, want targets.StatusSet, what string, p targets.Profile) Result {
	j := newJudge(p)
	if !j.answered(a, what) {
		return j.result()
	}
	if a.Status >= 500 {
		j.add(anomaly(reports.KindServerError, a, fmt.Sprintf("%s got %d: a server error for a client's malformed request", what, a.Status), a.Seq))
		j.noRecord(records, what, a.Seq)
		return j.result()
	}
	if want.Processed {
		if j.success(a, what) {
			j.records(records, 1, a.Seq)
		}
		return j.result()
	}
	j.status(a, want, what)
	j.noRecord(records, what, a.Seq)
	return j.result()
}

// KeysAtLimit judges two keys of the maximum length that differ only in their last character
// (keys): two operations (two successes, two records for the shared ref), and a retry of the
// first replays it.
func KeysAtLimit(first, second, retry history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	if !j.twoOperations(first, second, records, "the first key at the limit", "the second key at the limit",
		"the second key at the limit got the answer stored for the first: long keys collide") {
		return j.result()
	}
	if j.answered(retry, "the retry of the first key at the limit") {
		j.same(first, retry, "the retry of the first key at the limit")
	}
	return j.result()
}

// KeyForm judges one key form (keys): accepted, and a retry in the same form replays it.
func KeyForm(first, again history.Attempt, records Count, form targets.KeyForm, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, fmt.Sprintf("a %s key", form)) {
		return j.result()
	}
	if j.answered(again, fmt.Sprintf("the retry with the %s key", form)) {
		j.same(first, again, fmt.Sprintf("the retry with the %s key", form))
	}
	j.records(records, 1, first.Seq)
	return j.result()
}

// KeyFormsSame judges one key sent in two forms (keys): the second form MUST replay the first.
func KeyFormsSame(first, other history.Attempt, records Count, a, b targets.KeyForm, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, fmt.Sprintf("a %s key", a)) {
		return j.result()
	}
	if j.answered(other, fmt.Sprintf("the same key in the %s form", b)) {
		j.same(first, other, fmt.Sprintf("the same key sent in the %s form", b))
	}
	j.records(records, 1, first.Seq, other.Seq)
	return j.result()
}
