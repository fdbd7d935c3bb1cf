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
	// BodyErr is the first error re-reading a body a later 2xx answer was to be compared with:
	// the judgement is then unknown.
	BodyErr string
	// PastRetention counts the operations retried past their key's declared retention (a 2xx
	// attempt that ended a retention or more after the operation's first started: the API may
	// have taken it up that late, and its key is as old as its first claim, no older than the
	// first attempt): a new execution is what the contract promises then, and their records and
	// answers are not compared.
	PastRetention int
}

// Throughput is the number of attempts per second over the history's span.
func (r *LoadResult) Throughput() float64 {
	span := r.End.Sub(r.Start)
	if span <= 0 {
		return 0
	}
	return float64(r.Attempts) / span.Seconds()
}

// LoadAttempt is one attempt as the load checker reads it. Body is a handle the checker passes
// to its body function when it must compare a later 2xx answer with the first (-1: no body).
type LoadAttempt struct {
	Seq        int64
	Start, End time.Time
	Status     int
	Outcome    history.Outcome
	BodyHash   [32]byte
	Body       int64
}

// loadOp is what the checker keeps per operation: its first 2xx answer and a tally.
type loadOp struct {
	origSeq    int64
	lastSeq    int64    // the last attempt with a 2xx answer
	origBody   int64    // the handle of the first 2xx answer's body
	firstStart int64    // when its earliest attempt started (Unix nanoseconds): its key is no older
	origHash   [16]byte // the first half of its SHA-256
	successes  int32
	origStatus int16
	late       bool // a 2xx attempt ended a retention or more after firstStart
}

// seqs are the attempts to show for an operation: its first and last 2xx answers.
func (k *loadOp) seqs() []int64 {
	if k.successes == 0 {
		return nil
	}
	if k.lastSeq == k.origSeq {
		return []int64{k.origSeq}
	}
	return []int64{k.origSeq, k.lastSeq}
}

// LoadChecker is Load taken one attempt at a time, its operations named by dense ids (0, 1, ...)
// rather than by key, so that a merge of millions of attempts keeps a few dozen bytes per
// operation and no body: NewLoadChecker, Add per attempt in history order, then Finish.
type LoadChecker struct {
	p         targets.Profile
	retention time.Duration
	body      func(handle int64) ([]byte, error)
	ops       []loadOp
	seen      []bool
	res       *LoadResult
	statuses  [600]int
	ids       []int32 // by anomaly: the operation it is about
	bodyErr   error
	first     []time.Duration
	replay    []time.Duration
}

// NewLoadChecker returns a checker for about n operations of a target that keeps its keys for
// retention (0: not declared); body returns the body behind a handle (a read error makes the
// judgement unknown).
func NewLoadChecker(p targets.Profile, retention time.Duration, n int, body func(handle int64) ([]byte, error)) *LoadChecker {
	return &LoadChecker{p: p, retention: retention, body: body, ops: make([]loadOp, 0, n), seen: make([]bool, 0, n),
		first: make([]time.Duration, 0, n), res: &LoadResult{Statuses: map[int]int{}}}
}

// Add checks the next attempt, of operation id.
func (c *LoadChecker) Add(id int32, a *LoadAttempt) {
	res := c.res
	res.Attempts++
	if res.Start.IsZero() || a.Start.Before(res.Start) {
		res.Start = a.Start
	}
	if a.End.After(res.End) {
		res.End = a.End
	}
	if int(id) >= len(c.ops) {
		n := max(int(id)+1, min(2*len(c.ops), cap(c.ops))) // within the size announced, then doubling
		c.ops = slices.Grow(c.ops, n-len(c.ops))[:n]
		c.seen = slices.Grow(c.seen, n-len(c.seen))[:n]
	}
	if !c.seen[id] {
		c.seen[id] = true
		res.Ops++
	}
	k := &c.ops[id]
	if start := a.Start.UnixNano(); k.firstStart == 0 || start < k.firstStart {
		k.firstStart = start
	}
	switch a.Outcome {
	case history.Unknown:
		res.Unknown++
		return
	case history.Failed: // never sent
		return
	}
	if a.Status >= 0 && a.Status < len(c.statuses) {
		c.statuses[a.Status]++
	} else {
		res.Statuses[a.Status]++
	}
	switch {
	case is2xx(a.Status) && !c.inFlightAnswer(a.Status):
		// The API takes an attempt up between its start and its end, and the key's age is
		// counted from its first claim, after firstStart: only an attempt that ended within the
		// retention surely found the key alive. (Judged by its start, a correct API was accused
		// on a loaded runner: a retry that started 3 s minus a little after the first reached
		// the API after its key had expired.)
		pastRetention := c.retention > 0 && a.End.UnixNano()-k.firstStart >= int64(c.retention)
		k.late = k.late || pastRetention
		if k.successes == 0 {
			k.origSeq, k.origStatus, k.origBody = a.Seq, int16(a.Status), a.Body
			k.origHash = [16]byte(a.BodyHash[:16])
			c.first = append(c.first, a.End.Sub(a.Start))
		} else {
			c.replay = append(c.replay, a.End.Sub(a.Start))
			if what, d := c.differs(k, a); d != "" && !pastRetention {
				c.add(id, reports.Anomaly{Kind: reports.KindReplayDiffs, Message: d, What: what, Seqs: []int64{k.origSeq, a.Seq}})
			}
		}
		k.successes++
		k.lastSeq = a.Seq
	case a.Status >= 500:
		c.add(id, reports.Anomaly{Kind: reports.KindServerError, Message: fmt.Sprintf("an attempt under load got %d", a.Status), Seqs: []int64{a.Seq}})
	case c.p.AcceptsInFlightStatus(a.Status), a.Status == 429:
	default:
		c.add(id, reports.Anomaly{Kind: reports.KindWrongStatus,
			Message: fmt.Sprintf("an attempt under load got %d, neither a 2xx, the in-flight status nor 429", a.Status), Seqs: []int64{a.Seq}})
	}
}

// inFlightAnswer reports a 2xx that is the in-flight answer (in_flight: status-resource), not a
// success: checked only for such a profile, at the cost of a comparison per attempt otherwise.
func (c *LoadChecker) inFlightAnswer(status int) bool {
	return c.p.InFlight == targets.InFlightStatusResource && c.p.InFlightAnswer(status)
}

func (c *LoadChecker) add(id int32, a reports.Anomaly) {
	c.res.Anomalies = append(c.res.Anomalies, a)
	c.ids = append(c.ids, id)
}

// differs says in what (status or body) and how a later 2xx answer differs from the operation's
// first ("" = it does not).
func (c *LoadChecker) differs(k *loadOp, a *LoadAttempt) (what, msg string) {
	if c.p.ReplayReturns != targets.ReplayOriginal && c.p.ReplayReturns != "" {
		return "", "" // a current representation or a reference: not the first answer's bytes
	}
	if a.Status != int(k.origStatus) {
		return "status", fmt.Sprintf("a later 2xx answer has status %d, the first was %d", a.Status, k.origStatus)
	}
	if [16]byte(a.BodyHash[:16]) == k.origHash {
		return "", ""
	}
	orig, err := c.body(k.origBody)
	if err == nil {
		var later []byte
		if later, err = c.body(a.Body); err == nil {
			if paths := CompareBodies(orig, later, c.p.Ignore); len(paths) > 0 {
				return "body", "a later 2xx answer differs from the first at " + strings.Join(paths, ", ")
			}
			return "", ""
		}
	}
	if c.bodyErr == nil {
		c.bodyErr = err
	}
	return "", ""
}

// Finish counts the records of every operation (records(id): the count, and whether there is
// one) and names each anomaly's operation (name(id): its key, operation and tenant), and returns
// the result, its anomalies ordered by kind and key.
func (c *LoadChecker) Finish(records func(id int32) (int, bool), name func(id int32) (key, op, tenant string)) *LoadResult {
	res := c.res
	for i := range c.ops {
		k := &c.ops[i]
		if !c.seen[i] {
			continue
		}
		n, counted := records(int32(i))
		if k.late {
			res.PastRetention++
		}
		switch {
		case !counted: // nothing to check against
		case n > 1 && k.late: // its key may have expired: a second execution is the contract's
		case n > 1:
			c.add(int32(i), reports.Anomaly{Kind: reports.KindDuplicateRecord,
				Message: fmt.Sprintf("%d business records for one operation (%d 2xx answers)", n, k.successes), Seqs: k.seqs()})
		case n == 0 && k.successes > 0:
			c.add(int32(i), reports.Anomaly{Kind: reports.KindMissingRecord,
				Message: fmt.Sprintf("no business record after %d 2xx answers", k.successes), Seqs: k.seqs()})
		}
	}
	for i := range res.Anomalies {
		a := &res.Anomalies[i]
		a.Key, a.Op, a.Tenant = name(c.ids[i])
	}
	for st, n := range c.statuses {
		if n > 0 {
			res.Statuses[st] += n
		}
	}
	if c.bodyErr != nil {
		res.BodyErr = c.bodyErr.Error()
	}
	res.First, res.Replay = latencies(c.first), latencies(c.replay)
	sortAnomalies(res.Anomalies)
	return res
}

// Load checks a load history, operation by operation (an operation is one idempotency
// key). counts holds the business records counted for each key; a key absent from counts is
// not checked for records. For every operation it verifies: exactly one record when some
// answer was a 2xx, at most one otherwise; every later 2xx answer equal to the first (status
// and body, the profile's ignored JSON paths left out); no 5xx; no status other than 2xx,
// the profile's in-flight status and 429. An attempt without an answer (unknown) is never
// held against the target, and neither is a second record or another answer after a 2xx
// attempt that ended the declared retention (0: none) or more after the operation's first started
// (its key may have expired: LoadResult.PastRetention counts them). Load is pure: it reads
// nothing but its arguments.
func Load(attempts iter.Seq[history.Attempt], counts map[string]int, p targets.Profile, retention time.Duration) *LoadResult {
	index := make(map[string]int32, len(counts)) // key -> operation id
	type name struct{ key, op, tenant string }
	var names []name
	var bodies [][]byte // by handle: the bodies of 2xx answers
	c := NewLoadChecker(p, retention, len(counts), func(h int64) ([]byte, error) { return bodies[h], nil })
	for a := range attempts {
		id, seen := index[a.Key]
		if !seen {
			id = int32(len(names))
			index[a.Key] = id
			names = append(names, name{a.Key, a.Op, a.Tenant})
		}
		la := LoadAttempt{Seq: a.Seq, Start: a.Start, End: a.End, Status: a.Status, Outcome: a.Outcome, BodyHash: a.BodyHash, Body: -1}
		if a.Outcome == history.OK && is2xx(a.Status) && !c.inFlightAnswer(a.Status) {
			la.Body = int64(len(bodies))
			bodies = append(bodies, a.RespBody)
		}
		c.Add(id, &la)
	}
	return c.Finish(func(id int32) (int, bool) {
		n, ok := counts[names[id].key]
		return n, ok
	}, func(id int32) (string, string, string) {
		n := names[id]
		return n.key, n.op, n.tenant
	})
}

func (r *LoadResult) add(a reports.Anomaly) { r.Anomalies = append(r.Anomalies, a) }

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
	if r.BodyErr != "" {
		res.Unknown = append(res.Unknown, "a body to compare could not be re-read: "+r.BodyErr)
	}
	if r.Unknown*10 > r.Attempts {
		res.Unknown = append(res.Unknown, fmt.Sprintf("%d of %d attempts got no answer", r.Unknown, r.Attempts))
	}
	if r.PastRetention > 0 {
		res.Observef("%d operations were retried past their key's retention (a loaded machine stretched the load): a second execution of them is not held against the target", r.PastRetention)
	}
	if r.First.N == 0 && r.Attempts > r.Unknown {
		res.Anomalies = append(res.Anomalies, reports.Anomaly{Kind: reports.KindWrongStatus,
			Message: fmt.Sprintf("no operation succeeded under load (statuses %s)", statusCounts(r.Statuses))})
	}
	return res
}
