package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets/history"
)

// EventCrashAfterClaim judges an event whose consumer was SIGKILLed between claiming it and
// applying its effect, restarted, and redelivered the event until a delivery was acknowledged
// (event-crash-after-claim). first is the delivery the kill cut short. A redelivery MUST be
// acknowledged within the time allowed (the consumer's lock timeout plus a margin: the dead
// delivery's claim is taken over), and the event MUST take effect exactly once. An event
// acknowledged with no effect is a dropped event: the claim survived the crash, the effect did
// not, and the redelivery was taken for a duplicate.
func EventCrashAfterClaim(first history.Attempt, redeliveries Eventually, effects Count) Result {
	j := newJudge(consumerProfile)
	acked := succeeded(first) // answered before the kill: its effect must be there
	seqs := []int64{first.Seq}
	if !acked {
		acked = j.redelivered(redeliveries, "the redelivery after the restart")
		seqs = append(seqs, lastSeq(redeliveries)...)
	}
	j.eventOnce(effects, acked, fmt.Sprintf(
		"event %s was acknowledged after the restart but never took effect: its claim outlived the crash without its effect, and the redelivery was taken for a duplicate",
		effects.Key), seqs...)
	return j.result()
}
