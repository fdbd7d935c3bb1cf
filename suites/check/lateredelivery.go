package check

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// LateDelivery is a redelivery of an event some time after its first delivery, and the event's
// effects counted after it.
type LateDelivery struct {
	// After is how long after the first delivery it was sent.
	After time.Duration
	// Counted is how long after the first delivery the effects after it were counted: the
	// latest it can have reached the consumer. Zero: not known (After is used).
	Counted time.Duration
	// Delivery is what it got.
	Delivery history.Attempt
	// Effects is the count after it.
	Effects Count
}

// LateRedelivery judges redeliveries of one event at growing delays within the consumer's
// declared dedupe retention (late-redelivery): the first delivery MUST be acknowledged and take
// effect once; every redelivery MUST be acknowledged and MUST NOT take effect again. The first
// redelivery that takes effect again ends the check, with the delay at which the consumer forgot
// the event id. The consumer's retention starts when it records the id, no earlier than the
// first delivery was sent, and a redelivery reached it no later than its effects were counted:
// one counted at or past the retention (a loaded machine delayed it) may have come after the
// consumer rightly forgot, so its effect proves nothing and ends the check with an observation.
func LateRedelivery(first history.Attempt, firstEffects Count, late []LateDelivery, retention time.Duration) Result {
	j := newJudge(consumerProfile)
	acked := j.acked(first, "the first delivery")
	j.eventEffects(firstEffects, 1, acked, first.Seq)
	if len(j.r.Anomalies) > 0 || !acked {
		return j.result()
	}
	for _, r := range late {
		what := fmt.Sprintf("the redelivery %v after the first delivery (dedupe retention %v)", r.After.Round(time.Millisecond), retention)
		acked := j.acked(r.Delivery, what)
		if r.Effects.known() && r.Effects.N > 1 && max(r.Counted, r.After) >= retention {
			j.r.Observef("%s took effect again, but was counted %v after the first delivery, past the retention: not judged",
				what, max(r.Counted, r.After).Round(time.Millisecond))
			break
		}
		if r.Effects.known() && r.Effects.N > 1 {
			j.add(countAnomaly(reports.KindDuplicateRecord, r.Effects, fmt.Sprintf(
				"%s took effect again (%d effects): the consumer forgot the event id before its declared dedupe retention",
				what, r.Effects.N), first.Seq, r.Delivery.Seq))
			break
		}
		j.eventEffects(r.Effects, 1, acked, first.Seq, r.Delivery.Seq)
	}
	return j.result()
}
