package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets/history"
)

// DistinctEvents judges two events with different ids and otherwise the same body
// (distinct-events): both deliveries MUST be acknowledged and each event MUST take effect exactly
// once. The second event acknowledged without an effect while the first took effect was taken for
// a duplicate of the first: the consumer deduplicates on the content, not on the event id.
func DistinctEvents(first, second history.Attempt, firstEffects, secondEffects Count) Result {
	j := newJudge(consumerProfile)
	firstAcked := j.acked(first, "the delivery of the first event")
	secondAcked := j.acked(second, "the delivery of the second event (another id, the same body)")
	j.eventEffects(firstEffects, 1, firstAcked, first.Seq)
	if firstEffects.known() && firstEffects.N == 1 {
		j.eventOnce(secondEffects, secondAcked, fmt.Sprintf(
			"event %s was acknowledged and never took effect: it differs from event %s only in its id, and was dropped as its duplicate (deduplicated on the payload, not the event id)",
			secondEffects.Key, firstEffects.Key), first.Seq, second.Seq)
		return j.result()
	}
	j.eventEffects(secondEffects, 1, secondAcked, first.Seq, second.Seq)
	return j.result()
}
