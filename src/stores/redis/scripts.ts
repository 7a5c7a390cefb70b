/**
 * The RedisStore's operations, each one Lua script, so that the check and the write are one
 * atomic step on the server (https://redis.io/docs/latest/develop/programmability/eval-intro/).
 * A record is one hash: `s` status, `e` expiry (epoch seconds), `l` lease end (epoch ms), `t`
 * lease token, `p` payload hash, `d` response data, `en`/`em`/`ec` the stored error. Every
 * write sets the key to expire just after the record stops protecting, so the TTL is the safety
 * net and never takes a record early. Times are the caller's (ARGV), never the server's clock,
 * as with DynamoDB: the fence compares tokens, the claim compares the caller's `nowMs`.
 */

/** KEYS[1] the record; ARGV nowMs, token, expiry, lease end, payload hash ('' for none), expire-at ms. Nil when written, else the record in the way. */
export const CLAIM = `
local r = redis.call('HGETALL', KEYS[1])
if #r > 0 then
  local h = {}
  for i = 1, #r, 2 do h[r[i]] = r[i + 1] end
  local now = tonumber(ARGV[1])
  local expired = tonumber(h.e) < math.floor(now / 1000)
  local lapsed = h.s == 'IN_PROGRESS' and tonumber(h.l or '0') < now
  if not expired and not lapsed then return r end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 's', 'IN_PROGRESS', 'e', ARGV[3], 'l', ARGV[4], 't', ARGV[2])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'p', ARGV[5]) end
redis.call('PEXPIREAT', KEYS[1], ARGV[6])
return false
`

/** KEYS[1]; ARGV token, expiry, has data ('1'/'0'), data, expire-at ms. 1 when ours, 0 when the lease was taken over. */
export const COMPLETE = `
if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'd', 'en', 'em', 'ec')
redis.call('HSET', KEYS[1], 's', 'COMPLETED', 'e', ARGV[2])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'd', ARGV[4]) end
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
return 1
`

/** KEYS[1]; ARGV token, expiry, error name, message, has code ('1'/'0'), code, expire-at ms. */
export const FAIL = `
if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'd', 'ec')
redis.call('HSET', KEYS[1], 's', 'FAILED', 'e', ARGV[2], 'en', ARGV[3], 'em', ARGV[4])
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'ec', ARGV[6]) end
redis.call('PEXPIREAT', KEYS[1], ARGV[7])
return 1
`

/** KEYS[1]; ARGV token. */
export const RELEASE = `
if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`
