package check

import (
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Control judges the same body sent under two different keys (control): two successes and two
// records. Without an observer an identical second answer is the only sign that the body, not
// the key, was deduplicated.
func Control(first, second history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	j.twoOperations(first, second, records, "the first key", "the second key with the same body",
		"the second key got the answer stored for the first key: requests are deduplicated by body")
	return j.result()
}

// twoOperations judges two requests under different keys that MUST be two operations: two
// successes and two records. Without an observer an identical second answer is a foreign
// response, worded as collided. It reports whether both succeeded.
func (j *judge) twoOperations(first, second history.Attempt, records Count, whatFirst, whatSecond, collided string) bool {
	if !j.success(first, whatFirst) || !j.success(second, whatSecond) {
		return false
	}
	if !records.Taken && j.sameBody(first, second) {
		j.add(anomaly(reports.KindForeignResponse, second, collided, first.Seq, second.Seq))
	}
	j.records(records, 2, first.Seq, second.Seq)
	return true
}
