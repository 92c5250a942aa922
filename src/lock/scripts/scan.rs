//! The read scripts (see `read::scan`, which decodes their replies): READ, one key's every part
//! on one master in one script (for `status` and everything that judges a key, and for
//! `list`), and PAGE, one page of `list`'s scan when its names are too long for a reply at the
//! smallest SCAN count. Both write nothing.

use std::sync::LazyLock;

use super::bit;
use crate::lock::wire::lua::Lua;

/// Reads one key's every part on one master in one bounded script: how `status`, its watch,
/// re-entrance, release and `list` read a key (`read::scan::read` decodes the reply). Its bit
/// is its own, as every script's (see [`super::TABLE`]).
/// KEYS: the layout (`keys::Names::keys`) through the line's policy: lock 1, holder 2,
/// queue 3, lease 4, waiters 5, tickets 6, slots 7, limit 8 and slot holders 11 (see `slots`), readers 9, reader holders 10
/// (see `shared`), fence 12, order register 13, the line's policy 14, the history 16 (see
/// `history`: its newest [`HISTORY_READ`] events, for the key's last turn). ARGV: how many waiters to
/// read, the longest TTL redlock gives in ms (`scripts::LONGEST_TTL_MS`), how many readers'
/// shares, how many slots, and what the read is for: `status` (a judgement of the key) or
/// anything else (`list`'s scan).
///
/// What the two reads differ in, and why:
/// - **The fencing counter's value.** `status` reads it (a GET, after its idle time is read);
///   the scan does not, where the counter is stored as a number (`int`): `TYPE`, `OBJECT` and
///   `PTTL` leave its access time alone and GET does not, so a periodic `list --problems`
///   would never see a counter idle (see `read::scan`, and `lock::FENCE_PROPOSE`, which
///   writes an `int`). A counter stored as text the scan reads too, to judge it.
/// - **A key of another type.** For `status` the lock's own keys (1 to 5) are read with
///   `redis.call`, so that such a key fails the whole read, as it fails every script that
///   takes the lock, and the readers' keys (9, 10) and the slots' (7, 8, 11) with
///   `redis.pcall`, so that it fails their part only, as its error; the scan reads every key
///   with `pcall` and a key it cannot read as missing, so that one stray key does not hide a
///   lock (`list --problems` names it by its TYPE).
///
/// Returns {TIME seconds, TIME microseconds, token or false, PTTL lock, holder record or false,
/// PTTL holder, {PTTL fence, OBJECT IDLETIME fence or -1, TYPE fence, OBJECT ENCODING fence,
/// and its value (or GET's error) where it is read (above)} or false, ZCARD queue, PTTL queue,
/// PTTL lease, PTTL waiters, PTTL tickets, {token, ticket, lease or false, record or false}*
/// (the first waiters by ticket), {token, lease, ...} (lapsed leases: at or before the master's
/// time in ms, as the queue's own scripts count them, as many as waiters), {live readers, PTTL
/// readers, PTTL reader holders, {token, ms left, record or false}* (the first live readers; a
/// share scored past the horizon below is none), TYPE readers, TYPE reader holders, how many
/// shares are scored past the master's time plus the longest TTL (not redlock's: see
/// `scripts`), the error reading them gave or false}, the order register or false (`--order`;
/// read with GET, which only the fencing counter must not be), the line's policy or false
/// (`--supersede`), the semaphore's slots or false where none of its keys exists (`--limit`):
/// {limit or false, live slots, PTTL slots, PTTL limit, PTTL slot holders, {member, ms left,
/// record or false}* (the first live slots by expiry; a revoked one under its renamed member),
/// TYPE slots, TYPE slot holders, how many slots are scored past the horizon, the error
/// reading them gave or false}, the history's newest events where it is a list (else
/// false)}. Every part is bounded: counts are ZCOUNTs, lists ZRANGE with
/// a LIMIT, so a key with many members costs no more than one with the limits given (see
/// BENCHMARKS.md, "Bounded work per script call"). `false`, never `nil`, in the tables: a nil
/// would end the reply there.
pub(in crate::lock) static READ: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            &format!("local HISTORY_READ = {HISTORY_READ}\n"),
            r"
local strict = ARGV[5] == 'status'
local function try(...)
  local ok, value = pcall(redis.call, ...)
  if ok then return value end
  return false
end
local function own(...)
  if strict then return redis.call(...) end
  return try(...)
end
local failed = {}
local function part(name, ...)
  if not strict then return try(...) end
  local value = redis.pcall(...)
  if type(value) == 'table' and value.err then
    failed[name] = failed[name] or value
    return false
  end
  return value
end
local function kind(key)
  local found = try('TYPE', key)
  return found and found.ok or ''
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fence = false
if redis.call('EXISTS', KEYS[12]) == 1 then
  fence = {redis.call('PTTL', KEYS[12]), try('OBJECT', 'IDLETIME', KEYS[12]) or -1,
           kind(KEYS[12]), try('OBJECT', 'ENCODING', KEYS[12]) or ''}
  if strict then
    fence[5] = redis.pcall('GET', KEYS[12])
  elseif fence[3] == 'string' and fence[4] ~= 'int' and fence[4] ~= '' then
    fence[5] = try('GET', KEYS[12])
  end
end
local token, holder = own('GET', KEYS[1]), own('GET', KEYS[2])
local limit = tonumber(ARGV[1])
local waiters = {}
local queued = own('ZRANGE', KEYS[3], 0, limit - 1, 'WITHSCORES') or {}
for i = 1, #queued, 2 do
  waiters[#waiters + 1] = queued[i]
  waiters[#waiters + 1] = queued[i + 1]
  waiters[#waiters + 1] = own('ZSCORE', KEYS[4], queued[i])
  waiters[#waiters + 1] = own('HGET', KEYS[5], queued[i])
end
local queue_len = own('ZCARD', KEYS[3]) or 0
local lapsed = try('ZRANGEBYSCORE', KEYS[4], '-inf', string.format('%d', now_ms), 'WITHSCORES',
                   'LIMIT', 0, limit) or {}
local shares = {}
local last = string.format('%d', now_ms + tonumber(ARGV[2]))
local live = part('readers', 'ZRANGEBYSCORE', KEYS[9], string.format('(%d', now_ms), last,
                  'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3])) or {}
for i = 1, #live, 2 do
  shares[#shares + 1] = live[i]
  shares[#shares + 1] = tonumber(live[i + 1]) - now_ms
  shares[#shares + 1] = part('readers', 'HGET', KEYS[10], live[i])
end
local readers = {part('readers', 'ZCOUNT', KEYS[9], string.format('(%d', now_ms), last) or 0,
                 redis.call('PTTL', KEYS[9]), redis.call('PTTL', KEYS[10]), shares,
                 kind(KEYS[9]), kind(KEYS[10]),
                 try('ZCOUNT', KEYS[9], '(' .. last, '+inf') or 0, failed.readers or false}
local slots = false
if redis.call('EXISTS', KEYS[7]) + redis.call('EXISTS', KEYS[8]) + redis.call('EXISTS', KEYS[11]) > 0 then
  local taken = {}
  local held = part('slots', 'ZRANGEBYSCORE', KEYS[7], string.format('(%d', now_ms), last,
                    'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4])) or {}
  for i = 1, #held, 2 do
    taken[#taken + 1] = held[i]
    taken[#taken + 1] = tonumber(held[i + 1]) - now_ms
    taken[#taken + 1] = part('slots', 'HGET', KEYS[11], held[i])
  end
  slots = {part('slots', 'GET', KEYS[8]),
           try('ZCOUNT', KEYS[7], string.format('(%d', now_ms), last) or 0,
           redis.call('PTTL', KEYS[7]), redis.call('PTTL', KEYS[8]), redis.call('PTTL', KEYS[11]),
           taken, kind(KEYS[7]), kind(KEYS[11]), try('ZCOUNT', KEYS[7], '(' .. last, '+inf') or 0,
           failed.slots or false}
end
local history = false
if kind(KEYS[16]) == 'list' then
  history = try('LRANGE', KEYS[16], 0, HISTORY_READ - 1) or false
end
return {now[1], now[2], token, redis.call('PTTL', KEYS[1]), holder,
        redis.call('PTTL', KEYS[2]), fence, queue_len,
        redis.call('PTTL', KEYS[3]), redis.call('PTTL', KEYS[4]), redis.call('PTTL', KEYS[5]),
        redis.call('PTTL', KEYS[6]), waiters, lapsed,
        readers, try('GET', KEYS[13]), try('GET', KEYS[14]), slots, history}
",
        ],
        bit(&READ),
    )
});

/// How many of the history's newest events READ reads: enough for the last few turns' ends
/// (a turn has two events on a master, a waiter's partial holds a few more).
pub const HISTORY_READ: usize = 8;

/// One page of the scan, read on the master for a page whose names are too long for a reply:
/// the same SCAN, then every name whole that is at most ARGV[4] bytes and fits in a page of
/// ARGV[5] bytes, and of any other its first ARGV[6] bytes and its length. ARGV: cursor,
/// pattern, count. Reads nothing but names, writes nothing. Returns {next cursor, {name, ...},
/// {start, length, ...}}.
pub(in crate::lock) static PAGE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local page = redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3])
local whole, budget, shown = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local names, long = {}, {}
for _, name in ipairs(page[2]) do
  if #name <= whole and #name <= budget then
    names[#names + 1] = name
    budget = budget - #name
  else
    long[#long + 1] = string.sub(name, 1, shown)
    long[#long + 1] = #name
  end
end
return {page[1], names, long}
",
        bit(&PAGE),
    )
});
