package framework

// A shard of a sharded load: the baseline (sent by Open), a wait for the agreed start, this
// shard's share of the run's load plan, and the shard file. A shard forms no verdict: merge
// judges every shard's attempts as one history (cmd/retrysafe merge.go).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets/history"
)

// ShardOptions say where and when a shard runs.
type ShardOptions struct {
	// StartAt is when every shard starts its load; Skew how late a shard may be to it.
	StartAt time.Time
	Skew    time.Duration
	// Out is the folder the shard file goes to.
	Out string
	// TargetSHA256 is the hex SHA-256 of the target file, for merge to match.
	TargetSHA256 string
	// Unlimited sends as fast as Settings.LoadWorkers go, for Settings.LoadDuration, instead of
	// at Settings.LoadRate (a benchmark's CPU per request; the plan then dates no hit).
	Unlimited bool
}

// ErrLateStart is the error of a shard that would start its load later than StartAt + Skew:
// its window would not overlap the others'.
var ErrLateStart = errors.New("too late to start")

// RunShard waits for the start, sends this shard's share of the load plan and writes the shard
// file. It returns the file's path and manifest; the manifest says whether the shard sent its
// share (Complete) and, if not, why. The error is that of a shard that could not start (late) or
// could not write its file.
func (h *Harness) RunShard(ctx context.Context, o ShardOptions) (string, *shardfile.Manifest, error) {
	e := h.env
	sh := e.Settings.Shard
	if sh == nil {
		return "", nil, errors.New("not a shard: Settings.Shard is nil")
	}
	if late := time.Since(o.StartAt); late > o.Skew {
		return "", nil, fmt.Errorf("%w: it is %v after --start-at %s, more than --start-skew %v (the set-up took too long, or the start time is in the past)",
			ErrLateStart, late.Round(time.Millisecond), o.StartAt.Format(time.RFC3339), o.Skew)
	}
	s := e.Session(ctx)
	m := &shardfile.Manifest{Run: e.Settings.RunID, Shard: sh.I, Shards: sh.N, Seed: e.Settings.Seed,
		TargetSHA256: o.TargetSHA256, PlannedStart: o.StartAt, PlannedEnd: o.StartAt.Add(e.Settings.LoadDuration),
		Rate: e.Settings.LoadRate, Limits: e.Limits}
	if !s.WaitUntil("the shared start (--start-at "+o.StartAt.Format(time.RFC3339)+")", o.StartAt) {
		m.Incomplete = "interrupted before the start"
		path, err := h.writeShard(o, m, nil, nil)
		return path, m, err
	}
	rate := e.Settings.LoadRate
	if o.Unlimited {
		rate = 0
	}
	run := s.LoadAttack(rate, e.Settings.LoadDuration)
	m.Planned, m.Hits = run.Planned, int64(run.Hits())
	s.Settle() // an asynchronous API's records exist once its operations are done: the merge counts them
	unsettled := len(s.settledResult().Anomalies)
	ops, attempts, failed := h.shardAttempts(run)
	switch {
	case ctx.Err() != nil:
		m.Incomplete = fmt.Sprintf("interrupted after %d of %d hits", m.Hits, m.Planned)
	case unsettled > 0:
		m.Incomplete = fmt.Sprintf("%d asynchronous operations were not done within their settle", unsettled)
	case run.Err != nil:
		m.Incomplete = "the load could not be generated: " + run.Err.Error()
	case m.Hits < m.Planned:
		m.Incomplete = fmt.Sprintf("sent %d of its %d hits", m.Hits, m.Planned)
	case failed*10 > len(attempts):
		m.Incomplete = fmt.Sprintf("%d of %d attempts could not be sent", failed, len(attempts))
	default:
		m.Complete = true
	}
	if len(attempts) > 0 {
		m.Start, m.End = attempts[0].Start, attempts[0].End
		for _, a := range attempts {
			if a.End.After(m.End) {
				m.End = a.End
			}
		}
	}
	m.Operations, m.Figures = len(ops), run.shardFigures(attempts)
	path, err := h.writeShard(o, m, ops, attempts)
	return path, m, err
}

// shardAttempts are a load run's operation table and attempts as a shard file holds them (the
// attempts ordered by start), and how many attempts were never sent.
func (h *Harness) shardAttempts(run *LoadRun) ([]shardfile.Operation, []shardfile.Attempt, int) {
	e := h.env
	hostIndex := map[string]int{}
	for i, in := range e.Target.Instances {
		hostIndex[in.URL.Host] = i
	}
	var ops []shardfile.Operation
	keyIndex := map[string]int{}
	for _, op := range run.plan.operations() {
		row := shardfile.Operation{Index: len(ops), Def: op.Def.Name, Ref: op.Ref, Key: op.Key, Owner: run.plan.owners[op]}
		if op.Tenant != nil {
			row.Tenant = op.Tenant.Name
		}
		keyIndex[op.Key] = row.Index
		ops = append(ops, row)
	}
	var attempts []shardfile.Attempt
	failed := 0
	for a := range e.History.After(run.from) {
		i, ok := keyIndex[a.Key]
		if !ok {
			continue // not an attempt of the load
		}
		if a.Outcome == history.Failed {
			failed++
		}
		attempts = append(attempts, shardfile.Attempt{Seq: a.Seq, Op: i, Instance: hostIndex[a.Instance],
			Start: a.Start, End: a.End, Status: a.Status, Outcome: a.Outcome, BodyHash: a.BodyHash,
			Body: a.RespBody, Truncated: a.Truncated, Err: a.Err, Note: a.Note})
	}
	slices.SortStableFunc(attempts, func(a, b shardfile.Attempt) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Seq, b.Seq))
	})
	return ops, attempts, failed
}

// writeShard writes the shard file (m.Attempts set to the attempts written).
func (h *Harness) writeShard(o ShardOptions, m *shardfile.Manifest, ops []shardfile.Operation, attempts []shardfile.Attempt) (string, error) {
	e := h.env
	hd := shardfile.Header{Run: m.Run, Shard: m.Shard, Shards: m.Shards}
	for _, in := range e.Target.Instances {
		hd.Instances = append(hd.Instances, in.URL.Host)
	}
	return shardfile.Write(o.Out, hd, ops, slices.Values(attempts), e.History.Events(), m)
}

// shardFigures are a shard's load figures: its hits by kind and its answers by status.
func (r *LoadRun) shardFigures(attempts []shardfile.Attempt) map[string]string {
	statuses := &check.LoadResult{Statuses: map[int]int{}}
	for _, a := range attempts {
		if a.Outcome == history.OK {
			statuses.Statuses[a.Status]++
		}
	}
	return map[string]string{
		"hits":                  strconv.Itoa(r.Hits()),
		"fresh":                 strconv.Itoa(r.Fresh),
		"concurrent_duplicates": strconv.Itoa(r.Pairs),
		"sequential_retries":    strconv.Itoa(r.Retries),
		"cross_shard_twins":     strconv.Itoa(r.Twins),
		"attempts":              strconv.Itoa(len(attempts)),
		"statuses":              cmp.Or(statuses.StatusCounts(), "none"),
		"attack":                Millis(r.Attack),
	}
}
