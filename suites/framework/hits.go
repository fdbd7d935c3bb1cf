package framework

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// HitTable holds the items of a Vegeta plan (load, delivery-load) between the targeter, which
// decides what a hit sends and tags its request with the item's id, and the transport, which
// takes the item back by that id. Safe for concurrent use; the zero value is empty.
type HitTable[T any] struct {
	mu    sync.Mutex
	last  uint64
	items map[uint64]*T
}

// Put stores an item and returns its id.
func (h *HitTable[T]) Put(it *T) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.items == nil {
		h.items = map[uint64]*T{}
	}
	h.last++
	h.items[h.last] = it
	return h.last
}

// Take removes and returns the item of a hit's id (nil when unknown).
func (h *HitTable[T]) Take(id string) *T {
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

// HitResponse is the answer a plan's transport hands Vegeta for the attempt the harness sent
// for a hit (Vegeta times and counts it).
func HitResponse(req *http.Request, status int, hdr http.Header, body []byte) *http.Response {
	return &http.Response{Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: hdr, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}
