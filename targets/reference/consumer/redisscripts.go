package consumer

import (
	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// versionLua compares two canonical decimal versions (no sign, no leading zeros) exactly,
// byte by byte, whatever their size and Lua's locale.
const versionLua = `
local function newer(a, b)
  if #a ~= #b then return #a > #b end
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return false
end
`

// claimScript is Decide, server-side. KEYS[1] event hash. ARGV: now, retention cutoff
// ("" = never expires), lock cutoff ("" = never taken over), TTL ms (0 = none), token of a
// new record. Returns {1, token} claimed, {2} in flight, {3} done (the ClaimOutcome values).
var claimScript = redis.NewScript(storekit.TimeLua + `
local k = KEYS[1]
local row = redis.call('HMGET', k, 'state', 'token', 'created', 'locked')
local token = ARGV[5]
if row[2] then
  token = string.format('%d', tonumber(row[2]) + 1)
  if ARGV[2] == '' or after(row[3], ARGV[2]) then
    if row[1] == 'done' then return {3} end
    if ARGV[3] == '' or after(row[4], ARGV[3]) then return {2} end
  end
end
redis.call('HSET', k, 'state', 'in_progress', 'token', token, 'created', ARGV[1], 'locked', ARGV[1])
if tonumber(ARGV[4]) > 0 then redis.call('PEXPIRE', k, ARGV[4]) else redis.call('PERSIST', k) end
return {1, token}
`)

// completeScript applies a completion. KEYS: event hash, all-effects list, the event's
// effects list, the object's effects list, object hash, the operation's effects list. ARGV: mode ("claim" checks the
// claim and marks it done; "force" upserts the record as done; "none" leaves it alone),
// token, effect JSON, version, event id, now, new-record token, order-blind ("1"/"0"),
// TTL ms, whether the effect names an operation ("1"/"0"). Returns 1, or 0 if fenced (nothing written).
var completeScript = redis.NewScript(versionLua + `
local mode = ARGV[1]
if mode == 'claim' then
  local row = redis.call('HMGET', KEYS[1], 'state', 'token')
  if row[1] ~= 'in_progress' or row[2] ~= ARGV[2] then return 0 end
  redis.call('HSET', KEYS[1], 'state', 'done')
elseif mode == 'force' then
  local old = redis.call('HGET', KEYS[1], 'token')
  local token = ARGV[7]
  if old then token = string.format('%d', tonumber(old) + 1) end
  redis.call('HSET', KEYS[1], 'state', 'done', 'token', token, 'created', ARGV[6], 'locked', ARGV[6])
  if tonumber(ARGV[9]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[9]) end
end
for i = 2, 4 do redis.call('RPUSH', KEYS[i], ARGV[3]) end
if ARGV[10] == '1' then redis.call('RPUSH', KEYS[6], ARGV[3]) end
local cur = redis.call('HGET', KEYS[5], 'version')
if ARGV[8] == '1' or not cur or newer(ARGV[4], cur) then
  redis.call('HSET', KEYS[5], 'version', ARGV[4], 'event', ARGV[5], 'updated', ARGV[6])
end
return 1
`)

// markDoneScript marks KEYS[1] done if it is in progress with token ARGV[1].
var markDoneScript = redis.NewScript(`
local row = redis.call('HMGET', KEYS[1], 'state', 'token')
if row[1] == 'in_progress' and row[2] == ARGV[1] then redis.call('HSET', KEYS[1], 'state', 'done') return 1 end
return 0
`)
