/**
 * The RedisStore's operations, each one Lua script, so that the check and the write are one
 * atomic step on the server (https://redis.io/docs/latest/develop/programmability/eval-intro/).
 *
 * A record is one hash, not one JSON string:
 * - the scripts compare a token and two numbers without decoding anything, so they need no
 *   `cjson` (bundled with Redis 7, Valkey and ElastiCache today, but one less thing to trust) and
 *   never round-trip epoch milliseconds through a JSON encoder's number formatting;
 * - `responseData` is stored as the JSON text it already is, not escaped again inside another
 *   JSON document (a quote-heavy result would grow by a fifth);
 * - `HMGET` of the fields reads it back in one command, as an array in RESP2 and RESP3 alike, so
 *   a refused claim returns the record in the way in the same round trip.
 * Small records stay in Redis's compact listpack encoding (short field names); one with a large
 * response costs a hash table's few hundred bytes more — little beside the response itself.
 *
 * Every write sets the key to expire just after the record stops protecting (`PEXPIREAT`, inside
 * the script: no client can drop it). Times are the caller's (ARGV), never the server's clock:
 * the claim judges `isClaimable` at the caller's `nowMs`, the fences compare tokens.
 */

/**
 * The hash's fields, in the order `HMGET` returns them: status, expiry (epoch s), lease end
 * (epoch ms), lease token, payload hash, response data, the stored error's name, message, code.
 */
export const FIELDS = ['s', 'e', 'l', 't', 'p', 'd', 'en', 'em', 'ec'] as const

const HMGET = `redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`

/**
 * KEYS[1] the record; ARGV nowMs, nowSeconds (floor of nowMs / 1000), token, expiry, lease end,
 * has payload hash ('1'/'0'), payload hash, expire-at (epoch ms). Nil when written; otherwise
 * the fields of the record in the way (`FIELDS` order), and nothing is written.
 */
export const CLAIM = `
local f = ${HMGET}
if f[1] then
  local expired = tonumber(f[2]) < tonumber(ARGV[2])
  local lapsed = f[1] == 'IN_PROGRESS' and tonumber(f[3] or '0') < tonumber(ARGV[1])
  if not expired and not lapsed then return f end
  redis.call('DEL', KEYS[1])
end
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[1], 's', 'IN_PROGRESS', 'e', ARGV[4], 'l', ARGV[5], 't', ARGV[3], 'p', ARGV[7])
else
  redis.call('HSET', KEYS[1], 's', 'IN_PROGRESS', 'e', ARGV[4], 'l', ARGV[5], 't', ARGV[3])
end
redis.call('PEXPIREAT', KEYS[1], ARGV[8])
return false
`

// The fenced writes read the token and the status in one call: a record still IN_PROGRESS was
// written whole by its claim and has no result or error fields to clear, so the common case is
// three calls on the server (read, one HSET, PEXPIREAT); one settled before under the same
// lease (an answer lost, the write sent again) has its old fields cleared first.
const FENCE = `
local f = redis.call('HMGET', KEYS[1], 't', 's')
if f[1] ~= ARGV[1] then return 0 end`

/** KEYS[1]; ARGV token, expiry, has data ('1'/'0'), data, expire-at. 1 when the token holds the record, else 0 and nothing is written. */
export const COMPLETE = `${FENCE}
if f[2] ~= 'IN_PROGRESS' then redis.call('HDEL', KEYS[1], 'd', 'en', 'em', 'ec') end
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 's', 'COMPLETED', 'e', ARGV[2], 'd', ARGV[4])
else
  redis.call('HSET', KEYS[1], 's', 'COMPLETED', 'e', ARGV[2])
end
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
return 1
`

/** KEYS[1]; ARGV token, expiry, error name, message, has code ('1'/'0'), code, expire-at. 1 when the token holds the record, else 0. */
export const FAIL = `${FENCE}
if f[2] ~= 'IN_PROGRESS' then redis.call('HDEL', KEYS[1], 'd', 'ec') end
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[1], 's', 'FAILED', 'e', ARGV[2], 'en', ARGV[3], 'em', ARGV[4], 'ec', ARGV[6])
else
  redis.call('HSET', KEYS[1], 's', 'FAILED', 'e', ARGV[2], 'en', ARGV[3], 'em', ARGV[4])
end
redis.call('PEXPIREAT', KEYS[1], ARGV[7])
return 1
`

/**
 * KEYS the records; no ARGV. The fields of each (`FIELDS` order), in KEYS order: a slice of
 * reads in one command and one reply, where a command per key costs the client a command, a
 * reply and a promise each. Only where every key is on one server (no cluster).
 */
export const READ = `
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HMGET', key, ${FIELDS.map((field) => `'${field}'`).join(', ')}) end
return out
`

/** KEYS[1]; ARGV token. 1 and the record deleted when the token holds it, else 0. */
export const RELEASE = `
if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

/** What each script is called in a batch of calls (`MANY`). */
export type ScriptName = 'claim' | 'complete' | 'fail' | 'release'

// A script's body as a function of its key `k` and of its arguments' offset `o` in ARGV, so that
// a batch runs it with no table built per call (what a call of `MANY` costs is mostly this).
const asCall = (script: string): string => script.replaceAll('KEYS[1]', 'k').replace(/ARGV\[(\d+)\]/g, 'ARGV[o + $1]')

/**
 * Many calls of the scripts above in one command, each about its own key: KEYS the keys, in
 * order; ARGV, for each call in turn, the script's name, its number of arguments, then those.
 * Each call runs as its script alone would (its body, about its own key and arguments),
 * trapped: `{1, reply}` for each, or `{0, message}` for one that raised an error, so that one
 * bad key (a hash of another application, WRONGTYPE) fails its own call and none of the others.
 * Only where every key is on one server (no cluster).
 */
export const MANY = `
local scripts = {
  claim = function (k, o) ${asCall(CLAIM)} end,
  complete = function (k, o) ${asCall(COMPLETE)} end,
  fail = function (k, o) ${asCall(FAIL)} end,
  release = function (k, o) ${asCall(RELEASE)} end
}
local out = {}
local at = 0
for i = 1, #KEYS do
  local ok, reply = pcall(scripts[ARGV[at + 1]], KEYS[i], at + 2)
  if ok then
    out[i] = { 1, reply }
  else
    out[i] = { 0, type(reply) == 'table' and (reply.err or 'error') or tostring(reply) }
  end
  at = at + 2 + tonumber(ARGV[at + 2])
end
return out
`
