package check

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Latencies summarises a set of attempt durations.
type Latencies struct {
	N             int
	P50, P90, P99 time.Duration
}

// LoadResult is what Load finds in a load history.
type LoadResult struct {
	// Attempts, Ops and Unknown count attempts, operations (keys) and attempts without an
	// answer.
	Attempts, Ops, Unknown int
	// Statuses counts the answers by status.
	Statuses map[int]int
	// Start and End bound the history: the first attempt's start, the last one's end.
	Start, End time.Time
	// First are the latencies of first executions (each operation's first 2xx answer),
	// Replay those of every later 2xx answer.
	First, Replay Latencies
	// Anomalies are the violations, ordered by kind and key.
	Anomalies []reports.Anomaly
}

// Throughput is the number of attempts per second over the history's span.
func (r *LoadResult) Throughput() float64 {
	span := r.End.Sub(r.Start)
	if span <= 0 {
		return 0
	}
	return float64(r.Attempts) / span.Seconds()
}

// loadKey is what the checker keeps per operation: its first 2xx answer and a tally.
type loadKey struct {
	origSeq    int64
	origStatus int
	origHash   [32]byte
	origBody   []byte
	lastSeq    int64 // the last attempt with a 2xx answer
	successes  int
	key        string
	op, tenant string
	records    int  // business records counted
	counted    bool // records holds a count
}

// seqs are the attempts to show for an operation: its first and last 2xx answers.
func (k *loadKey) seqs() []int64 {
	if k.successes == 0 {
		return nil
	}
	if k.lastSeq == k.origSeq {
		return []int64{k.origSeq}
	}
	return []int64{k.origSeq, k.lastSeq}
}

// Load checks a load history, operation by operation (an operation is one idempotency
// key). counts holds the business records counted for each key; a key absent from counts is
// not checked for records. For every operation it verifies: exactly one record when some
// answer was a 2xx, at most one otherwise; every later 2xx answer equal to the first (status
// and body, the profile's ignored JSON paths left out); no 5xx; no status other than 2xx,
// the profile's in-flight status and 429. An attempt without an answer (unknown) is never
// held against the target. Load is pure: it reads nothing but its arguments.
func Load(attempts iter.Seq[history.Attempt], counts map[string]int, p targets.Profile) *LoadResult {
	res := &LoadResult{Statuses: map[int]int{}}
	index := make(map[string]int, len(counts)) // key -> position in keys
	keys := make([]loadKey, 0, len(counts))
	var first, replay []time.Duration
	for a := range attempts {
		res.Attempts++
		if res.Start.IsZero() || a.Start.Before(res.Start) {
			res.Start = a.Start
		}
		if a.End.After(res.End) {
			res.End = a.End
		}
		i, seen := index[a.Key]
		if !seen {
			i = len(keys)
			index[a.Key] = i
			n, counted := counts[a.Key]
			keys = append(keys, loadKey{key: a.Key, op: a.Op, tenant: a.Tenant, records: n, counted: counted})
		}
		k := &keys[i]
		switch a.Outcome {
		case history.Unknown:
			res.Unknown++
			continue
		case history.Failed: // never sent
			continue
		}
		res.Statuses[a.Status]++
		switch {
		case is2xx(a.Status):
			if k.successes == 0 {
				k.origSeq, k.origStatus, k.origHash, k.origBody = a.Seq, a.Status, a.BodyHash, a.RespBody
				first = append(first, a.Duration())
			} else {
				replay = append(replay, a.Duration())
				if what, d := k.differs(a, p); d != "" {
					an := k.anomaly(reports.KindReplayDiffs, d, k.origSeq, a.Seq)
					an.What = what
					res.add(an)
				}
			}
			k.successes++
			k.lastSeq = a.Seq
		case a.Status >= 500:
			res.add(k.anomaly(reports.KindServerError, fmt.Sprintf("an attempt under load got %d", a.Status), a.Seq))
		case p.AcceptsInFlightStatus(a.Status), a.Status == 429:
		default:
			res.add(k.anomaly(reports.KindWrongStatus, fmt.Sprintf("an attempt under load got %d, neither a 2xx, the in-flight status nor 429", a.Status), a.Seq))
		}
	}
	res.Ops = len(keys)
	for i := range keys {
		k := &keys[i]
		n := k.records
		switch {
		case !k.counted: // nothing to check against
		case n > 1:
			res.add(k.anomaly(reports.KindDuplicateRecord, fmt.Sprintf("%d business records for one operation (%d 2xx answers)", n, k.successes), k.seqs()...))
		case n == 0 && k.successes > 0:
			res.add(k.anomaly(reports.KindMissingRecord, fmt.Sprintf("no business record after %d 2xx answers", k.successes), k.seqs()...))
		}
	}
	res.First, res.Replay = latencies(first), latencies(replay)
	sortAnomalies(res.Anomalies)
	return res
}

func (r *LoadResult) add(a reports.Anomaly) { r.Anomalies = append(r.Anomalies, a) }

// anomaly returns an anomaly about the operation.
func (k *loadKey) anomaly(kind reports.Kind, msg string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: kind, Op: k.op, Tenant: k.tenant, Key: k.key, Seqs: seqs, Message: msg}
}

// differs says in what (status or body) and how a later 2xx answer differs from the operation's
// first ("" = it does not).
func (k *loadKey) differs(a history.Attempt, p targets.Profile) (what, msg string) {
	if a.Status != k.origStatus {
		return "status", fmt.Sprintf("a later 2xx answer has status %d, the first was %d", a.Status, k.origStatus)
	}
	if a.BodyHash == k.origHash {
		return "", ""
	}
	if paths := CompareBodies(k.origBody, a.RespBody, p.Ignore); len(paths) > 0 {
		return "body", "a later 2xx answer differs from the first at " + strings.Join(paths, ", ")
	}
	return "", ""
}

// latencies summarises durations (reordering them).
func latencies(ds []time.Duration) Latencies {
	slices.Sort(ds)
	return Latencies{N: len(ds), P50: Percentile(ds, 50), P90: Percentile(ds, 90), P99: Percentile(ds, 99)}
}

// AnomalyCounts counts the anomalies by kind, e.g. "duplicate-record=3, server-error=1".
func (r *LoadResult) AnomalyCounts() string { return reports.KindCounts(r.Anomalies) }

// StatusCounts renders the status counts in order, e.g. "201=612 409=95".
func (r *LoadResult) StatusCounts() string { return statusCounts(r.Statuses) }

// sortAnomalies orders a load's anomalies by kind (in reports.Kinds order), key and attempts.
func sortAnomalies(as []reports.Anomaly) {
	sort.Slice(as, func(i, j int) bool {
		a, b := as[i], as[j]
		if a.Kind != b.Kind {
			return slices.Index(reports.Kinds, a.Kind) < slices.Index(reports.Kinds, b.Kind)
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return slices.Compare(a.Seqs, b.Seqs) < 0
	})
}

// Percentile returns the p-th percentile (nearest rank) of sorted durations; 0 when empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Judge is the load property's judgement of a checked history: its anomalies; unknown when the
// records of some operations could not be counted (uncounted, the first error in countErr) or
// more than a tenth of the attempts got no answer; a wrong-status anomaly when no operation
// succeeded at all.
func (r *LoadResult) Judge(uncounted int, countErr string) Result {
	res := Result{Anomalies: r.Anomalies}
	if uncounted > 0 {
		res.Unknown = append(res.Unknown, fmt.Sprintf("the records of %d operations could not be counted, e.g. %s", uncounted, countErr))
	}
	if r.Unknown*10 > r.Attempts {
		res.Unknown = append(res.Unknown, fmt.Sprintf("%d of %d attempts got no answer", r.Unknown, r.Attempts))
	}
	if r.First.N == 0 && r.Attempts > r.Unknown {
		res.Anomalies = append(res.Anomalies, reports.Anomaly{Kind: reports.KindWrongStatus,
			Message: fmt.Sprintf("no operation succeeded under load (statuses %s)", statusCounts(r.Statuses))})
	}
	return res
}
