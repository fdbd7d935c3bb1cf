package framework

// The index of a merged set: every operation once, by a dense id in the order the tables first
// name it, and where its row is. Millions of keys and refs are matched by hash, partitioned by
// the top bits of the hash so that each partition's map is small enough to stay in the cache:
// a map of millions of entries costs a cache and a TLB miss per look-up.

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/targets"
)

// hash128 identifies a key, or an operation definition and a ref, by two 64-bit hashes.
type hash128 [2]uint64

// partBits is log2 of the number of partitions.
const partBits = 8

// hashRec is one hashed thing in a partition: its first hash, 32 bits of its second, and what
// it stands for (a row's global index, an id or a count).
type hashRec struct {
	h0    uint64
	check uint32
	v     uint32
}

// hashKey is the key of a hashRec in a partition's map of collisions.
type hashKey struct {
	h0    uint64
	check uint32
}

func partOf(h0 uint64) int { return int(h0 >> (64 - partBits)) }

// partition scatters the records visit yields (it is called twice, and must yield the same
// records both times) into one slice, partition by partition, each in the order yielded; it
// returns the slice and where each partition starts (and, last, ends).
func partition(visit func(yield func(h hash128, v uint32))) ([]hashRec, []int) {
	starts := make([]int, 1<<partBits+1)
	visit(func(h hash128, _ uint32) { starts[partOf(h[0])+1]++ })
	for p := 1; p < len(starts); p++ {
		starts[p] += starts[p-1]
	}
	recs := make([]hashRec, starts[len(starts)-1])
	next := append([]int(nil), starts[:len(starts)-1]...)
	visit(func(h hash128, v uint32) {
		p := partOf(h[0])
		recs[next[p]] = hashRec{h0: h[0], check: uint32(h[1]), v: v}
		next[p]++
	})
	return recs, starts
}

// eachPart runs f on every partition, a goroutine per processor, each with a map of its own,
// emptied before every partition.
func eachPart(f func(p int, m *partMap)) {
	var next atomic.Int32
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			m := &partMap{first: map[uint64]hashRec{}}
			for p := int(next.Add(1)) - 1; p < 1<<partBits; p = int(next.Add(1)) - 1 {
				clear(m.first)
				m.more = nil
				f(p, m)
			}
		})
	}
	wg.Wait()
}

// partMap finds the first record of each hash in one partition.
type partMap struct {
	first map[uint64]hashRec
	more  map[hashKey]uint32 // records whose first hash collides with another's
}

// put enters r unless a record with its hash is there: it returns the v of the first one with
// r's hash (r's own when added).
func (m *partMap) put(r hashRec) (uint32, bool) {
	e, ok := m.first[r.h0]
	switch {
	case !ok:
		m.first[r.h0] = r
		return r.v, true
	case e.check == r.check:
		return e.v, false
	}
	k := hashKey{r.h0, r.check}
	if v, ok := m.more[k]; ok {
		return v, false
	}
	if m.more == nil {
		m.more = map[hashKey]uint32{}
	}
	m.more[k] = r.v
	return r.v, true
}

// get returns the v of the record with r's hash.
func (m *partMap) get(r hashRec) (uint32, bool) {
	e, ok := m.first[r.h0]
	if !ok {
		return 0, false
	}
	if e.check == r.check {
		return e.v, true
	}
	v, ok := m.more[hashKey{r.h0, r.check}]
	return v, ok
}

// mergeSet is a set of shard files indexed: every operation once, by a dense id, with where its
// row is, so that nothing per operation but a few numbers stays in memory.
type mergeSet struct {
	files []*shardfile.File
	from  []int64 // by file: where its attempts begin
	base  []int   // by file: the global index of its first row
	// rowIDs are, by global row index (a file's base + its row), the row's operation id.
	rowIDs []int32
	loc    []uint64 // by id: file<<48 | the offset of its first row
	def    []uint16 // by id: its definition's index in the target file
	// refs are the (definition, ref) hashes of the operations counted in bulk, their ids as v,
	// partitioned (refStarts).
	refs      []hashRec
	refStarts []int
	// slow are the operations of definitions without a bulk observer, slowIDs their ids.
	slow    []*Op
	slowIDs []int32
	refHasher
	readers []*shardfile.Reader // by file, opened when a row or a body is read again
	mu      sync.Mutex          // guards readers
}

// fileTable is one file's operation table, parsed and hashed.
type fileTable struct {
	off  []int64
	key  []hash128
	ref  []hash128 // of a row counted in bulk
	def  []uint16
	slow map[int]slowRow // by row: what counting one by one needs
	from int64
	err  error
}

// slowRow is a row of a definition without a bulk observer.
type slowRow struct {
	key, ref string
	tenant   *targets.Tenant
}

// indexSet reads the operation tables of a set, a goroutine per file, and indexes them.
func (s *S) indexSet(files []*shardfile.File, h refHasher) (*mergeSet, error) {
	set := &mergeSet{files: files, from: make([]int64, len(files)), base: make([]int, len(files)),
		readers: make([]*shardfile.Reader, len(files)), refHasher: h}
	tables := make([]*fileTable, len(files))
	var wg sync.WaitGroup
	for fi, f := range files {
		tables[fi] = &fileTable{}
		wg.Go(func() { s.readTable(set, f, tables[fi]) })
	}
	wg.Wait()
	rows := 0
	for fi, t := range tables {
		if t.err != nil {
			return nil, t.err
		}
		set.from[fi], set.base[fi] = t.from, rows
		rows += len(t.off)
	}
	if rows >= 1<<31 {
		return nil, fmt.Errorf("the set has %d operation rows, more than a merge indexes (%d)", rows, 1<<31-1)
	}
	eachRow := func(yield func(h hash128, v uint32)) {
		for fi, t := range tables {
			for r, h := range t.key {
				yield(h, uint32(set.base[fi]+r))
			}
		}
	}
	// Each row's canonical row: the first row of its key, in file order.
	recs, starts := partition(eachRow)
	canon := make([]uint32, rows)
	eachPart(func(p int, m *partMap) {
		for _, r := range recs[starts[p]:starts[p+1]] {
			canon[r.v], _ = m.put(r)
		}
	})
	recs = nil
	// Ids in file order, so that an operation's id grows with when it was first sent.
	set.rowIDs = make([]int32, rows)
	for fi, t := range tables {
		for r := range t.off {
			g := set.base[fi] + r
			if c := int(canon[g]); c != g {
				set.rowIDs[g] = set.rowIDs[c] // an earlier row
				continue
			}
			id := int32(len(set.loc))
			set.rowIDs[g] = id
			set.loc = append(set.loc, uint64(fi)<<48|uint64(t.off[r]))
			set.def = append(set.def, t.def[r])
			if sr, ok := t.slow[r]; ok {
				set.slow = append(set.slow, &Op{s: s, Def: s.Target.Operations[t.def[r]], Key: sr.key, Ref: sr.ref, Tenant: sr.tenant})
				set.slowIDs = append(set.slowIDs, id)
			}
		}
	}
	set.refs, set.refStarts = partition(func(yield func(h hash128, v uint32)) {
		for fi, t := range tables {
			for r := range t.off {
				g := set.base[fi] + r
				if _, slow := t.slow[r]; int(canon[g]) == g && !slow {
					yield(t.ref[r], uint32(set.rowIDs[g]))
				}
			}
		}
	})
	return set, nil
}

// readTable reads a file's operation table into t: each row's offset, hashes and definition;
// a row the target file does not explain, or a read error, ends it with t.err.
func (s *S) readTable(set *mergeSet, f *shardfile.File, t *fileTable) {
	tg := s.Target
	defs := map[string]int{}
	for i, op := range tg.Operations {
		defs[op.Name] = i
	}
	tenants := map[string]*targets.Tenant{}
	for _, tn := range tg.Tenants {
		tenants[tn.Name] = tn
	}
	n := f.Manifest.Operations
	t.off, t.key, t.ref, t.def = make([]int64, 0, n), make([]hash128, 0, n), make([]hash128, 0, n), make([]uint16, 0, n)
	var bad error // a row the target file does not explain
	from, err := f.Operations(func(off int64, row *shardfile.Row) error {
		d, ok := defs[string(row.Def)]
		if !ok {
			bad = fmt.Errorf("%s names operation %q, which the target file does not declare", f.Path, row.Def)
			return bad
		}
		var tenant *targets.Tenant
		if len(row.Tenant) > 0 {
			if tenant = tenants[string(row.Tenant)]; tenant == nil {
				bad = fmt.Errorf("%s names tenant %q, which the target file does not declare", f.Path, row.Tenant)
				return bad
			}
		}
		var ref hash128
		if def := tg.Operations[d]; def.Observer != nil && def.Observer.Bulk != nil {
			ref = set.hash(d+1, row.Ref)
		} else {
			if t.slow == nil {
				t.slow = map[int]slowRow{}
			}
			t.slow[len(t.off)] = slowRow{key: string(row.Key), ref: string(row.Ref), tenant: tenant}
		}
		t.off, t.key, t.ref, t.def = append(t.off, off), append(t.key, set.hash(0, row.Key)), append(t.ref, ref), append(t.def, uint16(d))
		return nil
	})
	switch {
	case err != nil && errors.Is(err, bad):
		t.err = err
	case err != nil:
		t.err = fmt.Errorf("a shard file cannot be read: %w", err)
	default:
		t.from = from
	}
}

// refHasher hashes the keys and refs of one merge.
type refHasher struct{ seeds [2]maphash.Seed }

func newRefHasher() refHasher {
	return refHasher{[2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// hash hashes b in domain d (0: keys; i+1: the refs of definition i).
func (h refHasher) hash(d int, b []byte) hash128 {
	mix := uint64(d) * 0x9e3779b97f4a7c15
	return hash128{maphash.Bytes(h.seeds[0], b) ^ mix, maphash.Bytes(h.seeds[1], b) ^ mix>>1}
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

// fileRows are the operation ids of file fi's rows, by row.
func (set *mergeSet) fileRows(fi int) []int32 {
	end := len(set.rowIDs)
	if fi+1 < len(set.base) {
		end = set.base[fi+1]
	}
	return set.rowIDs[set.base[fi]:end]
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

// bulkRows are the rows of the bulk queries, hashed into partitions: a ref's hash, its count as v.
type bulkRows struct {
	rows [][]hashRec
	ok   []bool // by definition: its query answered
	errs []string
}

// queryBulk runs the bulk query of every operation definition that declares one, hashing each
// row as it arrives; it needs no index, so it runs while the tables are indexed. hint is about
// how many rows to expect.
func (s *S) queryBulk(ctx context.Context, h refHasher, hint int) *bulkRows {
	b := &bulkRows{rows: make([][]hashRec, 1<<partBits), ok: make([]bool, len(s.Target.Operations))}
	for p := range b.rows {
		b.rows[p] = make([]hashRec, 0, hint>>partBits+hint>>(partBits+4))
	}
	for d, def := range s.Target.Operations {
		if def.Observer == nil || def.Observer.Bulk == nil {
			continue
		}
		actx, cancel := s.AttemptCtx(6)
		stop := context.AfterFunc(ctx, cancel)
		mark := make([]int, len(b.rows)) // where this query's rows begin, to drop them if it fails
		for p := range b.rows {
			mark[p] = len(b.rows[p])
		}
		err := s.Target.CountBulkEach(actx, def, s.RefPrefix(), func(ref []byte, k int) {
			rh := h.hash(d+1, ref)
			p := partOf(rh[0])
			b.rows[p] = append(b.rows[p], hashRec{h0: rh[0], check: uint32(rh[1]), v: uint32(max(k, 0))})
		})
		stop()
		cancel()
		if err != nil {
			for p := range b.rows {
				b.rows[p] = b.rows[p][:mark[p]]
			}
			if len(b.errs) < 5 {
				b.errs = append(b.errs, err.Error())
			}
			continue
		}
		b.ok[d] = true
	}
	return b
}

// countMerged counts the records of every operation once: the bulk queries' rows matched with
// the operations' refs partition by partition, the operations of a definition without a bulk
// observer counted one by one, a few at a time (countLoad).
func (s *S) countMerged(set *mergeSet, b *bulkRows) mergeCounts {
	n := len(set.loc)
	c := mergeCounts{counts: make([]int32, n), counted: make([]bool, n), errs: b.errs}
	perDef := make([]int, len(s.Target.Operations))
	for _, d := range set.def {
		perDef[d]++
	}
	var how []string
	for d, def := range s.Target.Operations {
		switch {
		case def.Observer == nil || def.Observer.Bulk == nil || perDef[d] == 0:
		case b.ok[d]:
			how = append(how, fmt.Sprintf("%s: one bulk query for %d operations", def.Name, perDef[d]))
		default:
			c.uncounted += perDef[d]
		}
	}
	rows, ok := b.rows, b.ok
	eachPart(func(p int, m *partMap) {
		var same [][2]uint32 // an operation sharing its ref with an earlier one, and that one
		for _, r := range set.refs[set.refStarts[p]:set.refStarts[p+1]] {
			if first, added := m.put(r); !added {
				same = append(same, [2]uint32{r.v, first})
			}
		}
		for _, r := range rows[p] {
			if id, found := m.get(r); found {
				c.counts[id] += int32(r.v)
			}
		}
		for _, sm := range same {
			c.counts[sm[0]] = c.counts[sm[1]]
		}
	})
	for id := range n {
		c.counted[id] = ok[set.def[id]]
	}
	set.refs, b.rows, rows = nil, nil, nil // matched: a few hundred megabytes on a large set
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
