package framework

import (
	"slices"
	"testing"

	"github.com/retrysafe/retrysafe/reports/shardfile"
)

func TestIDMapKeepsCollidingFirstHashesApart(t *testing.T) {
	m := newIDMap(4)
	a, b, c := hash128{1, 10}, hash128{1, 20}, hash128{2, 10} // a and b collide on the first hash
	for i, h := range []hash128{a, b, c} {
		if id, added := m.put(h, int32(i)); !added || id != int32(i) {
			t.Fatalf("put %v: %d, %v", h, id, added)
		}
	}
	if id, added := m.put(b, 7); added || id != 1 {
		t.Fatalf("put of a present hash: %d, %v; want its id 1, not added", id, added)
	}
	for i, h := range []hash128{a, b, c} {
		if id, ok := m.get(h); !ok || id != int32(i) {
			t.Errorf("get %v: %d, %v; want %d", h, id, ok, i)
		}
	}
	if _, ok := m.get(hash128{1, 30}); ok {
		t.Error("a hash never put was found")
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
