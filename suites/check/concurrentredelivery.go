package check

import (
	"fmt"
	"slices"

	"github.com/retrysafe/retrysafe/targets/history"
)

// ConcurrentRedelivery judges K deliveries of one event released together and then the
// redeliveries of the event until one was acknowledged (concurrent-redelivery). Each delivery of
// the burst MUST be acknowledged (2xx) or answered with the in-flight status while another
// delivery holds the event's claim; an event none of whose deliveries was acknowledged MUST be
// acknowledged by a redelivery within the time allowed (the lock timeout plus a margin); the event
// MUST take effect exactly once. Publications on a broker are acknowledged once confirmed (the
// broker redelivers on its own).
func ConcurrentRedelivery(burst []history.Attempt, redeliveries Eventually, effects Count) Result {
	j := newJudge(consumerProfile)
	acked, inFlight := false, 0
	for i, a := range burst {
		what := fmt.Sprintf("delivery %d of %d released together", i+1, len(burst))
		if !isPublished(a) && a.Outcome == history.OK && InFlight(a.Status) {
			inFlight++
			continue
		}
		if j.acked(a, what) {
			acked = true
		}
	}
	seqs := seqsOf(burst)
	slices.Sort(seqs)
	if len(redeliveries.Attempts) > 0 {
		if j.redelivered(redeliveries, "the redelivery of the event after the burst") {
			acked = true
		}
		seqs = append(seqs, lastSeq(redeliveries)...)
	} else if inFlight > 0 && !acked {
		j.unknownf("no delivery of event %s was acknowledged and it was not redelivered", effects.Key)
	}
	j.eventEffects(effects, 1, acked, seqs...)
	return j.result()
}
