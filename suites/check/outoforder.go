package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Versioned is the delivery of one version of an object, and the effects its event left.
type Versioned struct {
	// Version is the object's version the event carries.
	Version int
	// Delivery is how it was delivered.
	Delivery history.Attempt
	// Effects are the event's effects, counted once every delivery was made.
	Effects Count
}

// OutOfOrder judges the events of one object's versions delivered out of order, the newest
// first (out-of-order): every delivery MUST be acknowledged; the newest event MUST take effect
// exactly once and every other at most once (a consumer may discard a stale event); the state
// stored for the object MUST be the newest version's. A lower version in the state means an older
// event overwrote a newer one.
func OutOfOrder(deliveries []Versioned, state Count) Result {
	j := newJudge(consumerProfile)
	if len(deliveries) == 0 {
		j.unknownf("no event was delivered")
		return j.result()
	}
	newest := deliveries[0]
	for _, d := range deliveries {
		if d.Version > newest.Version {
			newest = d
		}
	}
	newestApplied := false
	for i, d := range deliveries {
		acked := j.acked(d.Delivery, fmt.Sprintf("the delivery of version %d (%d of %d)", d.Version, i+1, len(deliveries)))
		if d.Version == newest.Version {
			j.eventEffects(d.Effects, 1, acked, d.Delivery.Seq)
			newestApplied = d.Effects.known() && d.Effects.N == 1
			continue
		}
		if j.counted(d.Effects) && d.Effects.N > 1 {
			j.eventEffects(d.Effects, 1, acked, d.Delivery.Seq)
		}
	}
	if !newestApplied || !j.counted(state) {
		return j.result()
	}
	switch {
	case state.N == newest.Version:
	case state.N <= 0 || state.N > newest.Version:
		j.unknownf("the state observer reads version %d for object %s, which no delivered event carries (1 to %d): it may not read what the consumer stores",
			state.N, state.Ref, newest.Version)
	default:
		an := countAnomaly(reports.KindOlderEventApplied, state, fmt.Sprintf(
			"object %s ends at version %d although version %d was delivered first and took effect: an older event overwrote a newer one",
			state.Ref, state.N, newest.Version), newest.Delivery.Seq)
		for _, d := range deliveries {
			if d.Version == state.N {
				an.Key, an.Seqs = d.Delivery.Key, append(an.Seqs, d.Delivery.Seq)
			}
		}
		j.add(an)
	}
	return j.result()
}
