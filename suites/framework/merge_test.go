package framework

import (
	"slices"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/reports/shardfile"
)

func TestPartMapKeepsCollidingFirstHashesApart(t *testing.T) {
	m := &partMap{first: map[uint64]hashRec{}}
	a, b, c := hashRec{1, 10, 0}, hashRec{1, 20, 1}, hashRec{2, 10, 2} // a and b collide on the first hash
	for _, r := range []hashRec{a, b, c} {
		if v, added := m.put(r); !added || v != r.v {
			t.Fatalf("put %v: %d, %v", r, v, added)
		}
	}
	if v, added := m.put(hashRec{1, 20, 7}); added || v != 1 {
		t.Fatalf("put of a present hash: %d, %v; want b's 1, not added", v, added)
	}
	for _, r := range []hashRec{a, b, c} {
		if v, ok := m.get(hashRec{r.h0, r.check, 99}); !ok || v != r.v {
			t.Errorf("get %v: %d, %v", r, v, ok)
		}
	}
	if _, ok := m.get(hashRec{1, 30, 0}); ok {
		t.Error("a hash never put was found")
	}
}

func TestPartitionKeepsEveryRecordInOrder(t *testing.T) {
	var in []hash128
	for i := range uint64(5000) {
		in = append(in, hash128{i * 0x9e3779b97f4a7c15, i})
	}
	recs, starts := partition(func(yield func(hash128, uint32)) {
		for i, h := range in {
			yield(h, uint32(i))
		}
	})
	if len(recs) != len(in) || starts[len(starts)-1] != len(in) {
		t.Fatalf("%d records, partitions end at %d; want %d", len(recs), starts[len(starts)-1], len(in))
	}
	seen := make([]bool, len(in))
	for p := range 1 << partBits {
		prev := -1
		for _, r := range recs[starts[p]:starts[p+1]] {
			if partOf(r.h0) != p || int(r.v) <= prev || in[r.v][0] != r.h0 || uint32(in[r.v][1]) != r.check {
				t.Fatalf("partition %d holds %+v after v %d", p, r, prev)
			}
			prev, seen[r.v] = int(r.v), true
		}
	}
	var visited [1 << partBits]int
	var mu sync.Mutex
	eachPart(func(p int, m *partMap) {
		if len(m.first) != 0 || m.more != nil {
			t.Errorf("partition %d got a map that is not empty", p)
		}
		m.put(hashRec{h0: uint64(p), v: 1})
		mu.Lock()
		visited[p]++
		mu.Unlock()
	})
	for p, n := range visited {
		if n != 1 {
			t.Fatalf("eachPart ran partition %d %d times", p, n)
		}
	}
	if slices.Contains(seen, false) {
		t.Fatal("a record was lost")
	}
}

func TestStreamHeapOrdersByStartThenShard(t *testing.T) {
	var h streamHeap
	for _, s := range []struct {
		shard int
		start int64
	}{{3, 5}, {0, 9}, {1, 5}, {2, 1}} {
		st := &shardStream{shard: s.shard}
		st.batch = append(st.batch, shardfile.Compact{Start: s.start})
		h = append(h, st)
	}
	h.init()
	var got []int
	for len(h) > 0 {
		got = append(got, h[0].shard)
		h.pop()
	}
	if want := []int{2, 1, 3, 0}; !slices.Equal(got, want) {
		t.Fatalf("popped shards %v, want %v", got, want)
	}
}
