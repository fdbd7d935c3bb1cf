package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets/history"
)

// CrashedEvent is one event of crash-under-delivery: its deliveries while the consumer was
// being killed and restarted (some cut by a kill: their answers are unknown, never held against
// the consumer), the redeliveries at the end until one was acknowledged (webhooks; none when an
// earlier delivery was), and its effects once everything settled.
type CrashedEvent struct {
	Deliveries []history.Attempt
	Again      Eventually
	Effects    Count
}

// CrashUnderDelivery judges a stream of events whose consumers were SIGKILLed again and again
// while they handled it, each time restarted, with events already acknowledged redelivered
// after each restart (crash-under-delivery). Every event MUST take effect exactly once: more is
// a duplicate record (a redelivery applied again: the dedupe record was lost or written apart
// from the effect); none, once a delivery of it was acknowledged, is a dropped event (marked
// seen, or acknowledged, before its effect committed). kills counts the kills that hit the
// stream: none tested nothing. On a broker (settled: whether it held nothing at the end) a
// publication the broker confirmed counts as acknowledged once the broker settled.
func CrashUnderDelivery(events []CrashedEvent, kills int, settled bool) Result {
	j := newJudge(consumerProfile)
	if kills == 0 {
		return Unknownf("no kill hit the stream of events")
	}
	for _, ev := range events {
		acked := false
		for _, a := range ev.Deliveries {
			if isPublished(a) && a.Outcome == history.OK && settled || succeeded(a) {
				acked = true
			}
		}
		seqs := seqsOf(ev.Deliveries)
		if !acked && len(ev.Again.Attempts) > 0 {
			acked = j.redelivered(ev.Again, fmt.Sprintf("the redelivery of event %s after the kills", ev.Effects.Key))
			seqs = append(seqs, lastSeq(ev.Again)...)
		}
		j.eventOnce(ev.Effects, acked, fmt.Sprintf(
			"event %s was acknowledged but never took effect: a kill in the middle of its handling lost the effect, and what the consumer had recorded (or acknowledged) made its redelivery a duplicate",
			ev.Effects.Key), seqs...)
	}
	return j.result()
}
