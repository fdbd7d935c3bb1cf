package framework

// The judgement of a sharded load: every shard's attempts merged into one history (a streaming
// k-way merge by start time), the records of every operation counted once, the load checker run
// over the whole, every anomaly naming the shards and local sequence numbers of its attempts.

import (
	"context"
	"fmt"
	"runtime"
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

// mergeLoad is the load property's body in merge.
func (s *S) mergeLoad(files []*shardfile.File) check.Result {
	e := s.Env
	started := time.Now()
	var total int64
	rows := 0
	for _, f := range files {
		total += f.Manifest.Attempts
		rows += f.Manifest.Operations
	}
	// The records are counted while the tables are indexed and the attempts checked.
	h := newRefHasher()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	bulk := make(chan *bulkRows, 1)
	go func() { bulk <- s.queryBulk(ctx, h, rows) }()
	set, err := s.indexSet(files, h)
	if err != nil {
		cancel()
		<-bulk
		return check.Unknownf("%v", err)
	}
	defer set.close()
	// The index's temporaries (hundreds of bytes per row) are garbage now: collected before the
	// checker allocates, its memory is reused rather than added to the peak.
	runtime.GC()
	counted := make(chan time.Duration, 1)
	var c mergeCounts
	go func() {
		c = s.countMerged(set, <-bulk)
		counted <- time.Since(started)
	}()
	every := max(1, (total+maxPlotPoints-1)/maxPlotPoints)
	origins := make([]uint64, 0, total) // by merged Seq-1: shard<<40 | local sequence
	type point struct {                 // an attempt of the plot's sample
		id, status int32
		outcome    history.Outcome
		start, end int64
		err        string
	}
	sample := make([]point, 0, total/every+1) // every every-th attempt
	checker := check.NewLoadChecker(e.Target.Profile, e.Target.Retention, len(set.loc), set.body)
	seq := int64(0)
	readErr := set.stream(s.ctx, func(file, shard int, id int32, a *shardfile.Compact) {
		seq++
		origins = append(origins, uint64(shard)<<40|uint64(a.Seq))
		la := check.LoadAttempt{Seq: seq, Start: shardfile.Time(a.Start), End: shardfile.Time(a.End), Status: int(a.Status),
			Outcome: a.Outcome, BodyHash: a.BodyHash, Body: -1}
		if a.BodyAt >= 0 {
			la.Body = int64(file)<<48 | a.BodyAt
		}
		checker.Add(id, &la)
		if seq%every == 0 {
			sample = append(sample, point{id: id, status: a.Status, outcome: a.Outcome, start: a.Start, end: a.End, err: a.Err})
		}
	})
	checking := time.Since(started)
	counting := <-counted
	if readErr != nil {
		return check.Unknownf("a shard file cannot be read: %v", readErr)
	}
	res := checker.Finish(c.records, set.name)
	for i := range res.Anomalies {
		nameShards(&res.Anomalies[i], origins)
	}
	plot, err := loadPlot(func(yield func(history.Attempt) bool) {
		for _, p := range sample {
			a := history.Attempt{Key: strconv.Itoa(int(p.id)), Status: int(p.status), Outcome: p.outcome,
				Start: shardfile.Time(p.start), End: shardfile.Time(p.end), Err: p.err, Compacted: true}
			if !yield(a) {
				return
			}
		}
	}, e.Target.Profile)
	f := mergeFigures(files, res, counting, checking)
	f["counted_by"] = c.how
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
	if len(c.errs) > 0 {
		countErr = c.errs[0]
	}
	return res.Judge(c.uncounted, countErr)
}

// mergeBatch is how many attempts a shard's reader hands over at once.
const mergeBatch = 4096

// shardStream is one shard file being read, in batches.
type shardStream struct {
	shard, file int
	ids         []int32 // by operation row: the operation's id
	batch       []shardfile.Compact
	pos         int
	next, free  chan []shardfile.Compact
	err         error // set before next is closed
}

// stream passes every attempt of the set to each in the merged order (by start time, ties by
// shard) with its file's index, its shard and its operation's id, and returns the first read error.
func (set *mergeSet) stream(ctx context.Context, each func(file, shard int, id int32, a *shardfile.Compact)) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	all := make([]*shardStream, len(set.files))
	defer func() { // every reader stopped before their errors are read
		cancel()
		for _, st := range all {
			if st == nil {
				continue
			}
			for range st.next {
			}
			if st.err != nil && err == nil {
				err = st.err
			}
		}
	}()
	var h streamHeap
	for fi, f := range set.files {
		st := &shardStream{shard: f.Header.Shard, file: fi, ids: set.fileRows(fi), next: make(chan []shardfile.Compact, 3), free: make(chan []shardfile.Compact, 5)}
		for range 5 {
			st.free <- make([]shardfile.Compact, 0, mergeBatch)
		}
		all[fi] = st
		go st.read(ctx, f, set.from[fi])
		if st.advance() {
			h = append(h, st)
		}
	}
	h.init()
	for len(h) > 0 {
		st := h[0]
		a := &st.batch[st.pos]
		if a.Op < 0 || int(a.Op) >= len(st.ids) {
			return fmt.Errorf("%s: attempt %d names operation row %d of %d", set.files[st.file].Path, a.Seq, a.Op, len(st.ids))
		}
		each(st.file, st.shard, st.ids[a.Op], a)
		st.pos++
		if st.pos < len(st.batch) || st.advance() {
			h.fix()
		} else {
			h.pop()
		}
	}
	return nil
}

// read sends the file's attempts in batches, then closes next.
func (st *shardStream) read(ctx context.Context, f *shardfile.File, from int64) {
	defer close(st.next)
	var batch []shardfile.Compact
	take := func() bool {
		select {
		case batch = <-st.free:
			batch = batch[:0]
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !take() {
		return
	}
	err := f.Attempts(from, func(a *shardfile.Compact) bool {
		batch = append(batch, *a)
		if len(batch) < cap(batch) {
			return true
		}
		select {
		case st.next <- batch:
		case <-ctx.Done():
			return false
		}
		return take()
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

// advance hands the spent batch back and moves to the next; false at the end of the file.
func (st *shardStream) advance() bool {
	if st.batch != nil {
		select {
		case st.free <- st.batch:
		default:
		}
	}
	b, ok := <-st.next
	st.batch, st.pos = b, 0
	return ok
}

// streamHeap is a min-heap of the streams by their current attempt's start, then shard.
type streamHeap []*shardStream

func (h streamHeap) less(i, j int) bool {
	a, b := &h[i].batch[h[i].pos], &h[j].batch[h[j].pos]
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	return h[i].shard < h[j].shard
}

func (h streamHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// fix restores the order after the head's attempt changed.
func (h streamHeap) fix() { h.down(0) }

// pop removes the head.
func (h *streamHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

func (h streamHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
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
