package history

import (
	"crypto/sha256"
	"encoding/binary"
	"iter"
	"time"
)

// CompactOptions configure compact recording; see History.Compact.
type CompactOptions struct {
	// Full reports the attempts to keep whole, as evidence. Nil means
	// KeepNon2xx. Attempts that are not OK, or that carry an error or a note,
	// are always kept whole.
	Full func(Attempt) bool
}

// KeepNon2xx is the default CompactOptions.Full: every answer but a 2xx is
// kept whole.
func KeepNon2xx(a Attempt) bool { return a.Status < 200 || a.Status > 299 }

// Compact makes h store the ordinary attempts added from now on compactly,
// until the returned function is called. A compact attempt keeps its labels
// (operation, key, tenant, instance, method, URL: each distinct value stored
// once), its status, timing, body hash and response body, the body stored
// once per distinct content (a replay shares its original's bytes); its
// headers and request body are dropped and it reads back with Compacted set.
// It costs about a hundred bytes where a whole attempt costs a kilobyte or
// more, so that a load run of a million attempts stays in memory. Attempts
// for which opts.Full is true are kept whole, as evidence.
//
// Calls do not nest: the returned function turns compact recording off.
func (h *History) Compact(opts CompactOptions) (stop func()) {
	full := opts.Full
	if full == nil {
		full = KeepNon2xx
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.compact == nil {
		h.compact = newCompactStore()
	}
	h.keepFull = full
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.keepFull = nil
	}
}

// AttemptsAfter is After without the observed events: the attempts alone, as the checkers of a
// load read them.
func (h *History) AttemptsAfter(seq int64) iter.Seq[Attempt] {
	return func(yield func(Attempt) bool) {
		for a := range h.After(seq) {
			if !a.IsEvent() && !yield(a) {
				return
			}
		}
	}
}

// After yields the entries with a Seq greater than seq, in order: attempts and observed events.
// It reads a snapshot taken when iteration starts; entries added meanwhile are not seen. The
// bodies and headers it yields are shared and read-only.
func (h *History) After(seq int64) iter.Seq[Attempt] {
	return h.scan(seq, nil)
}

// scan is After, yielding only the attempts with key *key when key is not nil.
func (h *History) scan(seq int64, key *string) iter.Seq[Attempt] {
	return func(yield func(Attempt) bool) {
		h.mu.Lock()
		full := h.attempts
		var c compactSnapshot
		if h.compact != nil {
			c = h.compact.snapshot()
		}
		h.mu.Unlock()
		i, j := firstAfter(len(full), func(k int) int64 { return full[k].Seq }, seq),
			firstAfter(c.recs.n, func(k int) int64 { return c.recs.at(k).seq }, seq)
		for i < len(full) || j < c.recs.n {
			var a Attempt
			if j == c.recs.n || (i < len(full) && full[i].Seq < c.recs.at(j).seq) {
				a = full[i]
				i++
				if key != nil && a.Key != *key {
					continue
				}
			} else {
				r := c.recs.at(j)
				j++
				if key != nil && r.key != *key {
					continue
				}
				a = c.attempt(r)
			}
			if !yield(a) {
				return
			}
		}
	}
}

// firstAfter returns the first index of a list sorted by seq whose seq is
// greater than after.
func firstAfter(n int, seqAt func(int) int64, after int64) int {
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if seqAt(mid) <= after {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// compactable reports whether a can be stored compactly at all: an observed event never is (its
// payload is the evidence).
func compactable(a Attempt) bool {
	return !a.IsEvent() && a.Outcome == OK && a.Err == "" && a.Note == "" && a.Status > 0 && a.Status < 1<<16
}

// addCompact redacts and stores a compactly; it stores a whole when a label does not fit.
func (h *History) addCompact(a Attempt) Attempt {
	r := h.redact
	r.LearnHeader(a.ReqHeader)
	r.LearnHeader(a.RespHeader)
	if a.BodyHash == ([32]byte{}) {
		a.BodyHash = sha256.Sum256(a.RespBody)
	}
	key := redactKeep(r, a.Key)
	gen := r.generation()
	h.mu.Lock()
	c := h.compact
	rec := slimRecord{
		start: a.Start.UnixNano(), dur: int64(a.End.Sub(a.Start)), key: key,
		url: c.rawLabel(a.URL, gen, r.URL), status: uint16(a.Status), truncated: a.Truncated,
	}
	raw := [4]string{a.Op, a.Tenant, a.Instance, a.Method}
	for i, l := range raw {
		idx := c.rawLabel(l, gen, r.String)
		if idx > 0xffff {
			h.mu.Unlock()
			return h.addWhole(a)
		}
		rec.labels[i] = uint16(idx)
	}
	rec.body = c.body(a.BodyHash, a.RespBody, r)
	h.n++
	rec.seq = h.n
	stored := c.recs.add(rec)
	snap := c.snapshot()
	h.mu.Unlock()
	return snap.attempt(stored)
}

// redactKeep is r.String(s) that returns s itself when nothing was redacted, so that an
// unchanged label or key is not copied.
func redactKeep(r *Redactor, s string) string {
	if red := r.String(s); red != s {
		return red
	}
	return s
}

// compactStore holds the compact attempts of a History.
type compactStore struct {
	recs     chunked[slimRecord]
	labels   []string
	labelIdx map[string]uint32
	rawIdx   map[string]uint32 // unredacted label -> index into labels, for generation rawGen
	rawGen   int64
	bodies   chunked[storedBody]
	bodyIdx  map[uint64]uint32 // first 8 bytes of the body hash -> index into bodies
}

// slimRecord is one compact attempt (64 bytes).
type slimRecord struct {
	seq       int64
	start     int64 // Unix nanoseconds
	dur       int64 // nanoseconds
	key       string
	url       uint32    // index into labels
	labels    [4]uint16 // op, tenant, instance, method: indexes into labels
	body      uint32    // index into bodies
	status    uint16
	truncated bool
}

// storedBody is one distinct response body (redacted) and the hash of the
// bytes as received.
type storedBody struct {
	b    []byte
	hash [32]byte
}

// chunkLen is the number of elements of one chunk of a chunked list.
const chunkLen = 1024

// chunked is an append-only list stored in fixed chunks: it never copies its elements (a
// slice would, and would keep up to half its capacity unused), and an element, once
// added, never moves, so a reader holding a shorter view needs no lock.
type chunked[T any] struct {
	chunks []*[chunkLen]T
	n      int
}

// add appends v and returns its place.
func (c *chunked[T]) add(v T) *T {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, new([chunkLen]T))
	}
	p := &c.chunks[c.n/chunkLen][c.n%chunkLen]
	*p = v
	c.n++
	return p
}

// at returns element i.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

func newCompactStore() *compactStore {
	return &compactStore{labelIdx: map[string]uint32{}, bodyIdx: map[uint64]uint32{}}
}

// rawLabel interns an unredacted label: redacted once by redact, then found by its raw
// form until the Redactor learns another value.
func (c *compactStore) rawLabel(raw string, gen int64, redact func(string) string) uint32 {
	if gen != c.rawGen || c.rawIdx == nil {
		c.rawIdx, c.rawGen = map[string]uint32{}, gen
	}
	if i, ok := c.rawIdx[raw]; ok {
		return i
	}
	red := raw
	if r := redact(raw); r != raw {
		red = r
	}
	i := c.label(red)
	c.rawIdx[raw] = i
	return i
}

// label interns a label.
func (c *compactStore) label(s string) uint32 {
	if i, ok := c.labelIdx[s]; ok {
		return i
	}
	c.labels = append(c.labels, s)
	i := uint32(len(c.labels) - 1)
	c.labelIdx[s] = i
	return i
}

// body interns a response body by its hash, redacting it when first stored.
// A colliding prefix of a different hash stores the body without interning.
func (c *compactStore) body(hash [32]byte, b []byte, r *Redactor) uint32 {
	prefix := binary.LittleEndian.Uint64(hash[:8])
	if i, ok := c.bodyIdx[prefix]; ok && c.bodies.at(int(i)).hash == hash {
		return i
	}
	c.bodies.add(storedBody{b: r.Bytes(b), hash: hash})
	i := uint32(c.bodies.n - 1)
	if _, taken := c.bodyIdx[prefix]; !taken {
		c.bodyIdx[prefix] = i
	}
	return i
}

// compactSnapshot is a consistent view of a compactStore: its lists only ever grow and
// their elements never change, so a view taken under the History's lock can be read
// without it.
type compactSnapshot struct {
	recs   chunked[slimRecord]
	labels []string
	bodies chunked[storedBody]
}

func (c *compactStore) snapshot() compactSnapshot {
	return compactSnapshot{recs: c.recs, labels: c.labels, bodies: c.bodies}
}

// attempt rebuilds the Attempt a record stands for.
func (c compactSnapshot) attempt(r *slimRecord) Attempt {
	start := time.Unix(0, r.start)
	body := c.bodies.at(int(r.body))
	return Attempt{
		Seq: r.seq, Key: r.key,
		Op: c.labels[r.labels[0]], Tenant: c.labels[r.labels[1]], Instance: c.labels[r.labels[2]],
		Method: c.labels[r.labels[3]], URL: c.labels[r.url],
		Status: int(r.status), RespBody: body.b, BodyHash: body.hash, Truncated: r.truncated,
		Start: start, End: start.Add(time.Duration(r.dur)), Outcome: OK, Compacted: true,
	}
}
