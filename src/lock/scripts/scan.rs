//! `list`'s scripts (see `read::scan`, which decodes their replies): READ, one lock's keys on
//! one master in one script, and PAGE, one page of the scan when its names are too long for a
//! reply at the smallest SCAN count. Both write nothing.

use std::sync::LazyLock;

use super::bit;
use crate::lock::wire::lua::Lua;

/// Reads one lock's keys on one master (`read::scan::read` decodes the reply). Its bit is its
/// own, as every script's (see [`super::TABLE`]).
/// KEYS: the layout (`keys::Names::keys`) through the line's policy: lock 1, holder 2, queue 3, lease 4, waiters 5,
/// tickets 6, slots 7, limit 8 and slot holders 11 (see `slots`), readers 9, reader holders 10
/// (see `shared`), fence 12, order register 13, the line's policy 14. ARGV: how many waiters
/// (and shares, and slots) to read, the longest TTL redlock gives in ms
/// (`scripts::LONGEST_TTL_MS`).
///
/// Returns {TIME seconds, TIME microseconds, token or false, PTTL lock, holder record or false,
/// PTTL holder, {PTTL fence, OBJECT IDLETIME fence or -1, TYPE fence, OBJECT ENCODING fence,
/// and its value where it is a string not stored as a number (`int`)} or false (`TYPE` and
/// `OBJECT` leave the access time alone; GET, after the idle time is read, does not: see
/// `lock::FENCE_PROPOSE`, which writes an `int`), ZCARD queue, PTTL queue,
/// PTTL lease, PTTL waiters, PTTL tickets, {token, ticket, lease or false, record or false}*
/// (the first waiters by ticket, as INSPECT gives them to `status`), {token, lease, ...} (lapsed
/// leases: at or before the master's time in ms, as the queue's own scripts count them), {live
/// readers, PTTL readers, PTTL reader holders, {token, ms left, record or false}* (the first live
/// readers, as many as waiters; a share scored past the horizon below is none), TYPE readers, TYPE reader holders, how many shares are scored
/// past the master's time plus the longest TTL (not redlock's: see `scripts`)}, the order
/// register or false (`--order`; read with GET, which only the fencing counter must not be),
/// the line's policy or false (`--supersede`), the semaphore's slots or false where none of
/// its keys exists (`--limit`): {limit or false, live slots, PTTL slots, PTTL limit, PTTL slot
/// holders, {member, ms left, record or false}* (the first live slots by expiry, as many as
/// waiters; a revoked one under its renamed member), TYPE slots, TYPE slot holders, how many
/// slots are scored past the horizon}}. Every part is bounded: counts are ZCOUNTs, lists
/// ZRANGE with a LIMIT, so a key with many members costs no more than one with ARGV[1]
/// (see BENCHMARKS.md, "Bounded work per script call"). A key of an unexpected type reads as missing (pcall) rather than
/// failing the whole read. `false`, never `nil`, in the tables: a nil would end the reply there.
pub(in crate::lock) static READ: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local function try(...)
  local ok, value = pcall(redis.call, ...)
  if ok then return value end
  return false
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
  if fence[3] == 'string' and fence[4] ~= 'int' and fence[4] ~= '' then
    fence[5] = try('GET', KEYS[12])
  end
end
local limit = tonumber(ARGV[1])
local waiters = {}
local queued = try('ZRANGE', KEYS[3], 0, limit - 1, 'WITHSCORES') or {}
for i = 1, #queued, 2 do
  waiters[#waiters + 1] = queued[i]
  waiters[#waiters + 1] = queued[i + 1]
  waiters[#waiters + 1] = try('ZSCORE', KEYS[4], queued[i])
  waiters[#waiters + 1] = try('HGET', KEYS[5], queued[i])
end
local lapsed = try('ZRANGEBYSCORE', KEYS[4], '-inf', string.format('%d', now_ms), 'WITHSCORES',
                   'LIMIT', 0, limit) or {}
local shares = {}
local last = string.format('%d', now_ms + tonumber(ARGV[2]))
local live = try('ZRANGEBYSCORE', KEYS[9], string.format('(%d', now_ms), last, 'WITHSCORES',
                 'LIMIT', 0, limit) or {}
for i = 1, #live, 2 do
  shares[#shares + 1] = live[i]
  shares[#shares + 1] = tonumber(live[i + 1]) - now_ms
  shares[#shares + 1] = try('HGET', KEYS[10], live[i])
end
local readers = {try('ZCOUNT', KEYS[9], string.format('(%d', now_ms), last) or 0,
                 redis.call('PTTL', KEYS[9]), redis.call('PTTL', KEYS[10]), shares,
                 kind(KEYS[9]), kind(KEYS[10]),
                 try('ZCOUNT', KEYS[9], '(' .. last, '+inf') or 0}
local slots = false
if redis.call('EXISTS', KEYS[7]) + redis.call('EXISTS', KEYS[8]) + redis.call('EXISTS', KEYS[11]) > 0 then
  local taken = {}
  local held = try('ZRANGEBYSCORE', KEYS[7], string.format('(%d', now_ms), last, 'WITHSCORES',
                   'LIMIT', 0, limit) or {}
  for i = 1, #held, 2 do
    taken[#taken + 1] = held[i]
    taken[#taken + 1] = tonumber(held[i + 1]) - now_ms
    taken[#taken + 1] = try('HGET', KEYS[11], held[i])
  end
  slots = {try('GET', KEYS[8]), try('ZCOUNT', KEYS[7], string.format('(%d', now_ms), last) or 0,
           redis.call('PTTL', KEYS[7]), redis.call('PTTL', KEYS[8]), redis.call('PTTL', KEYS[11]),
           taken, kind(KEYS[7]), kind(KEYS[11]), try('ZCOUNT', KEYS[7], '(' .. last, '+inf') or 0}
end
return {now[1], now[2], try('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), try('GET', KEYS[2]),
        redis.call('PTTL', KEYS[2]), fence, try('ZCARD', KEYS[3]) or 0,
        redis.call('PTTL', KEYS[3]), redis.call('PTTL', KEYS[4]), redis.call('PTTL', KEYS[5]),
        redis.call('PTTL', KEYS[6]), waiters, lapsed,
        readers, try('GET', KEYS[13]), try('GET', KEYS[14]), slots}
",
        bit(&READ),
    )
});

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
