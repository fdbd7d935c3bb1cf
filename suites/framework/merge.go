package framework

// The judgement of a sharded load: every shard's attempts merged into one history (a streaming
// k-way merge by start time), the records of every operation counted once, the load checker run
// over the whole, every anomaly naming the shards and local sequence numbers of its attempts.

import (
	"container/heap"
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets/history"
)

// LoadProperty names the load property, the one property a sharded run judges.
const LoadProperty = "load"

// MergeSkip is why merge reports every other property as skipped.
const MergeSkip = "not judged by merge: a sharded run sends the baseline and the load only (run the other properties with a normal retrysafe run)"

// maxPlotPoints bounds the attempts the merged load plot draws; beyond, it draws an even sample.
const maxPlotPoints = 200_000

// Merge judges a complete set of shard files (checked by shardfile.CheckSet, ordered by shard) as
// one load run, and returns the run's Result: the load property judged, every other property
// skipped with MergeSkip.
func (h *Harness) Merge(ctx context.Context, files []*shardfile.File) *Result {
	e := h.env
	var outcomes []*Outcome
	judged := false
	for _, sp := range e.Specs() {
		if sp.Property.Name == LoadProperty && sp.Skip == "" && !judged {
			judged = true
			text := fmt.Sprintf("%d shards merged: one record per operation, equal replays, no 5xx", len(files))
			outcomes = append(outcomes, e.RunSpec(ctx, sp.Property.Spec(text, func(s *S) check.Result { return s.mergeLoad(files) })))
			continue
		}
		skipped := *sp
		if skipped.Skip == "" {
			skipped.Skip = MergeSkip
		}
		outcomes = append(outcomes, e.RunSpec(ctx, &skipped))
	}
	return h.Result(outcomes, "")
}

// shardStream is one shard file being read: its operation table and its attempts, in batches.
type shardStream struct {
	f     *shardfile.File
	shard int
	ops   []shardfile.Operation
	batch []shardfile.Attempt
	pos   int
	next  chan []shardfile.Attempt
	err   error // set before next is closed
}

// mergeLoad is the load property's body in merge.
func (s *S) mergeLoad(files []*shardfile.File) check.Result {
	e := s.Env
	defs := map[string]int{}
	for i, op := range e.Target.Operations {
		defs[op.Name] = i
	}
	tenants := map[string]int{}
	for i, t := range e.Target.Tenants {
		tenants[t.Name] = i
	}
	// The operation tables, each operation once (a twin or retry of another shard's operation
	// is in both tables).
	tables := make([][]shardfile.Operation, len(files))
	var ops []*Op
	seen := map[string]bool{}
	for i, f := range files {
		var c shardfile.Contents
		if err := f.Scan(&c, func(shardfile.Attempt) bool { return false }); err != nil {
			return check.Unknownf("a shard file cannot be read: %v", err)
		}
		tables[i] = c.Ops
		for _, row := range c.Ops {
			d, ok := defs[row.Def]
			if !ok {
				return check.Unknownf("%s names operation %q, which the target file does not declare", f.Path, row.Def)
			}
			if seen[row.Key] {
				continue
			}
			seen[row.Key] = true
			op := &Op{s: s, Def: e.Target.Operations[d], Key: row.Key, Ref: row.Ref}
			if row.Tenant != "" {
				t, ok := tenants[row.Tenant]
				if !ok {
					return check.Unknownf("%s names tenant %q, which the target file does not declare", f.Path, row.Tenant)
				}
				op.Tenant = e.Target.Tenants[t]
			}
			ops = append(ops, op)
		}
	}
	started := time.Now()
	counts, countErrs, uncounted, how := s.countMerged(ops)
	counting := time.Since(started)

	var total int64
	for _, f := range files {
		total += f.Manifest.Attempts
	}
	every := max(1, (total+maxPlotPoints-1)/maxPlotPoints)
	started = time.Now()
	origins := make([]uint64, 0, total) // by merged Seq-1: shard<<40 | local sequence
	var readErr error
	var sample []history.Attempt // every every-th attempt, for the plot
	stream := func(yield func(history.Attempt) bool) {
		for a := range s.mergedAttempts(files, tables, &origins, &readErr) {
			if a.Seq%every == 0 {
				p := a
				p.RespBody = nil
				sample = append(sample, p)
			}
			if !yield(a) {
				return
			}
		}
	}
	res := check.Load(stream, counts, e.Target.Profile)
	checking := time.Since(started)
	if readErr != nil {
		return check.Unknownf("a shard file cannot be read: %v", readErr)
	}
	for i := range res.Anomalies {
		nameShards(&res.Anomalies[i], origins)
	}
	plot, err := loadPlot(slices.Values(sample), e.Target.Profile)
	f := mergeFigures(files, res, counting, checking)
	f["counted_by"] = how
	switch {
	case err != nil:
		f["plot"] = "not written: " + err.Error()
	case every > 1:
		f["plot"] = fmt.Sprintf("%s (every %d-th attempt of %d)", LoadPlotFile, every, total)
		s.Artefact(LoadPlotFile, plot)
	default:
		f["plot"] = LoadPlotFile
		s.Artefact(LoadPlotFile, plot)
	}
	s.Figure(f)
	countErr := ""
	if len(countErrs) > 0 {
		countErr = countErrs[0]
	}
	return res.Judge(uncounted, countErr)
}

// countMerged counts the records of every operation once: with one bulk query per operation
// definition that declares observer.bulk, else per operation a few at a time (countLoad). It
// returns the counts, the first few errors, the operations not counted and how they were counted.
func (s *S) countMerged(ops []*Op) (map[string]int, []string, int, string) {
	byDef := map[string][]*Op{}
	var rest []*Op
	var defs []string
	for _, op := range ops {
		if op.Def.Observer != nil && op.Def.Observer.Bulk != nil {
			if byDef[op.Def.Name] == nil {
				defs = append(defs, op.Def.Name)
			}
			byDef[op.Def.Name] = append(byDef[op.Def.Name], op)
		} else {
			rest = append(rest, op)
		}
	}
	counts, errs, failed := s.countLoad(rest)
	var how []string
	for _, name := range defs {
		group := byDef[name]
		ctx, cancel := s.AttemptCtx(6)
		got, err := s.Target.CountBulk(ctx, group[0].Def, s.RefPrefix())
		cancel()
		if err != nil {
			if len(errs) < 5 {
				errs = append(errs, err.Error())
			}
			failed += len(group)
			continue
		}
		for _, op := range group {
			counts[op.Key] = got[op.Ref]
		}
		how = append(how, fmt.Sprintf("%s: one bulk query for %d operations", name, len(group)))
	}
	if len(rest) > 0 {
		how = append(how, fmt.Sprintf("%d operations one by one (%d at a time)", len(rest), loadCountWorkers))
	}
	return counts, errs, failed, strings.Join(how, "; ")
}

// mergedAttempts yields the attempts of every shard merged by start time (ties by shard), each
// with its merged sequence number, and records in origins where each came from; a read error
// ends the stream and lands in *readErr.
func (s *S) mergedAttempts(files []*shardfile.File, tables [][]shardfile.Operation, origins *[]uint64, readErr *error) iter.Seq[history.Attempt] {
	return func(yield func(history.Attempt) bool) {
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		streams := make(mergeHeap, 0, len(files))
		all := make([]*shardStream, len(files))
		for i, f := range files {
			st := &shardStream{f: f, shard: f.Header.Shard, ops: tables[i], next: make(chan []shardfile.Attempt, 4)}
			all[i] = st
			go st.read(ctx)
			if st.advance() {
				streams = append(streams, st)
			}
		}
		defer func() { // every reader stopped before their errors are read
			cancel()
			for _, st := range all {
				for range st.next {
				}
				if st.err != nil && *readErr == nil {
					*readErr = st.err
				}
			}
		}()
		heap.Init(&streams)
		var seq int64
		for len(streams) > 0 {
			st := streams[0]
			sa := &st.batch[st.pos]
			seq++
			*origins = append(*origins, uint64(st.shard)<<40|uint64(sa.Seq))
			if sa.Op < 0 || sa.Op >= len(st.ops) {
				*readErr = fmt.Errorf("%s: attempt %d names operation row %d of %d", st.f.Path, sa.Seq, sa.Op, len(st.ops))
				return
			}
			row := &st.ops[sa.Op]
			a := history.Attempt{Seq: seq, Op: row.Def, Key: row.Key, Tenant: row.Tenant,
				Status: sa.Status, RespBody: sa.Body, BodyHash: sa.BodyHash, Truncated: sa.Truncated,
				Err: sa.Err, Start: sa.Start, End: sa.End, Outcome: sa.Outcome, Note: sa.Note, Compacted: true}
			if sa.Instance >= 0 && sa.Instance < len(st.f.Header.Instances) {
				a.Instance = st.f.Header.Instances[sa.Instance]
			}
			if !yield(a) {
				return
			}
			st.pos++
			if st.pos < len(st.batch) || st.advance() {
				heap.Fix(&streams, 0)
			} else {
				heap.Pop(&streams)
			}
		}
	}
}

// read sends the file's attempts in batches, then closes next.
func (st *shardStream) read(ctx context.Context) {
	defer close(st.next)
	batch := make([]shardfile.Attempt, 0, 1024)
	err := st.f.Scan(nil, func(a shardfile.Attempt) bool {
		batch = append(batch, a)
		if len(batch) == cap(batch) {
			select {
			case st.next <- batch:
			case <-ctx.Done():
				return false
			}
			batch = make([]shardfile.Attempt, 0, 1024)
		}
		return true
	})
	if err != nil {
		st.err = err
		return
	}
	if len(batch) > 0 {
		select {
		case st.next <- batch:
		case <-ctx.Done():
		}
	}
}

// advance moves to the next batch; false at the end of the file.
func (st *shardStream) advance() bool {
	b, ok := <-st.next
	st.batch, st.pos = b, 0
	return ok
}

// mergeHeap orders the streams by their current attempt's start, then by shard.
type mergeHeap []*shardStream

func (m mergeHeap) Len() int { return len(m) }
func (m mergeHeap) Less(i, j int) bool {
	a, b := &m[i].batch[m[i].pos], &m[j].batch[m[j].pos]
	if !a.Start.Equal(b.Start) {
		return a.Start.Before(b.Start)
	}
	return m[i].shard < m[j].shard
}
func (m mergeHeap) Swap(i, j int) { m[i], m[j] = m[j], m[i] }
func (m *mergeHeap) Push(x any)   { *m = append(*m, x.(*shardStream)) }
func (m *mergeHeap) Pop() any {
	old := *m
	x := old[len(old)-1]
	*m = old[:len(old)-1]
	return x
}

// nameShards adds to an anomaly the shard and local sequence number of each of its attempts, and
// says in its message when they come from more than one shard.
func nameShards(a *reports.Anomaly, origins []uint64) {
	shards := map[int]bool{}
	for _, seq := range a.Seqs {
		if seq < 1 || seq > int64(len(origins)) {
			continue
		}
		o := origins[seq-1]
		sa := reports.ShardAttempt{Shard: int(o >> 40), Seq: int64(o & (1<<40 - 1))}
		a.Shards = append(a.Shards, sa)
		shards[sa.Shard] = true
	}
	if len(shards) > 1 {
		var names []string
		for _, sa := range a.Shards {
			names = append(names, fmt.Sprintf("shard %d attempt %d", sa.Shard, sa.Seq))
		}
		a.Message += " (sent by different shards: " + strings.Join(names, ", ") + ")"
	}
}

// mergeFigures are the merged load's key figures: the load checker's, and each shard's window
// and throughput.
func mergeFigures(files []*shardfile.File, res *check.LoadResult, counting, checking time.Duration) map[string]string {
	var hits, twins int64
	for _, f := range files {
		hits += f.Manifest.Hits
		if n, err := strconv.ParseInt(f.Manifest.Figures["cross_shard_twins"], 10, 64); err == nil {
			twins += n
		}
	}
	m0 := files[0].Manifest
	fig := map[string]string{
		"shards":            strconv.Itoa(len(files)),
		"rate":              fmt.Sprintf("%d hits/s per shard for %s", m0.Rate, m0.PlannedEnd.Sub(m0.PlannedStart)),
		"hits":              strconv.FormatInt(hits, 10),
		"cross_shard_twins": strconv.FormatInt(twins, 10),
		"attempts":          strconv.Itoa(res.Attempts),
		"operations":        strconv.Itoa(res.Ops),
		"throughput":        fmt.Sprintf("%.1f attempts/s", res.Throughput()),
		"statuses":          res.StatusCounts(),
		"unknown":           strconv.Itoa(res.Unknown),
		"count_time":        Millis(counting),
		"check_time":        Millis(checking),
		"limits":            m0.Limits,
	}
	for _, f := range files {
		m := f.Manifest
		span := m.End.Sub(m.Start).Seconds()
		tp := 0.0
		if span > 0 {
			tp = float64(m.Attempts) / span
		}
		fig[fmt.Sprintf("shard_%d", m.Shard)] = fmt.Sprintf("%d attempts, %.1f attempts/s, from %s to %s",
			m.Attempts, tp, m.Start.UTC().Format("15:04:05.000"), m.End.UTC().Format("15:04:05.000"))
	}
	latencyFigures(fig, res)
	return fig
}
