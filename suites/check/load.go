package suites

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
)

// Kinds of load anomalies.
const (
	AnomalyDuplicate   = "duplicate"         // more than one business record for one operation
	AnomalyNoRecord    = "no-record"         // a 2xx answer, but no business record
	AnomalyReplayDiffs = "replay-differs"    // a later 2xx answer differs from the first
	Anomaly5xx         = "5xx"               // a server error
	AnomalyStatus      = "unexpected-status" // neither 2xx, nor the in-flight status, nor 429
)

// LoadAnomaly is one violation found in a load history.
type LoadAnomaly struct {
	Kind   string
	Key    string
	Seqs   []int64 // the attempts involved
	Detail string
}

func (a LoadAnomaly) String() string {
	return fmt.Sprintf("%s: key %s: %s (attempts %v)", a.Kind, a.Key, a.Detail, a.Seqs)
}

// Latencies summarises a set of attempt durations.
type Latencies struct {
	N             int
	P50, P90, P99 time.Duration
}

// LoadResult is what CheckLoad finds in a load history.
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
	Anomalies []LoadAnomaly
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

// CheckLoad checks a load history, operation by operation (an operation is one idempotency
// key). counts holds the business records counted for each key; a key absent from counts is
// not checked for records. For every operation it verifies: exactly one record when some
// answer was a 2xx, at most one otherwise; every later 2xx answer equal to the first (status
// and body, the profile's ignored JSON paths left out); no 5xx; no status other than 2xx,
// the profile's in-flight status and 429. An attempt without an answer (unknown) is never
// held against the target. CheckLoad is pure: it reads nothing but its arguments.
func CheckLoad(attempts iter.Seq[history.Attempt], counts map[string]int, p targets.Profile) *LoadResult {
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
			keys = append(keys, loadKey{key: a.Key, records: n, counted: counted})
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
		case a.Status >= 200 && a.Status < 300:
			if k.successes == 0 {
				k.origSeq, k.origStatus, k.origHash, k.origBody = a.Seq, a.Status, a.BodyHash, a.RespBody
				first = append(first, a.Duration())
			} else {
				replay = append(replay, a.Duration())
				if d := k.differs(a, p); d != "" {
					res.add(LoadAnomaly{AnomalyReplayDiffs, a.Key, []int64{k.origSeq, a.Seq}, d})
				}
			}
			k.successes++
			k.lastSeq = a.Seq
		case a.Status >= 500:
			res.add(LoadAnomaly{Anomaly5xx, a.Key, []int64{a.Seq}, fmt.Sprintf("status %d", a.Status)})
		case p.AcceptsInFlightStatus(a.Status), a.Status == 429:
		default:
			res.add(LoadAnomaly{AnomalyStatus, a.Key, []int64{a.Seq}, fmt.Sprintf("status %d", a.Status)})
		}
	}
	res.Ops = len(keys)
	for i := range keys {
		k := &keys[i]
		key, n := k.key, k.records
		switch {
		case !k.counted: // nothing to check against
		case n > 1:
			res.add(LoadAnomaly{AnomalyDuplicate, key, k.seqs(), fmt.Sprintf("%d business records (%d 2xx answers)", n, k.successes)})
		case n == 0 && k.successes > 0:
			res.add(LoadAnomaly{AnomalyNoRecord, key, k.seqs(), fmt.Sprintf("no business record after %d 2xx answers", k.successes)})
		}
	}
	res.First, res.Replay = latencies(first), latencies(replay)
	sort.Slice(res.Anomalies, func(i, j int) bool {
		a, b := res.Anomalies[i], res.Anomalies[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return slices.Compare(a.Seqs, b.Seqs) < 0
	})
	return res
}

func (r *LoadResult) add(a LoadAnomaly) { r.Anomalies = append(r.Anomalies, a) }

// differs says how a later 2xx answer differs from the operation's first ("" = it does not).
func (k *loadKey) differs(a history.Attempt, p targets.Profile) string {
	if a.Status != k.origStatus {
		return fmt.Sprintf("status %d, the first 2xx was %d", a.Status, k.origStatus)
	}
	if a.BodyHash == k.origHash {
		return ""
	}
	if paths := CompareBodies(k.origBody, a.RespBody, p.Ignore); len(paths) > 0 {
		return "the body differs from the first 2xx at " + strings.Join(paths, ", ")
	}
	return ""
}

// latencies summarises durations (reordering them).
func latencies(ds []time.Duration) Latencies {
	slices.Sort(ds)
	return Latencies{N: len(ds), P50: percentile(ds, 50), P90: percentile(ds, 90), P99: percentile(ds, 99)}
}

// AnomalyCounts counts the anomalies by kind, e.g. "duplicate=3, 5xx=1".
func (r *LoadResult) AnomalyCounts() string {
	n := map[string]int{}
	var kinds []string
	for _, a := range r.Anomalies {
		if n[a.Kind] == 0 {
			kinds = append(kinds, a.Kind)
		}
		n[a.Kind]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s=%d", k, n[k])
	}
	return strings.Join(parts, ", ")
}

// StatusCounts renders the status counts in order, e.g. "201=612 409=95".
func (r *LoadResult) StatusCounts() string {
	codes := make([]int, 0, len(r.Statuses))
	for c := range r.Statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d=%d", c, r.Statuses[c])
	}
	return strings.Join(parts, " ")
}
