package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Forgery is one forged delivery of an event and what became of it, then a correctly signed
// delivery of the same event.
type Forgery struct {
	// What says how the delivery was forged ("an unsigned delivery", say).
	What string
	// Delivery is the forged delivery; Effects the event's effects after it.
	Delivery history.Attempt
	Effects  Count
	// Valid is the correctly signed delivery of the same event sent after it; ValidEffects the
	// event's effects after that.
	Valid        history.Attempt
	ValidEffects Count
}

// SignatureForged judges a forged delivery (signature): it MUST be rejected with a 4xx and leave
// no effect; the correctly signed delivery of the same event that follows MUST then be
// acknowledged and take effect once (a rejected forgery must not use up the event id).
func SignatureForged(f Forgery) Result {
	j := newJudge(consumerProfile)
	if j.answered(f.Delivery, f.What) {
		counted := j.counted(f.Effects)
		status := f.Delivery.Status
		switch {
		case is2xx(status):
			j.add(anomaly(reports.KindForgedEventAccepted, f.Delivery, fmt.Sprintf(
				"%s was accepted with %d (effects: %d)", f.What, status, f.Effects.N), f.Delivery.Seq))
		case counted && f.Effects.N > 0:
			j.add(countAnomaly(reports.KindForgedEventAccepted, f.Effects, fmt.Sprintf(
				"%s was answered %d but took effect (effects: %d)", f.What, status, f.Effects.N), f.Delivery.Seq))
		case status < 400 || status > 499:
			j.wrongStatus(f.Delivery, "a 4xx rejection", f.What)
		}
	}
	if f.Valid.Outcome == "" {
		return j.result()
	}
	acked := j.acked(f.Valid, "the correctly signed delivery after "+f.What)
	// Once the forgery failed the check, the valid delivery adds only a drop or a duplicate.
	if (acked && f.ValidEffects.N == 0) || f.ValidEffects.N > 1 || len(j.r.Anomalies) == 0 {
		j.eventOnce(f.ValidEffects, acked, fmt.Sprintf(
			"the correctly signed delivery of event %s after %s was acknowledged and never took effect: the rejected forgery used up the event id",
			f.ValidEffects.Key, f.What), f.Delivery.Seq, f.Valid.Seq)
	}
	return j.result()
}

// SignatureValid judges a correctly signed delivery (signature): it MUST be acknowledged (2xx)
// and take effect exactly once.
func SignatureValid(delivery history.Attempt, effects Count) Result {
	j := newJudge(consumerProfile)
	acked := j.acked(delivery, "a correctly signed delivery")
	j.eventEffects(effects, 1, acked, delivery.Seq)
	return j.result()
}
