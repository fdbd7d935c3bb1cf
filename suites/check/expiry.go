package check

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Retry is a retry of a stored key some time after the first send, and the records counted
// right after it.
type Retry struct {
	// After is how long after the first send the retry was sent.
	After time.Duration
	// Attempt is what it got.
	Attempt history.Attempt
	// Records is the count after it.
	Records Count
}

// ExpiryWithin judges retries sent at growing delays within the declared retention (expiry's
// lower bound): each MUST replay the first answer and leave the one record. The first retry that
// does not ends the check, with the delay at which the key was forgotten.
func ExpiryWithin(first history.Attempt, retries []Retry, retention time.Duration, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first send") {
		return j.result()
	}
	for _, r := range retries {
		what := fmt.Sprintf("the retry %v after the first send (retention %v)", r.After.Round(time.Millisecond), retention)
		if !j.answered(r.Attempt, what) {
			continue
		}
		counted := j.counted(r.Records)
		if counted && r.Records.N > 1 {
			j.add(countAnomaly(reports.KindDuplicateRecord, r.Records, fmt.Sprintf(
				"%s was executed again (%d business records): the key was forgotten before the declared retention",
				what, r.Records.N), first.Seq, r.Attempt.Seq))
			break
		}
		if !j.same(first, r.Attempt, what) {
			break
		}
		if counted {
			j.records(r.Records, 1, first.Seq, r.Attempt.Seq)
		}
	}
	return j.result()
}

// ExpiryAfter judges a retry sent after the declared retention plus a margin (expiry): under
// expired: new it MUST be processed again (a success that differs from the first answer, a
// second record); under expired: reject it MUST get the declared status and leave one record.
func ExpiryAfter(first history.Attempt, late Retry, retention time.Duration, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(first, "the first send") {
		return j.result()
	}
	what := fmt.Sprintf("the retry %v after the first send (retention %v)", late.After.Round(time.Millisecond), retention)
	if !j.answered(late.Attempt, what) {
		return j.result()
	}
	if p.Expired == targets.ExpiredReject {
		j.status(late.Attempt, p.ExpiredStatus, what)
		j.records(late.Records, 1, first.Seq)
		return j.result()
	}
	if !j.success(late.Attempt, what) {
		return j.result()
	}
	// Counting beats comparing: a second record says the key expired, whatever the answers.
	processedAgain := late.Records.known() && late.Records.N >= 2
	if !processedAgain && len(Compare(first, late.Attempt, p)) == 0 {
		j.add(anomaly(reports.KindNotExpired, late.Attempt, fmt.Sprintf("%s replayed the first answer: the key did not expire", what), first.Seq, late.Attempt.Seq))
		return j.result()
	}
	j.records(late.Records, 2, first.Seq, late.Attempt.Seq)
	return j.result()
}
