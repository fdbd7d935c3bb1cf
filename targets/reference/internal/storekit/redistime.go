package storekit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// timeOffset keeps the seconds of every representable year positive and 13 digits wide.
const timeOffset = 1_000_000_000_000

// EncodeTime renders t as 22 digits (13 of seconds+timeOffset, 9 of nanoseconds), so
// string order is time order, exactly. The Redis stores keep every time this way and
// compare them in Lua with TimeLua, against cut-offs computed from the caller's clock,
// never Redis TIME.
func EncodeTime(t time.Time) string {
	return fmt.Sprintf("%013d%09d", t.Unix()+timeOffset, t.Nanosecond())
}

// DecodeTime parses what EncodeTime wrote, in UTC.
func DecodeTime(s string) (time.Time, error) {
	if len(s) != 22 {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	sec, err1 := strconv.ParseInt(s[:13], 10, 64)
	nsec, err2 := strconv.ParseInt(s[13:], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return time.Unix(sec-timeOffset, nsec).UTC(), nil
}

// Cutoff is EncodeTime of d before now, or "" when d <= 0: the cut-off a claim script
// compares a hash's times with ("" = none: never expires, never taken over).
func Cutoff(now time.Time, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return EncodeTime(now.Add(-d))
}

// MinTTL is the smallest Redis expiry of a claim hash. The TTL only collects garbage; the
// claim rule works on the caller's clock, so a short retention must not make Redis drop a
// hash the caller still considers live.
const MinTTL = time.Minute

// TTLMillis is the Redis expiry, in milliseconds, of a claim hash kept for retention:
// twice the retention, at least MinTTL; 0 (none) when retention <= 0.
func TTLMillis(retention time.Duration) int64 {
	if retention <= 0 {
		return 0
	}
	return max(2*retention, MinTTL).Milliseconds()
}

// TimeLua defines the Lua function after(a, b): whether encoded time a is after encoded
// time b, compared numerically (seconds, then nanoseconds), not with the locale-dependent
// string order of Lua. A missing time is after nothing. Scripts prepend it.
const TimeLua = `
local function after(a, b)
  if not a or a == '' then return false end
  local x, y = tonumber(string.sub(a, 1, 13)), tonumber(string.sub(b, 1, 13))
  if x == y then x, y = tonumber(string.sub(a, 14)), tonumber(string.sub(b, 14)) end
  return x > y
end
`

// pruneScript deletes those KEYS created before ARGV[1] and returns how many.
var pruneScript = redis.NewScript(TimeLua + `
local n = 0
for _, k in ipairs(KEYS) do
  local c = redis.call('HGET', k, 'created')
  if c and after(ARGV[1], c) then redis.call('DEL', k) n = n + 1 end
end
return n
`)

// PruneCreatedBefore deletes the hashes under prefix whose field "created" (EncodeTime)
// is before cut, one script per batch of keys, and returns how many it deleted.
func PruneCreatedBefore(ctx context.Context, rdb *redis.Client, prefix string, cut time.Time) (int, error) {
	enc := EncodeTime(cut)
	total := 0
	err := ScanPrefix(ctx, rdb, prefix, func(keys []string) error {
		n, err := pruneScript.Run(ctx, rdb, keys, enc).Int()
		total += n
		return err
	})
	return total, err
}
