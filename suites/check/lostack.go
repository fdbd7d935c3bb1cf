package check

import (
	"github.com/retrysafe/retrysafe/targets/history"
)

// LostAck judges an event whose acknowledgement was cut on its way back to the provider, and
// the provider's redeliveries until one was acknowledged (lost-ack). lost is the delivery whose
// answer was cut; processed counts the event's effects once the consumer had processed it,
// before any redelivery. A redelivery MUST be acknowledged (2xx) within the time allowed and the
// event MUST take effect exactly once.
func LostAck(lost history.Attempt, processed Count, redeliveries Eventually, effects Count) Result {
	j := newJudge(consumerProfile)
	if lost.Outcome == history.OK {
		j.unknownf("the fault did not cut the answer to delivery #%d (it got %d)", lost.Seq, lost.Status)
		return j.result()
	}
	if !j.counted(processed) {
		return j.result()
	}
	if processed.N == 0 {
		j.unknownf("the delivery whose answer was cut (#%d) never took effect: it may have been cut before it reached the consumer", lost.Seq)
		return j.result()
	}
	acked := j.redelivered(redeliveries, "the redelivery after the lost acknowledgement")
	j.eventEffects(effects, 1, acked, append([]int64{lost.Seq}, lastSeq(redeliveries)...)...)
	return j.result()
}
