//! The superseding line's Lua (`--supersede`, see `kinds::supersede` for the protocol and why
//! it is sound): WAIT_SUPERSEDE, a waiter's turn that first evicts the older waiters of the
//! line on its master. (The check every other waiter of the lock makes before it joins is
//! WAIT's `FIFO_POLICY_CHECK`, in `queue`; what they answer decodes in `replies`: `Mark`.)
//!
//! Two keys of the layout (`keys::Names::keys`) are its own: 14, the line's policy (the word
//! `supersede`, with the queue's TTL, written by every superseding turn), and 15, the eviction
//! marks (a hash: an evicted waiter's token -> its evictor's ticket and waiting record, with
//! the queue's TTL, set again at each eviction).
//!
//! "Newer" is one order on every master: a waiter's (order, ticket, token), compared in that
//! order, where the order is the `order` of its waiting record (`--order`; a waiter without
//! one counts below every order) and the ticket is its place's score, the same on every master
//! (see `queue`, "One order on every master"). A master that saw the waiters arrive in another
//! order compares them the same way.

use std::sync::LazyLock;

use super::bit;
use super::history::REMEMBER_LUA;
use super::lock::SEMAPHORE_CHECK;
use super::queue::WAIT_BODY;
use super::queue_lua::FUNCTIONS;
use crate::lock::wire::lua::Lua;

/// What the line's policy key holds while superseding waiters live.
pub const SUPERSEDE_POLICY: &str = "supersede";

/// A superseding waiter's turn: the checks and the evictions, then WAIT's own body (the
/// heartbeat, the join and the take). In order, on this master:
/// 1. A waiter that a mark names is refused for good: `{'superseded', the mark}` (checked
///    before anything else, so a turn started by a late notice, or a re-join, never takes
///    the lock here once a newer waiter evicted it).
/// 2. A line with another policy refuses it: `{'policy', theirs}` (`fifo`: a line without the
///    policy key that already has live places, not its own).
/// 3. Among the first 100 places, those other than its own and the holder's (K's token: the
///    holder is never touched): when one is newer, the caller is the one superseded: it marks
///    itself with the newest, drops its place, wakes whoever that lets in (`hand_off`) and
///    answers `{'superseded', that mark}`. Otherwise each older one is evicted: its place
///    dropped, its mark written (the caller's ticket and waiting record), its wake channel
///    told, and whoever the evictions let in woken (never the caller, who goes on to take).
/// 4. The policy key is written with the queue's TTL, and WAIT's body runs.
///
/// KEYS: the whole layout. ARGV: WAIT's nine (token, ttl ms, holder record, ticket, waiting
/// record, lease ms, keep ms, join, history), then the publish command, the wake channel
/// prefix and suffix. Each eviction is recorded in the history (`superseded`, with the
/// evicted waiter's record and its evictor's), the caller's own too. Returns what WAIT returns, or one of the refusals above.
pub static WAIT_SUPERSEDE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            SEMAPHORE_CHECK,
            REMEMBER_LUA.as_str(),
            SUPERSEDE,
            WAIT_BODY,
        ],
        bit(&WAIT_SUPERSEDE),
    )
});

/// Steps 1 to 4 of [`WAIT_SUPERSEDE`].
const SUPERSEDE: &str = r"
local me = ARGV[1]
local marked = redis.call('HGET', KEYS[15], me)
if marked then
  return {'superseded', marked}
end
local now = now_ms()
local policy = redis.call('GET', KEYS[14])
if policy ~= 'supersede' then
  if policy or (redis.call('ZSCORE', KEYS[3], me) == false and first_live(now)) then
    return {'policy', policy or 'fifo'}
  end
end
local function order_in(record)
  local ok, value = pcall(cjson.decode, record or '')
  if ok and type(value) == 'table' and type(value.order) == 'number' then
    return value.order
  end
  return -1
end
local function newer(a, b)
  if a[1] ~= b[1] then
    return a[1] > b[1]
  end
  if a[2] ~= b[2] then
    return a[2] > b[2]
  end
  return a[3] > b[3]
end
local mine = {order_in(ARGV[5]), tonumber(ARGV[4]), me}
local holding = redis.call('GET', KEYS[1])
local before = eligible_lock(now)
local places = redis.call('ZRANGE', KEYS[3], 0, 99, 'WITHSCORES')
local newest = false
local older = {}
for i = 1, #places, 2 do
  local token = places[i]
  if token ~= me and token ~= holding then
    local other = {order_in(redis.call('HGET', KEYS[5], token)), tonumber(places[i + 1]), token}
    if newer(other, mine) then
      if not newest or newer(other, newest) then
        newest = other
      end
    else
      older[#older + 1] = token
    end
  end
end
local keep_ms = tonumber(ARGV[7])
if newest or #older > 0 then
  redis.call('PEXPIRE', KEYS[15], keep_ms)
end
redis.call('SET', KEYS[14], 'supersede', 'PX', keep_ms)
if newest then
  local evictor = redis.call('HGET', KEYS[5], newest[3]) or ''
  local by = string.format('%d', newest[2]) .. ' ' .. evictor
  fresh(KEYS[15], keep_ms, 'HSET', KEYS[15], me, by)
  hand_off(before, function() return eligible_lock(now) end, me, true, ARGV[10], ARGV[11],
           ARGV[12], '')
  remember(ARGV[9], 'superseded', me, nil, nil, ARGV[5], evictor, false)
  return {'superseded', by}
end
if #older > 0 then
  local by = ARGV[4] .. ' ' .. ARGV[5]
  for _, token in ipairs(older) do
    local who = redis.call('HGET', KEYS[5], token) or ''
    drop(token)
    fresh(KEYS[15], keep_ms, 'HSET', KEYS[15], token, by)
    redis.pcall(ARGV[10], ARGV[11] .. token .. ARGV[12], '')
    remember(ARGV[9], 'superseded', token, nil, nil, who, ARGV[5], false)
  end
  local after = eligible_lock(now)
  wake_newly(before, after, me, ARGV[10], ARGV[11], ARGV[12])
end
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_know_the_policy_word() {
        assert!(SUPERSEDE.contains(&format!("'{SUPERSEDE_POLICY}'")));
    }
}
