package consumer

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore keeps dedupe records, effects and object states in process memory behind one
// mutex. It is safe for concurrent use by many goroutines of one process, but two processes
// each have their own: deduplication across instances is lost by construction, and nothing
// survives a restart.
type MemoryStore struct {
	mu      sync.Mutex
	events  map[string]EventRow
	effects []Effect
	objects map[string]int64
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{events: map[string]EventRow{}, objects: map[string]int64{}}
}

// Claim implements Store.
func (m *MemoryStore) Claim(_ context.Context, req ClaimRequest) (ClaimResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var old *EventRow
	if row, ok := m.events[req.Key]; ok {
		old = &row
	}
	outcome, reset := Decide(old, req)
	if !reset {
		return ClaimResult{Outcome: outcome}, nil
	}
	row := freshRow(req, old)
	m.events[req.Key] = row
	return ClaimResult{Outcome: Claimed, Token: row.Token}, nil
}

// Lookup implements Store.
func (m *MemoryStore) Lookup(_ context.Context, key string) (*EventRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	row, ok := m.events[key]
	if !ok {
		return nil, nil
	}
	return &row, nil
}

// Complete implements Store.
func (m *MemoryStore) Complete(_ context.Context, c Completion) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case c.Key == "":
	case c.Force:
		m.forceDone(c.Key, c.Now)
	default:
		if !m.markDone(c.Key, c.Token) {
			return false, nil
		}
	}
	e := c.Effect
	e.Created = storeTime(e.Created)
	m.effects = append(m.effects, e)
	if v, ok := m.objects[e.Object]; !ok || e.Version > v || c.OrderBlind {
		m.objects[e.Object] = e.Version
	}
	return true, nil
}

// markDone marks the record done if it is held with token; m.mu must be held.
func (m *MemoryStore) markDone(key string, token int64) bool {
	row, ok := m.events[key]
	if !ok || row.Token != token || row.State != EventInProgress {
		return false
	}
	row.State = EventDone
	m.events[key] = row
	return true
}

// forceDone upserts the record as done, whatever it was; m.mu must be held.
func (m *MemoryStore) forceDone(key string, now time.Time) {
	row, ok := m.events[key]
	token := initialToken(now)
	if ok {
		token = row.Token + 1
	}
	t := storeTime(now)
	m.events[key] = EventRow{Key: key, State: EventDone, Token: token, CreatedAt: t, LockedAt: t}
}

// MarkDone implements Store.
func (m *MemoryStore) MarkDone(_ context.Context, key string, token int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.markDone(key, token), nil
}

// Release implements Store.
func (m *MemoryStore) Release(_ context.Context, key string, token int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if row, ok := m.events[key]; ok && row.Token == token && row.State == EventInProgress {
		delete(m.events, key)
	}
	return nil
}

// Effects implements Store.
func (m *MemoryStore) Effects(_ context.Context, f EffectFilter) ([]Effect, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(m.effects), func(e Effect) bool { return !f.Match(e) }), nil
}

// ObjectVersion implements Store.
func (m *MemoryStore) ObjectVersion(_ context.Context, object string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.objects[object], nil
}

// Prune implements Store.
func (m *MemoryStore) Prune(_ context.Context, createdBefore time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cutoff := storeTime(createdBefore)
	n := 0
	for key, row := range m.events {
		if row.CreatedAt.Before(cutoff) {
			delete(m.events, key)
			n++
		}
	}
	return n, nil
}

// Close implements Store; the memory store holds no resources.
func (m *MemoryStore) Close() error { return nil }
