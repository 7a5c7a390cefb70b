import { createHash } from 'node:crypto'
/**
 * The RedisStore's operations, each one Lua script, so that the check and the write are one
 * atomic step on the server (https://redis.io/docs/latest/develop/programmability/eval-intro/).
 *
 * A record is one string (docs/redis.md: semantics and limits): a header of five lines, then a
 * body the scripts never look into.
 *
 *     status \n expiry (epoch s) \n lease end (epoch ms) \n lease token \n payload hash \n body
 *
 * - A bulk read is one `MGET`: Redis reads many strings natively, where reading a hash's fields
 *   from a script costs the server a Lua call and a table per key — fifty times the server time
 *   of the `MGET` of the same records on the bench's machine.
 * - The scripts judge a record from its header with one anchored `string.match`: no `cjson`
 *   (bundled with Redis 7, Valkey and ElastiCache today, but one less thing to trust), and epoch
 *   milliseconds never go through a JSON encoder's number formatting.
 * - The body is what the client made of the result (`d` and the JSON text it already is) or of
 *   the error (`e` and JSON), or nothing: a result is not escaped again inside another document.
 * - An empty payload hash is none. The header's fields hold no line break: the store refuses a
 *   lease token or payload hash that has one, and an empty token (the lifecycle's are a UUID and
 *   hex).
 *
 * Every write sets when the key expires, just after the record stops protecting (`SET … PXAT`,
 * inside the script: no client can drop it; Redis 6.2 or later, every Valkey). Times are the
 * caller's (ARGV), never the server's clock: the claim judges `isClaimable` at the caller's
 * `nowMs`, the fences compare tokens.
 */

// A number as the store writes them (decimal digits, a sign, a fraction), and as record.ts
// reads them: Lua's `tonumber` alone would also take `0x10`, `1e3` or `-inf`, which the client
// does not read as numbers, so the two would disagree on whether a value is a record at all.
const NUMBER = String.raw`'^%-?%d+%.?%d*$'`

// The header's five fields, as captures; `v` the record's text.
const HEADER = String.raw`string.match(v, '^([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n')`

/**
 * KEYS[1] the record; ARGV nowMs, nowSeconds (floor of nowMs / 1000), token, expiry, lease end,
 * payload hash ('' for none), expire-at (epoch ms). Nil when written; otherwise the text of the
 * value in the way, and nothing is written: a record that protects the key, or a value that is
 * not a record at all (never overwritten: the client reports it).
 */
export const CLAIM = String.raw`
local v = redis.call('GET', KEYS[1])
if v then
  local s, e, l = ${HEADER}
  local expiry = string.match(e or '', ${NUMBER}) and tonumber(e)
  local lease = string.match(l or '', ${NUMBER}) and tonumber(l)
  if not expiry or (l ~= '' and not lease) then return v end
  if s ~= 'IN_PROGRESS' and s ~= 'COMPLETED' and s ~= 'FAILED' then return v end
  local expired = expiry < tonumber(ARGV[2])
  local lapsed = s == 'IN_PROGRESS' and (lease or 0) < tonumber(ARGV[1])
  if not expired and not lapsed then return v end
end
redis.call('SET', KEYS[1], 'IN_PROGRESS\n' .. ARGV[4] .. '\n' .. ARGV[5] .. '\n' .. ARGV[3] .. '\n' .. ARGV[6] .. '\n',
  'PXAT', ARGV[7])
return false
`

/**
 * A fenced settlement to `status`: KEYS[1]; ARGV token, expiry, body, expire-at. 1 when the
 * token holds the record (rewritten whole: lease and payload hash kept, the body replaced, so a
 * record settled again under the same lease keeps nothing of the earlier settlement), else 0
 * and nothing is written.
 */
const settle = (status: 'COMPLETED' | 'FAILED'): string => String.raw`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local s, e, l, t, p = ${HEADER}
if t ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], '${status}\n' .. ARGV[2] .. '\n' .. l .. '\n' .. t .. '\n' .. p .. '\n' .. ARGV[3],
  'PXAT', ARGV[4])
return 1
`

export const COMPLETE = settle('COMPLETED')
export const FAIL = settle('FAILED')

/** KEYS[1]; ARGV token. 1 and the record deleted when the token holds it, else 0. */
export const RELEASE = String.raw`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local s, e, l, t = ${HEADER}
if t ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

/**
 * KEYS the records; no ARGV. Their values, in KEYS order (nil for none): an `MGET`, inside a
 * script so that every client sends it to the primary, for a client that may send a bare `MGET`
 * or `GET` to a replica (GLIDE's `readFrom`, an ioredis Cluster's `scaleReads`): a replica may
 * not yet have the claim it is asked about, where `read` promises the latest write. Sent whole
 * (`EVAL`): it is as short as its SHA1, and a server that forgot it cannot refuse it.
 */
export const READ = "return redis.call('MGET', unpack(KEYS))"

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

/** A script run by its SHA1 (`EVALSHA`), sent whole (`EVAL`) when the server does not know it. */
export interface Script { source: string, sha: string }
const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') })
export const SCRIPTS = {
  claim: script(CLAIM),
  complete: script(COMPLETE),
  fail: script(FAIL),
  release: script(RELEASE),
  many: script(MANY)
}
