package reference

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// The Redis store's outbox: an event is a hash P+"evt:"+id, written by the script that writes
// its record (completeScript, addRecordScript: Redis runs a script as it runs a MULTI, all or
// nothing, with no other command between), and listed in P+"outbox:pending" until the relay
// marks it sent, then in P+"outbox:sent"; both are sorted sets scored by the event's creation
// time in microseconds.

// putEventLua writes the event given in ARGV[a..a+7] (the last: its score) to hash ek and adds
// its id to the pending set pk.
const putEventLua = `
local function put_event(ek, pk, a)
  redis.call('HSET', ek, 'id', ARGV[a], 'type', ARGV[a+1], 'tenant', ARGV[a+2], 'record_id', ARGV[a+3],
    'ref', ARGV[a+4], 'data', ARGV[a+5], 'created', ARGV[a+6])
  redis.call('ZADD', pk, ARGV[a+7], ARGV[a])
end
`

// addEventScript writes an event outside any record: KEYS event hash, pending set.
var addEventScript = redis.NewScript(putEventLua + `
put_event(KEYS[1], KEYS[2], 1)
return 1
`)

// pendingScript returns the fields of the first ARGV[2] pending events, 7 per event. KEYS[1] is
// the pending set, ARGV[1] the event hash prefix.
var pendingScript = redis.NewScript(`
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  local e = redis.call('HMGET', ARGV[1] .. id, 'id', 'type', 'tenant', 'record_id', 'ref', 'data', 'created')
  if e[1] then
    for i = 1, 7 do out[#out + 1] = e[i] or '' end
  end
end
return out
`)

// markSentScript moves an event from the pending set to the sent set and notes when it was
// sent. KEYS: event hash, pending set, sent set. ARGV: id, sent time.
var markSentScript = redis.NewScript(`
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], score, ARGV[1])
redis.call('HSET', KEYS[1], 'sent', ARGV[2])
return 1
`)

// pruneSentScript deletes the sent events scored below ARGV[2] (at most 1000 a run). KEYS[1] is
// the sent set, ARGV[1] the event hash prefix.
var pruneSentScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, 1000)
for _, id in ipairs(ids) do redis.call('DEL', ARGV[1] .. id) end
if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
return #ids
`)

// AddEvent implements Outbox.
func (s *RedisStore) AddEvent(ctx context.Context, e OutboxEvent) error {
	if err := addEventScript.Run(ctx, s.rdb, []string{s.evtKey(e.ID), s.pendingKey()}, eventArgs(&e)...).Err(); err != nil {
		return fmt.Errorf("redis store: add event: %w", err)
	}
	return nil
}

// PendingEvents implements Outbox.
func (s *RedisStore) PendingEvents(ctx context.Context, n int) ([]OutboxEvent, error) {
	v, err := pendingScript.Run(ctx, s.rdb, []string{s.pendingKey()}, s.prefix+"evt:", n).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis store: pending events: %w", err)
	}
	out := make([]OutboxEvent, 0, len(v)/7)
	for i := 0; i+7 <= len(v); i += 7 {
		f := v[i : i+7]
		created, err := storekit.DecodeTime(f[6])
		if err != nil {
			return nil, fmt.Errorf("redis store: event %q: %w", f[0], err)
		}
		out = append(out, OutboxEvent{ID: f[0], Type: f[1], Tenant: f[2], RecordID: f[3], Ref: f[4], Data: []byte(f[5]), Created: created})
	}
	return out, nil
}

// MarkEventSent implements Outbox.
func (s *RedisStore) MarkEventSent(ctx context.Context, id string, at time.Time) error {
	err := markSentScript.Run(ctx, s.rdb, []string{s.evtKey(id), s.pendingKey(), s.sentKey()}, id,
		storekit.EncodeTime(storeTime(at))).Err()
	if err != nil {
		return fmt.Errorf("redis store: mark event %s sent: %w", id, err)
	}
	return nil
}

// pruneSent deletes the sent events created before createdBefore.
func (s *RedisStore) pruneSent(ctx context.Context, createdBefore time.Time) error {
	cutoff := strconv.FormatInt(storeTime(createdBefore).UnixMicro(), 10)
	for range 100 {
		n, err := pruneSentScript.Run(ctx, s.rdb, []string{s.sentKey()}, s.prefix+"evt:", cutoff).Int()
		if err != nil || n < 1000 {
			return err
		}
	}
	return nil
}

func (s *RedisStore) evtKey(id string) string { return s.prefix + "evt:" + id }
func (s *RedisStore) pendingKey() string      { return s.prefix + "outbox:pending" }
func (s *RedisStore) sentKey() string         { return s.prefix + "outbox:sent" }

// eventArgs are an event's fields as the scripts take them, its score last.
func eventArgs(e *OutboxEvent) []any {
	created := storeTime(e.Created)
	return []any{e.ID, e.Type, e.Tenant, e.RecordID, e.Ref, e.Data, storekit.EncodeTime(created),
		strconv.FormatInt(created.UnixMicro(), 10)}
}
