package check

import (
	"fmt"
	"iter"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// LoadEvent is one event of a delivery load: the object it is about and the object's version.
type LoadEvent struct {
	Object  string
	Version int
}

// DeliveryLoadResult is what DeliveryLoad finds in the history of a delivery load.
type DeliveryLoadResult struct {
	// Attempts, Events and Objects count deliveries, events (ids) and objects; Unknown the
	// deliveries without an answer.
	Attempts, Events, Objects, Unknown int
	// Acked counts the events at least one delivery of which was acknowledged.
	Acked int
	// Statuses counts the webhook answers by status.
	Statuses map[int]int
	// Anomalies are the violations, ordered by kind and event.
	Anomalies []reports.Anomaly
}

// loadEventTally is what DeliveryLoad keeps per event.
type loadEventTally struct {
	op, key    string
	acked      bool
	firstSeq   int64
	lastAck    int64 // the last acknowledged delivery
	pending5xx int64 // a 5xx no later delivery acknowledged (0 = none)
}

// DeliveryLoad checks the history of a delivery load, event by event (an event is one event id,
// the attempts' Key). events says which object and version each event is; effects holds the
// effects counted for each event and states the version stored for each object (an event or
// object absent from them is not checked). For every event it verifies: exactly one effect when
// some delivery was acknowledged (a webhook's 2xx, a publication the broker confirmed), at most
// one otherwise; every 5xx followed by a later acknowledged delivery of the event; no answer but a
// 2xx, the in-flight status, 429 or a 5xx. For every object: the stored version is at least the
// newest version that took effect (a lower one means an older event overwrote it). A delivery
// without an answer is never held against the consumer. DeliveryLoad is pure.
func DeliveryLoad(attempts iter.Seq[history.Attempt], events map[string]LoadEvent, effects, states map[string]int) *DeliveryLoadResult {
	res := &DeliveryLoadResult{Statuses: map[int]int{}}
	index := make(map[string]int, len(events))
	tallies := make([]loadEventTally, 0, len(events))
	for a := range attempts {
		res.Attempts++
		i, seen := index[a.Key]
		if !seen {
			i = len(tallies)
			index[a.Key] = i
			tallies = append(tallies, loadEventTally{op: a.Op, key: a.Key, firstSeq: a.Seq})
		}
		t := &tallies[i]
		switch a.Outcome {
		case history.Unknown:
			res.Unknown++
			continue
		case history.Failed:
			continue
		}
		if isPublished(a) {
			t.acked, t.lastAck, t.pending5xx = true, a.Seq, 0
			continue
		}
		res.Statuses[a.Status]++
		switch {
		case is2xx(a.Status):
			t.acked, t.lastAck, t.pending5xx = true, a.Seq, 0
		case a.Status >= 500:
			t.pending5xx = a.Seq
		case InFlight(a.Status), a.Status == 429:
		default:
			res.add(t.anomaly(reports.KindWrongStatus, fmt.Sprintf(
				"a delivery under load got %d, neither a 2xx, the in-flight status, 429 nor a 5xx", a.Status), a.Seq))
		}
	}
	res.Events = len(tallies)
	newest := map[string]*newestApplied{}
	for i := range tallies {
		t := &tallies[i]
		if t.acked {
			res.Acked++
		}
		if t.pending5xx != 0 {
			res.add(t.anomaly(reports.KindServerError, "a delivery under load got a 5xx and no later delivery of the event was acknowledged", t.pending5xx))
		}
		n, counted := effects[t.key]
		switch {
		case !counted:
		case n > 1:
			res.add(t.anomaly(reports.KindDuplicateRecord, fmt.Sprintf("event %s took effect %d times, want 1", t.key, n), t.seqs()...))
		case n == 0 && t.acked:
			res.add(t.anomaly(reports.KindDroppedEvent, fmt.Sprintf("event %s was acknowledged but never took effect", t.key), t.seqs()...))
		}
		ev, known := events[t.key]
		if !known || !counted || n == 0 {
			continue
		}
		if cur := newest[ev.Object]; cur == nil || ev.Version > cur.version {
			newest[ev.Object] = &newestApplied{version: ev.Version, tally: t}
		}
	}
	res.Objects = len(newest)
	for obj, nw := range newest {
		v, counted := states[obj]
		if counted && v < nw.version {
			an := nw.tally.anomaly(reports.KindOlderEventApplied, fmt.Sprintf(
				"object %s ends at version %d although version %d (event %s) took effect: an older event overwrote a newer one",
				obj, v, nw.version, nw.tally.key), nw.tally.seqs()...)
			res.add(an)
		}
	}
	sortAnomalies(res.Anomalies)
	return res
}

// newestApplied is the newest version of an object that took effect, and its event.
type newestApplied struct {
	version int
	tally   *loadEventTally
}

func (r *DeliveryLoadResult) add(a reports.Anomaly) { r.Anomalies = append(r.Anomalies, a) }

// anomaly returns an anomaly about the event.
func (t *loadEventTally) anomaly(kind reports.Kind, msg string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: kind, Op: t.op, Key: t.key, Seqs: seqs, Message: msg}
}

// seqs are the deliveries to show for an event: its first and its last acknowledged.
func (t *loadEventTally) seqs() []int64 {
	if t.lastAck == 0 || t.lastAck == t.firstSeq {
		return []int64{t.firstSeq}
	}
	return []int64{t.firstSeq, t.lastAck}
}

// Judge is the delivery-load property's judgement: its anomalies; unknown when the effects of
// some events or the states of some objects could not be counted (uncounted, the first error in
// countErr) or more than a tenth of the deliveries got no answer; a wrong-status anomaly when no
// event was acknowledged at all.
func (r *DeliveryLoadResult) Judge(uncounted int, countErr string) Result {
	res := Result{Anomalies: r.Anomalies}
	if uncounted > 0 {
		res.Unknown = append(res.Unknown, fmt.Sprintf("the effects or states of %d events or objects could not be counted, e.g. %s", uncounted, countErr))
	}
	if r.Unknown*10 > r.Attempts {
		res.Unknown = append(res.Unknown, fmt.Sprintf("%d of %d deliveries got no answer", r.Unknown, r.Attempts))
	}
	if r.Acked == 0 && r.Attempts > r.Unknown {
		res.Anomalies = append(res.Anomalies, reports.Anomaly{Kind: reports.KindWrongStatus,
			Message: fmt.Sprintf("no event was acknowledged under load (statuses %s)", statusCounts(r.Statuses))})
	}
	if r.Attempts == 0 {
		res.Unknown = append(res.Unknown, "no event was delivered")
	}
	return res
}

// AnomalyCounts counts the anomalies by kind, e.g. "duplicate-record=3".
func (r *DeliveryLoadResult) AnomalyCounts() string { return reports.KindCounts(r.Anomalies) }

// StatusCounts renders the status counts in order, e.g. "200=612 409=95".
func (r *DeliveryLoadResult) StatusCounts() string { return statusCounts(r.Statuses) }
