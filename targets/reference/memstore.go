package reference

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemoryStore keeps keys and records in process memory behind one mutex. It is safe for
// concurrent use by many goroutines of one process, but two processes (or two instances of
// the API) each have their own: deduplication across instances is lost by construction, and
// nothing survives a restart.
type MemoryStore struct {
	mu     sync.Mutex
	keys   map[string]KeyRow
	byRef  map[[3]string][]Record // (tenant, kind, ref) -> its records, in insertion order
	outbox []outboxRow            // in insertion order
	jobs   []Job                  // the asynchronous operations' jobs, in insertion order (memjobs.go)
}

// outboxRow is an event of the memory store's outbox.
type outboxRow struct {
	OutboxEvent
	sent time.Time // zero: pending
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{keys: make(map[string]KeyRow), byRef: make(map[[3]string][]Record)}
}

// storeTime normalises a time to what every store keeps: microsecond precision, UTC.
func storeTime(t time.Time) time.Time {
	return time.UnixMicro(t.UnixMicro()).UTC()
}

// initialToken is the fencing token of a newly inserted key row. It starts at the claim
// time in microseconds rather than at 1, so a key that is deleted (pruned or released) and
// claimed again never reuses a token that a stale attempt might still hold.
func initialToken(now time.Time) int64 {
	return max(now.UnixMicro(), 1)
}

// freshRow is the row written by a claim that resets (or creates) a key.
func freshRow(req ClaimRequest, old *KeyRow) KeyRow {
	token := initialToken(req.Now)
	if old != nil {
		token = old.Token + 1
	}
	now := storeTime(req.Now)
	return KeyRow{
		Scope:       req.Scope,
		Fingerprint: req.Fingerprint,
		State:       StateInProgress,
		Token:       token,
		CreatedAt:   now,
		LockedAt:    now,
	}
}

// Claim implements Store.
func (m *MemoryStore) Claim(_ context.Context, req ClaimRequest) (ClaimResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var old *KeyRow
	if row, ok := m.keys[req.Scope]; ok {
		old = &row
	}
	outcome, reset := Decide(old, req)
	if reset {
		row := freshRow(req, old)
		m.keys[req.Scope] = row
		return ClaimResult{Outcome: Claimed, Token: row.Token}, nil
	}
	res := ClaimResult{Outcome: outcome}
	if outcome == Completed {
		res.Response = copyResponse(old.Response)
	}
	return res, nil
}

// Lookup implements Store.
func (m *MemoryStore) Lookup(_ context.Context, scope string) (*KeyRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	row, ok := m.keys[scope]
	if !ok {
		return nil, nil
	}
	row.Response = copyResponse(row.Response)
	return &row, nil
}

// Complete implements Store.
func (m *MemoryStore) Complete(_ context.Context, c Completion) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.Force {
		m.forceComplete(c)
		return true, nil
	}
	if c.Split && c.Record != nil {
		// First "transaction": the record and its event, whatever happens to the key afterwards.
		m.addRecord(*c.Record)
		m.addEvent(c.Event)
	}
	row, ok := m.keys[c.Scope]
	if !ok || row.Token != c.Token || row.State != StateInProgress {
		return false, nil
	}
	row.State = StateDone
	row.Response = copyResponse(c.Response)
	m.keys[c.Scope] = row
	m.addJob(c.Job)
	if !c.Split && c.Record != nil {
		m.addRecord(*c.Record)
		m.addEvent(c.Event)
	}
	return true, nil
}

// forceComplete writes the record and upserts the key as done without any check.
func (m *MemoryStore) forceComplete(c Completion) {
	if c.Record != nil {
		m.addRecord(*c.Record)
		m.addEvent(c.Event)
	}
	now := storeTime(c.Now)
	row, ok := m.keys[c.Scope]
	token := initialToken(c.Now)
	if ok {
		token = row.Token + 1
	}
	m.keys[c.Scope] = KeyRow{
		Scope:       c.Scope,
		Fingerprint: c.Fingerprint,
		State:       StateDone,
		Token:       token,
		CreatedAt:   now,
		LockedAt:    now,
		Response:    copyResponse(c.Response),
	}
}

// Release implements Store.
func (m *MemoryStore) Release(_ context.Context, scope string, token int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if row, ok := m.keys[scope]; ok && row.Token == token && row.State == StateInProgress {
		delete(m.keys, scope)
	}
	return nil
}

// AddRecord implements Store.
func (m *MemoryStore) AddRecord(_ context.Context, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addRecord(r)
	return nil
}

func (m *MemoryStore) addRecord(r Record) {
	r.Created = storeTime(r.Created)
	ref := [3]string{r.Tenant, r.Kind, r.Ref}
	m.byRef[ref] = append(m.byRef[ref], r)
}

// Records implements Store.
func (m *MemoryStore) Records(_ context.Context, tenant, kind, ref string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.byRef[[3]string{tenant, kind, ref}])
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Prune implements Store.
func (m *MemoryStore) Prune(_ context.Context, createdBefore time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cutoff := storeTime(createdBefore)
	n := 0
	for scope, row := range m.keys {
		if row.CreatedAt.Before(cutoff) {
			delete(m.keys, scope)
			n++
		}
	}
	m.outbox = slices.DeleteFunc(m.outbox, func(r outboxRow) bool { return !r.sent.IsZero() && r.Created.Before(cutoff) })
	return n, nil
}

// addEvent appends an event to the outbox (nothing for nil); m.mu is held.
func (m *MemoryStore) addEvent(e *OutboxEvent) {
	if e == nil {
		return
	}
	r := outboxRow{OutboxEvent: *e}
	r.Created, r.Data = storeTime(e.Created), bytes.Clone(e.Data)
	m.outbox = append(m.outbox, r)
}

// AddEvent implements Outbox.
func (m *MemoryStore) AddEvent(_ context.Context, e OutboxEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addEvent(&e)
	return nil
}

// PendingEvents implements Outbox.
func (m *MemoryStore) PendingEvents(_ context.Context, n int) ([]OutboxEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []OutboxEvent
	for _, r := range m.outbox {
		if len(out) == n {
			break
		}
		if r.sent.IsZero() {
			e := r.OutboxEvent
			e.Data = bytes.Clone(e.Data)
			out = append(out, e)
		}
	}
	return out, nil
}

// MarkEventSent implements Outbox.
func (m *MemoryStore) MarkEventSent(_ context.Context, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.outbox {
		if m.outbox[i].ID == id && m.outbox[i].sent.IsZero() {
			m.outbox[i].sent = storeTime(at)
		}
	}
	return nil
}

// Close implements Store; the memory store holds no resources.
func (m *MemoryStore) Close() error { return nil }

func copyResponse(r Response) Response {
	return Response{Status: r.Status, Body: bytes.Clone(r.Body)}
}
