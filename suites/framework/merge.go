package framework

// The judgement of a sharded load: every shard's attempts merged into one history (a streaming
// k-way merge by start time), the records of every operation counted once, the load checker run
// over the whole, every anomaly naming the shards and local sequence numbers of its attempts.

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
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
	set, err := s.indexSet(files)
	if err != nil {
		return check.Unknownf("%v", err)
	}
	defer set.close()
	// The records are counted while the attempts are checked.
	started := time.Now()
	counted := make(chan time.Duration, 1)
	var c mergeCounts
	go func() {
		c = s.countMerged(set)
		counted <- time.Since(started)
	}()
	var total int64
	for _, f := range files {
		total += f.Manifest.Attempts
	}
	every := max(1, (total+maxPlotPoints-1)/maxPlotPoints)
	origins := make([]uint64, 0, total) // by merged Seq-1: shard<<40 | local sequence
	var sample []history.Attempt        // every every-th attempt, for the plot
	checker := check.NewLoadChecker(e.Target.Profile, len(set.loc), set.body)
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
			sample = append(sample, history.Attempt{Seq: seq, Key: strconv.Itoa(int(id)), Status: la.Status, Outcome: la.Outcome,
				Start: la.Start, End: la.End, Err: a.Err, Compacted: true})
		}
	})
	counting := <-counted
	checking := time.Since(started)
	if readErr != nil {
		return check.Unknownf("a shard file cannot be read: %v", readErr)
	}
	res := checker.Finish(c.records, set.name)
	for i := range res.Anomalies {
		nameShards(&res.Anomalies[i], origins)
	}
	plot, err := loadPlot(slices.Values(sample), e.Target.Profile)
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

// hash128 identifies a key, or an operation definition and a ref, by two 64-bit hashes.
type hash128 [2]uint64

// idMap finds ids by hash128: by the first hash in a map with 64-bit keys (the fast kind),
// checked against the second; the rare pair whose first hashes collide goes to a map of both.
type idMap struct {
	first  map[uint64]int32
	second []uint64 // by id: the second hash of the id's entry in first (0 when it has none)
	both   map[hash128]int32
}

func newIDMap(n int) *idMap {
	return &idMap{first: make(map[uint64]int32, n), both: map[hash128]int32{}}
}

// get returns the id of h.
func (m *idMap) get(h hash128) (int32, bool) {
	if id, ok := m.first[h[0]]; ok && m.second[id] == h[1] {
		return id, true
	}
	id, ok := m.both[h]
	return id, ok
}

// put enters h as id's, unless it is there (ok false: then its id).
func (m *idMap) put(h hash128, id int32) (int32, bool) {
	if old, ok := m.get(h); ok {
		return old, false
	}
	if int(id) >= len(m.second) {
		m.second = append(m.second, make([]uint64, int(id)+1-len(m.second))...)
	}
	if _, taken := m.first[h[0]]; taken {
		m.both[h] = id
	} else {
		m.first[h[0]], m.second[id] = id, h[1]
	}
	return id, true
}

// mergeSet is a set of shard files indexed: every operation once, by a dense id, with where its
// row is, so that nothing per operation but a few numbers stays in memory.
type mergeSet struct {
	files  []*shardfile.File
	from   []int64   // by file: where its attempts begin
	rowIDs [][]int32 // by file, by operation row: the operation's id
	loc    []uint64  // by id: file<<48 | the offset of its first row
	def    []uint16  // by id: its definition's index in the target file
	// refs finds the id of a definition's ref (counted in bulk); sameRef lists the other ids of a
	// ref that several operations share.
	refs    *idMap
	sameRef map[int32][]int32
	// slow are the operations of definitions without a bulk observer, slowIDs their ids.
	slow    []*Op
	slowIDs []int32
	seeds   [2]maphash.Seed
	readers []*shardfile.Reader // by file, opened when a row or a body is read again
	mu      sync.Mutex          // guards readers
}

// tableRow is an operation row parsed and hashed, ready to be indexed.
type tableRow struct {
	off        int64
	key, ref   hash128
	def        int
	tenant     *targets.Tenant
	slow       bool   // its definition has no bulk observer: counted one by one
	sKey, sRef string // its key and ref, for slow
}

// tableBatch is a batch of a file's rows, or the error that ended them.
type tableBatch struct {
	rows []tableRow
	from int64 // after the last batch: where the attempts begin
	err  error
}

// indexSet reads the operation tables of a set: every file parsed and hashed in a goroutine of
// its own, the rows indexed in file order.
func (s *S) indexSet(files []*shardfile.File) (*mergeSet, error) {
	rows := 0
	for _, f := range files {
		rows += f.Manifest.Operations
	}
	set := &mergeSet{files: files, from: make([]int64, len(files)), rowIDs: make([][]int32, len(files)),
		refs: newIDMap(rows), sameRef: map[int32][]int32{}, readers: make([]*shardfile.Reader, len(files)),
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	tables := make([]chan tableBatch, len(files))
	for fi, f := range files {
		tables[fi] = make(chan tableBatch, 4)
		go s.readTable(ctx, set, f, tables[fi])
	}
	keys := newIDMap(rows) // every operation once: a twin or retry of another shard's is in both tables
	for fi, f := range files {
		ids := make([]int32, 0, f.Manifest.Operations)
		for b := range tables[fi] {
			if b.err != nil {
				set.close()
				return nil, b.err
			}
			set.from[fi] = b.from
			for i := range b.rows {
				r := &b.rows[i]
				id, added := keys.put(r.key, int32(len(set.loc)))
				ids = append(ids, id)
				if !added {
					continue
				}
				set.loc = append(set.loc, uint64(fi)<<48|uint64(r.off))
				set.def = append(set.def, uint16(r.def))
				if r.slow {
					set.slow = append(set.slow, &Op{s: s, Def: s.Target.Operations[r.def], Key: r.sKey, Ref: r.sRef, Tenant: r.tenant})
					set.slowIDs = append(set.slowIDs, id)
				} else if first, added := set.refs.put(r.ref, id); !added {
					set.sameRef[first] = append(set.sameRef[first], id)
				}
			}
		}
		set.rowIDs[fi] = ids
	}
	return set, nil
}

// readTable sends a file's operation rows in batches, then where its attempts begin, and closes
// out; a row the target file does not explain, or a read error, ends it with an error.
func (s *S) readTable(ctx context.Context, set *mergeSet, f *shardfile.File, out chan<- tableBatch) {
	defer close(out)
	t := s.Target
	defs := map[string]int{}
	for i, op := range t.Operations {
		defs[op.Name] = i
	}
	tenants := map[string]*targets.Tenant{}
	for _, tn := range t.Tenants {
		tenants[tn.Name] = tn
	}
	send := func(b tableBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var b tableBatch
	var bad error // a row the target file does not explain
	stopped := errors.New("stopped")
	from, err := f.Operations(func(off int64, row *shardfile.Row) error {
		d, ok := defs[string(row.Def)]
		if !ok {
			bad = fmt.Errorf("%s names operation %q, which the target file does not declare", f.Path, row.Def)
			return bad
		}
		r := tableRow{off: off, key: set.hash(0, row.Key), def: d}
		if len(row.Tenant) > 0 {
			if r.tenant = tenants[string(row.Tenant)]; r.tenant == nil {
				bad = fmt.Errorf("%s names tenant %q, which the target file does not declare", f.Path, row.Tenant)
				return bad
			}
		}
		if def := t.Operations[d]; def.Observer != nil && def.Observer.Bulk != nil {
			r.ref = set.hash(d+1, row.Ref)
		} else {
			r.slow, r.sKey, r.sRef = true, string(row.Key), string(row.Ref)
		}
		b.rows = append(b.rows, r)
		if len(b.rows) == mergeBatch {
			if !send(b) {
				return stopped
			}
			b.rows = make([]tableRow, 0, mergeBatch)
		}
		return nil
	})
	switch {
	case errors.Is(err, stopped):
	case err != nil && err == bad:
		send(tableBatch{err: err})
	case err != nil:
		send(tableBatch{err: fmt.Errorf("a shard file cannot be read: %w", err)})
	default:
		b.from = from
		send(b)
	}
}

// hash hashes b in domain d (0: keys; i+1: the refs of definition i).
func (set *mergeSet) hash(d int, b []byte) hash128 {
	mix := uint64(d) * 0x9e3779b97f4a7c15
	return hash128{maphash.Bytes(set.seeds[0], b) ^ mix, maphash.Bytes(set.seeds[1], b) ^ mix>>1}
}

// reader returns the reader of file fi.
func (set *mergeSet) reader(fi int) (*shardfile.Reader, error) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.readers[fi] == nil {
		r, err := set.files[fi].OpenReader()
		if err != nil {
			return nil, err
		}
		set.readers[fi] = r
	}
	return set.readers[fi], nil
}

// body reads the body behind a handle: file<<48 | offset.
func (set *mergeSet) body(h int64) ([]byte, error) {
	r, err := set.reader(int(h >> 48))
	if err != nil {
		return nil, err
	}
	return r.Body(h & (1<<48 - 1))
}

// name reads an operation's row again: its key, definition and tenant.
func (set *mergeSet) name(id int32) (key, op, tenant string) {
	loc := set.loc[id]
	r, err := set.reader(int(loc >> 48))
	if err == nil {
		var row shardfile.Operation
		if row, err = r.Operation(int64(loc & (1<<48 - 1))); err == nil {
			return row.Key, row.Def, row.Tenant
		}
	}
	return fmt.Sprintf("(operation %d: its row cannot be read again: %v)", id, err), "", ""
}

func (set *mergeSet) close() {
	for _, r := range set.readers {
		if r != nil {
			r.Close()
		}
	}
}

// mergeCounts are the records counted for a merged set.
type mergeCounts struct {
	counts    []int32 // by id
	counted   []bool  // by id
	errs      []string
	uncounted int
	how       string
}

func (c *mergeCounts) records(id int32) (int, bool) { return int(c.counts[id]), c.counted[id] }

// countMerged counts the records of every operation once: with one bulk query per operation
// definition that declares observer.bulk, else per operation a few at a time (countLoad).
func (s *S) countMerged(set *mergeSet) mergeCounts {
	n := len(set.loc)
	c := mergeCounts{counts: make([]int32, n), counted: make([]bool, n)}
	perDef := make([]int, len(s.Target.Operations))
	for _, d := range set.def {
		perDef[d]++
	}
	var how []string
	for d, def := range s.Target.Operations {
		if def.Observer == nil || def.Observer.Bulk == nil || perDef[d] == 0 {
			continue
		}
		ctx, cancel := s.AttemptCtx(6)
		err := s.Target.CountBulkEach(ctx, def, s.RefPrefix(), func(ref []byte, k int) {
			if id, ok := set.refs.get(set.hash(d+1, ref)); ok {
				c.counts[id] += int32(k)
			}
		})
		cancel()
		if err != nil {
			if len(c.errs) < 5 {
				c.errs = append(c.errs, err.Error())
			}
			c.uncounted += perDef[d]
			continue
		}
		for id := range n {
			if int(set.def[id]) == d {
				c.counted[id] = true
			}
		}
		how = append(how, fmt.Sprintf("%s: one bulk query for %d operations", def.Name, perDef[d]))
	}
	for first, others := range set.sameRef {
		for _, id := range others {
			c.counts[id] = c.counts[first]
		}
	}
	if len(set.slow) > 0 {
		counts, errs, failed := s.countLoad(set.slow)
		for i, op := range set.slow {
			if k, ok := counts[op.Key]; ok {
				c.counts[set.slowIDs[i]], c.counted[set.slowIDs[i]] = int32(k), true
			}
		}
		c.errs = append(c.errs, errs...)
		c.uncounted += failed
		how = append(how, fmt.Sprintf("%d operations one by one (%d at a time)", len(set.slow), loadCountWorkers))
	}
	c.how = strings.Join(how, "; ")
	return c
}

// mergeBatch is how many attempts a shard's reader hands over at once.
const mergeBatch = 4096

// shardStream is one shard file being read, in batches.
type shardStream struct {
	shard, file int
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
		st := &shardStream{shard: f.Header.Shard, file: fi, next: make(chan []shardfile.Compact, 3), free: make(chan []shardfile.Compact, 5)}
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
		ids := set.rowIDs[st.file]
		if a.Op < 0 || int(a.Op) >= len(ids) {
			return fmt.Errorf("%s: attempt %d names operation row %d of %d", set.files[st.file].Path, a.Seq, a.Op, len(ids))
		}
		each(st.file, st.shard, ids[a.Op], a)
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
