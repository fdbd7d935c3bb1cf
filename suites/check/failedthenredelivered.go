package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets/history"
)

// FailedThenRedelivered judges an event whose first delivery failed because the consumer's
// downstream failed, and the redeliveries until one was acknowledged (failed-then-redelivered).
// failedCalls counts the downstream calls the injected failure answered: none means the failure
// never reached the consumer, and nothing can be judged. The first delivery may be answered with
// anything (a 5xx is what a provider expects); when it was not acknowledged, a redelivery MUST be
// acknowledged within the time allowed. Either way the event MUST take effect exactly once: an
// acknowledged event without an effect was dropped (marked as seen although its effect failed).
// A publication on a broker is acknowledged once confirmed: the broker redelivers on its own.
func FailedThenRedelivered(first history.Attempt, failedCalls int, redeliveries Eventually, effects Count) Result {
	j := newJudge(consumerProfile)
	if failedCalls == 0 {
		j.unknownf("the consumer made no downstream call for event %s while its downstream was failing: the failure never reached it", effects.Key)
		return j.result()
	}
	acked := false
	switch {
	case isPublished(first):
		acked = j.answered(first, "the publication of the event")
	case succeeded(first):
		acked = true // acknowledged despite the failure: its effect must still be there
	}
	seqs := []int64{first.Seq}
	if !acked && !isPublished(first) {
		acked = j.redelivered(redeliveries, "the redelivery after the downstream failure")
		seqs = append(seqs, lastSeq(redeliveries)...)
	}
	j.eventOnce(effects, acked, fmt.Sprintf(
		"event %s was acknowledged but never took effect: its first delivery failed downstream and the redelivery was taken for a duplicate (the event was marked as seen although its effect failed)",
		effects.Key), seqs...)
	return j.result()
}
