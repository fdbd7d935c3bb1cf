package suites

import (
	"strconv"
	"sync"
)

// hitTable holds the items of a Vegeta plan (load, delivery-load) between the targeter, which
// decides what a hit sends and tags its request with the item's id, and the transport, which
// takes the item back by that id. Safe for concurrent use; the zero value is empty.
type hitTable[T any] struct {
	mu    sync.Mutex
	last  uint64
	items map[uint64]*T
}

// put stores an item and returns its id.
func (h *hitTable[T]) put(it *T) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.items == nil {
		h.items = map[uint64]*T{}
	}
	h.last++
	h.items[h.last] = it
	return h.last
}

// take removes and returns the item of a hit's id (nil when unknown).
func (h *hitTable[T]) take(id string) *T {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	it := h.items[n]
	delete(h.items, n)
	return it
}
