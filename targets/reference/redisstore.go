package reference

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// DefaultRedisURL is the Redis store's default address, redis://127.0.0.1:6379/0.
const DefaultRedisURL = storekit.DefaultRedisURL

// DefaultRedisPrefix namespaces every Redis key when OpenRedis gets an empty prefix.
const DefaultRedisPrefix = "retrysafe:"

// RedisStore is the Redis Store. Every write is one Lua script, so several processes
// sharing one Redis behave as instances of one service.
//
// Key layout (P is the prefix):
//   - P+"key:"+scope: hash {fp, state, token, created, locked, status, body}, with a
//     PEXPIRE of twice the retention (at least a minute; none when retention <= 0);
//   - P+"rec:"+id: hash {id, tenant, kind, ref, amount, currency, created};
//   - P+"idx:"+len(tenant)+":"+tenant+len(kind)+":"+kind+ref: list of record ids in
//     insertion order;
//   - P+"evt:"+id: hash {id, type, tenant, record_id, ref, data, created, sent}, an event of the
//     outbox, written by the script that writes its record; P+"outbox:pending" and
//     P+"outbox:sent": sorted sets of event ids by creation time (redisoutbox.go).
//
// Times are kept at microsecond precision like every store (storeTime), as fixed-width
// decimal strings (storekit.EncodeTime) that the scripts compare exactly against cut-offs
// computed from the caller's clock, never Redis TIME. Tokens of new keys come from
// initialToken, so a key deleted and claimed again never reuses a token.
type RedisStore struct {
	rdb    *redis.Client
	prefix string
}

var _ Store = (*RedisStore)(nil)

// OpenRedis connects to the Redis at url (DefaultRedisURL when empty) and checks it
// answers. prefix namespaces every key (when empty: the URL's key_prefix parameter, else
// DefaultRedisPrefix). Command retries are disabled unless the URL sets max_retries (see
// storekit.OpenRedis).
func OpenRedis(ctx context.Context, url string, prefix string) (*RedisStore, error) {
	url, fromURL := storekit.SplitRedisPrefix(url)
	prefix = cmp.Or(prefix, fromURL, DefaultRedisPrefix)
	rdb, err := storekit.OpenRedis(ctx, url)
	if err != nil {
		return nil, err
	}
	return &RedisStore{rdb: rdb, prefix: prefix}, nil
}

// putRecordLua writes the record given in ARGV[a..a+6] to hash rk and appends its id to
// the index list ik.
const putRecordLua = `
local function put_record(rk, ik, a)
  redis.call('HSET', rk, 'id', ARGV[a], 'tenant', ARGV[a+1], 'kind', ARGV[a+2],
    'ref', ARGV[a+3], 'amount', ARGV[a+4], 'currency', ARGV[a+5], 'created', ARGV[a+6])
  redis.call('RPUSH', ik, ARGV[a])
end
`

// claimScript is Decide, server-side. KEYS[1] key hash. ARGV: fingerprint, now,
// retention cutoff ("" = never expires), lock cutoff ("" = never taken over), TTL ms,
// token of a new key. Returns {1, token} claimed, {2} in flight, {3, 0, status, body}
// completed, {4} mismatch (the ClaimOutcome values).
var claimScript = redis.NewScript(storekit.TimeLua + `
local k = KEYS[1]
local row = redis.call('HMGET', k, 'fp', 'state', 'token', 'created', 'locked')
local token = ARGV[6]
if row[3] then
  token = string.format('%d', tonumber(row[3]) + 1)
  if ARGV[3] == '' or after(row[4], ARGV[3]) then
    if row[1] ~= ARGV[1] then return {4} end
    if row[2] == 'done' then
      local r = redis.call('HMGET', k, 'status', 'body')
      return {3, 0, r[1] or '0', r[2] or ''}
    end
    if ARGV[4] == '' or after(row[5], ARGV[4]) then return {2} end
  end
end
redis.call('DEL', k)
redis.call('HSET', k, 'fp', ARGV[1], 'state', 'in_progress', 'token', token,
  'created', ARGV[2], 'locked', ARGV[2])
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', k, ARGV[5]) end
return {1, token}
`)

// completeScript finishes a key. KEYS: key hash, then record hash and index list when
// there is a record, then event hash and pending set when it has an event. ARGV: mode, token,
// status, body, fingerprint, now, new-key token, record fields, event fields. Mode "full"
// checks the claim, writes the record (and its event) and marks the key done;
// "force" writes the record and upserts the key as done without any check (the token
// incremented, or the new-key token). Returns 1, or 0 if fenced.
var completeScript = redis.NewScript(putRecordLua + putEventLua + `
local k = KEYS[1]
local mode = ARGV[1]
local row = redis.call('HMGET', k, 'state', 'token')
if mode ~= 'force' and (row[1] ~= 'in_progress' or row[2] ~= ARGV[2]) then return 0 end
if #KEYS >= 3 then put_record(KEYS[2], KEYS[3], 8) end
if #KEYS == 5 then put_event(KEYS[4], KEYS[5], 15) end
if mode == 'force' then
  local token = ARGV[7]
  if row[2] then token = string.format('%d', tonumber(row[2]) + 1) end
  redis.call('HSET', k, 'fp', ARGV[5], 'token', token, 'created', ARGV[6], 'locked', ARGV[6])
end
redis.call('HSET', k, 'state', 'done', 'status', ARGV[3], 'body', ARGV[4])
return 1
`)

// addRecordScript writes a record: KEYS record hash, index list (and the event's hash and the
// pending set); ARGV record fields (then event fields).
var addRecordScript = redis.NewScript(putRecordLua + putEventLua + `
put_record(KEYS[1], KEYS[2], 1)
if #KEYS == 4 then put_event(KEYS[3], KEYS[4], 8) end
return 1
`)

// recordsScript returns the fields of every record in index KEYS[1], 7 per record.
// ARGV[1] is the record hash prefix.
var recordsScript = redis.NewScript(`
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local r = redis.call('HMGET', ARGV[1] .. id, 'id', 'tenant', 'kind', 'ref', 'amount', 'currency', 'created')
  if r[1] then
    for i = 1, 7 do out[#out + 1] = r[i] or '' end
  end
end
return out
`)

// Claim atomically applies Decide to the scope's key in one script.
func (s *RedisStore) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	v, err := claimScript.Run(ctx, s.rdb, []string{s.keyKey(req.Scope)}, req.Fingerprint,
		storekit.EncodeTime(storeTime(req.Now)), storekit.Cutoff(req.Now, req.Retention),
		storekit.Cutoff(req.Now, req.LockTimeout), storekit.TTLMillis(req.Retention),
		tokenArg(initialToken(req.Now))).Slice()
	if err != nil {
		return ClaimResult{}, fmt.Errorf("redis store: claim: %w", err)
	}
	out, _ := v[0].(int64)
	switch o := ClaimOutcome(out); o {
	case Claimed:
		ts, _ := v[1].(string)
		tok, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("redis store: claim: bad token %q", ts)
		}
		return ClaimResult{Outcome: o, Token: tok}, nil
	case Completed:
		st, _ := v[2].(string)
		body, _ := v[3].(string)
		status, err := strconv.Atoi(st)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("redis store: claim: bad status %q", st)
		}
		return ClaimResult{Outcome: o, Response: Response{Status: status, Body: []byte(body)}}, nil
	case InFlight, Mismatch:
		return ClaimResult{Outcome: o}, nil
	}
	return ClaimResult{}, fmt.Errorf("redis store: claim: unexpected reply %v", v)
}

// Lookup returns the key row of the scope, or nil when there is none.
func (s *RedisStore) Lookup(ctx context.Context, scope string) (*KeyRow, error) {
	m, err := s.rdb.HGetAll(ctx, s.keyKey(scope)).Result()
	if err != nil {
		return nil, fmt.Errorf("redis store: lookup: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	row := &KeyRow{Scope: scope, Fingerprint: m["fp"], State: State(m["state"])}
	if row.Token, err = strconv.ParseInt(m["token"], 10, 64); err == nil {
		if row.CreatedAt, err = storekit.DecodeTime(m["created"]); err == nil {
			row.LockedAt, err = storekit.DecodeTime(m["locked"])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redis store: lookup %q: %w", scope, err)
	}
	if row.State == StateDone {
		row.Response.Status, _ = strconv.Atoi(m["status"])
		row.Response.Body = []byte(m["body"])
	}
	return row, nil
}

// Complete stores the response and the record in one script if the key is still held
// with the token. Split writes the record unchecked by one script and then completes the
// key by a second one (as the other stores do); Force writes both without any check.
func (s *RedisStore) Complete(ctx context.Context, c Completion) (bool, error) {
	if c.Split && !c.Force && c.Record != nil {
		if err := s.addRecord(ctx, *c.Record, c.Event); err != nil {
			return false, err
		}
		c.Event = nil
		return s.complete(ctx, "full", c, nil)
	}
	mode := "full"
	if c.Force {
		mode = "force"
	}
	return s.complete(ctx, mode, c, c.Record)
}

func (s *RedisStore) complete(ctx context.Context, mode string, c Completion, r *Record) (bool, error) {
	keys := []string{s.keyKey(c.Scope)}
	args := []any{mode, tokenArg(c.Token), strconv.Itoa(c.Response.Status), c.Response.Body,
		c.Fingerprint, storekit.EncodeTime(storeTime(c.Now)), tokenArg(initialToken(c.Now))}
	if r != nil {
		keys = append(keys, s.recKey(r.ID), s.idxKey(r.Tenant, r.Kind, r.Ref))
		args = append(args, recordArgs(r)...)
		if c.Event != nil {
			keys = append(keys, s.evtKey(c.Event.ID), s.pendingKey())
			args = append(args, eventArgs(c.Event)...)
		}
	}
	n, err := completeScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return false, fmt.Errorf("redis store: complete (%s): %w", mode, err)
	}
	return n == 1, nil
}

// Release deletes the scope's key if it is in progress with this token.
func (s *RedisStore) Release(ctx context.Context, scope string, token int64) error {
	if err := storekit.Release(ctx, s.rdb, s.keyKey(scope), token); err != nil {
		return fmt.Errorf("redis store: release: %w", err)
	}
	return nil
}

// AddRecord writes a business record outside any key.
func (s *RedisStore) AddRecord(ctx context.Context, r Record) error { return s.addRecord(ctx, r, nil) }

// addRecord writes a record, and its event when e is not nil, in one script.
func (s *RedisStore) addRecord(ctx context.Context, r Record, e *OutboxEvent) error {
	keys, args := []string{s.recKey(r.ID), s.idxKey(r.Tenant, r.Kind, r.Ref)}, recordArgs(&r)
	if e != nil {
		keys, args = append(keys, s.evtKey(e.ID), s.pendingKey()), append(args, eventArgs(e)...)
	}
	if err := addRecordScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
		return fmt.Errorf("redis store: add record: %w", err)
	}
	return nil
}

// Records lists the records of a tenant, kind and ref, oldest first (ties in insertion
// order).
func (s *RedisStore) Records(ctx context.Context, tenant, kind, ref string) ([]Record, error) {
	v, err := recordsScript.Run(ctx, s.rdb, []string{s.idxKey(tenant, kind, ref)}, s.prefix+"rec:").StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis store: records: %w", err)
	}
	recs := make([]Record, 0, len(v)/7)
	for i := 0; i+7 <= len(v); i += 7 {
		f := v[i : i+7]
		amount, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis store: record %q: bad amount %q", f[0], f[4])
		}
		created, err := storekit.DecodeTime(f[6])
		if err != nil {
			return nil, fmt.Errorf("redis store: record %q: %w", f[0], err)
		}
		recs = append(recs, Record{ID: f[0], Tenant: f[1], Kind: f[2], Ref: f[3],
			Amount: amount, Currency: f[5], Created: created})
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Created.Before(recs[j].Created) })
	return recs, nil
}

// Prune deletes the keys created before createdBefore and returns how many. Redis also
// expires key hashes by itself (see RedisStore); Prune catches keys without a TTL.
func (s *RedisStore) Prune(ctx context.Context, createdBefore time.Time) (int, error) {
	n, err := storekit.PruneCreatedBefore(ctx, s.rdb, s.prefix+"key:", storeTime(createdBefore))
	if err != nil {
		return n, fmt.Errorf("redis store: prune: %w", err)
	}
	if err := s.pruneSent(ctx, createdBefore); err != nil {
		return n, fmt.Errorf("redis store: prune the outbox: %w", err)
	}
	return n, nil
}

// Close closes the Redis client.
func (s *RedisStore) Close() error { return s.rdb.Close() }

func (s *RedisStore) keyKey(scope string) string { return s.prefix + "key:" + scope }
func (s *RedisStore) recKey(id string) string    { return s.prefix + "rec:" + id }

// idxKey length-prefixes tenant and kind so that no two triples share an index.
func (s *RedisStore) idxKey(tenant, kind, ref string) string {
	return fmt.Sprintf("%sidx:%d:%s%d:%s%s", s.prefix, len(tenant), tenant, len(kind), kind, ref)
}

func recordArgs(r *Record) []any {
	return []any{r.ID, r.Tenant, r.Kind, r.Ref, strconv.FormatInt(r.Amount, 10), r.Currency, storekit.EncodeTime(storeTime(r.Created))}
}

func tokenArg(token int64) string { return strconv.FormatInt(token, 10) }

// Purge deletes every Redis key under the store's prefix: keys and records. Tests and the
// self-test use it to leave a shared Redis as they found it.
func (s *RedisStore) Purge(ctx context.Context) error { return storekit.Purge(ctx, s.rdb, s.prefix) }
