package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets/history"
)

// Failure is how the first attempt at an event was made to fail: through the downstream sink
// (Calls counts the calls it failed: none means the failure never reached the consumer), or
// through the consumer's fail_next hook (Hooked: armed before the delivery, it shows only in a
// webhook's answer; a queue consumer's failure is the hook's word).
type Failure struct {
	Calls  int
	Hooked bool
	// Point is the point of the handling the hook failed it at (before-effect, after-effect;
	// "" = not named): the verdict's anomalies and unknowns name it.
	Point string
}

// FailedThenRedelivered judges an event whose first attempt failed (its downstream failed, or
// the fail_next hook failed the handling), and the redeliveries until one was acknowledged
// (failed-then-redelivered). The first delivery may be answered with anything (a 5xx is what a
// provider expects); when it was not acknowledged, a redelivery MUST be acknowledged within the
// time allowed. Either way the event MUST take effect exactly once: an acknowledged event without
// an effect was dropped (marked as seen although its effect failed). A publication on a broker is
// acknowledged once confirmed: the broker redelivers on its own. A failure that cannot have
// reached the consumer (no failed downstream call; a hooked webhook delivery acknowledged at
// once) tested nothing.
func FailedThenRedelivered(first history.Attempt, f Failure, redeliveries Eventually, effects Count) Result {
	r := failedThenRedelivered(first, f, redeliveries, effects)
	if f.Point == "" {
		return r
	}
	at := " (the handling failed at " + f.Point + ")"
	for i := range r.Anomalies {
		r.Anomalies[i].Message += at
	}
	for i := range r.Unknown {
		r.Unknown[i] += at
	}
	return r
}

// failedThenRedelivered is FailedThenRedelivered without the point named.
func failedThenRedelivered(first history.Attempt, f Failure, redeliveries Eventually, effects Count) Result {
	j := newJudge(consumerProfile)
	switch {
	case !f.Hooked && f.Calls == 0:
		j.unknownf("the consumer made no downstream call for event %s while its downstream was failing: the failure never reached it", effects.Key)
		return j.result()
	case f.Hooked && succeeded(first):
		j.unknownf("the first delivery of event %s was acknowledged (#%d, %d) although the fail_next hook had armed its failure: the hook did not fail the handling", effects.Key, first.Seq, first.Status)
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
		acked = j.redelivered(redeliveries, "the redelivery after the failed handling")
		seqs = append(seqs, lastSeq(redeliveries)...)
	}
	j.eventOnce(effects, acked, fmt.Sprintf(
		"event %s was acknowledged but never took effect: its first handling failed and the redelivery was taken for a duplicate (the event was marked as seen although its effect failed)",
		effects.Key), seqs...)
	return j.result()
}
