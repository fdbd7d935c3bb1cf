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
	if !j.success(first, "the first key") || !j.success(second, "the second key with the same body") {
		return j.result()
	}
	if !records.Taken && j.sameBody(first, second) {
		j.add(anomaly(reports.KindForeignResponse, second, "the second key got the answer stored for the first key: requests are deduplicated by body", first.Seq, second.Seq))
	}
	j.records(records, 2, first.Seq, second.Seq)
	return j.result()
}
