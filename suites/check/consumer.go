package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// What the consumer checkers share: a delivery is acknowledged when a webhook consumer answers
// it with a 2xx, or, for a queue consumer, when the broker confirmed its publication (the
// consumer's own ack is the broker's business: the effects tell what came of it).

// published is the Method of a delivery published on a broker.
const published = "PUBLISH"

// acked judges one delivery: a webhook delivery not answered with a 2xx is a wrong-status (or
// server-error) anomaly; a publication the broker did not confirm makes the result unknown.
func (j *judge) acked(a history.Attempt, what string) bool {
	if !j.answered(a, what) {
		return false
	}
	if isPublished(a) || is2xx(a.Status) {
		return true
	}
	j.wrongStatus(a, "a 2xx acknowledgement", what)
	return false
}

// eventEffects checks an event's effects: more than want is a duplicate; fewer, when some
// delivery of it was acknowledged, is a dropped event (acknowledged, never applied).
func (j *judge) eventEffects(c Count, want int, acked bool, seqs ...int64) {
	if !j.counted(c) {
		return
	}
	switch {
	case c.N > want:
		j.add(countAnomaly(reports.KindDuplicateRecord, c, fmt.Sprintf("event %s took effect %d times, want %d", c.Key, c.N, want), seqs...))
	case c.N < want && acked:
		j.add(countAnomaly(reports.KindDroppedEvent, c, fmt.Sprintf(
			"event %s was acknowledged but took effect %d times, want %d: the event was dropped", c.Key, c.N, want), seqs...))
	case c.N < want:
		j.unknownf("event %s was never acknowledged and took effect %d times", c.Key, c.N)
	}
}

// eventOnce checks that an event took effect exactly once, as eventEffects does, but words a
// dropped event (acknowledged, no effect) as dropped: the property knows how it was dropped.
func (j *judge) eventOnce(c Count, acked bool, dropped string, seqs ...int64) {
	if acked && c.known() && c.N == 0 {
		j.add(countAnomaly(reports.KindDroppedEvent, c, dropped, seqs...))
		return
	}
	j.eventEffects(c, 1, acked, seqs...)
}

// seqsOf returns the attempts' numbers.
func seqsOf(as []history.Attempt) []int64 {
	out := make([]int64, 0, len(as))
	for _, a := range as {
		out = append(out, a.Seq)
	}
	return out
}

// Redelivery judges one event delivered several times in sequence (redelivery): every delivery
// MUST be acknowledged, and the event MUST take effect exactly once.
func Redelivery(deliveries []history.Attempt, effects Count) Result {
	j := newJudge(consumerProfile)
	acked := false
	for i, a := range deliveries {
		if j.acked(a, fmt.Sprintf("delivery %d of %d", i+1, len(deliveries))) {
			acked = true
		}
	}
	j.eventEffects(effects, 1, acked, seqsOf(deliveries)...)
	return j.result()
}

// InFlight reports whether a consumer's answer is the in-flight status: another delivery of the
// event holds its claim, and the provider delivers it again later.
func InFlight(status int) bool { return consumerProfile.AcceptsInFlightStatus(status) }

// isPublished reports whether a is a publication on a broker (not a webhook delivery).
func isPublished(a history.Attempt) bool { return a.Method == published }

// redelivered judges the redeliveries of an event that was not acknowledged: they MUST end with
// a 2xx within the time allowed. A consumer that still answers the in-flight status at the end
// holds a claim nothing releases (stuck-key); another answer is a wrong-status or server-error
// anomaly; redeliveries that never got an answer leave the result unknown.
func (j *judge) redelivered(ev Eventually, what string) bool {
	_, ok := j.completes(ev, what, succeeded)
	return ok
}

// lastSeq returns the number of the last attempt of ev (nil when there is none).
func lastSeq(ev Eventually) []int64 {
	if len(ev.Attempts) == 0 {
		return nil
	}
	return []int64{ev.Attempts[len(ev.Attempts)-1].Seq}
}
