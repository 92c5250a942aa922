//! The Lua functions every queue-aware script shares (the lock's in `scripts`, the queue's own
//! in `scripts::queue`, the slots' in `scripts::slots`): the master's clock, a place dropped,
//! the first live waiter, who may take the lock, and the wake-ups. Text only, below all three,
//! so that none of them needs another for its pieces.

/// The functions the queue-aware scripts share; each script is those of them it uses, then
/// its body (`Lua::composed`: each definition starts at the margin, and nothing else does).
///
/// Wake-ups follow one rule (see `queue`, "Hand-off"): a script that may change who can take
/// the lock on this master computes the eligible waiters before and after its writes
/// (`eligible_lock`: the first live waiter, when the lock is free or already its own, and then
/// the first live waiter itself; when that waiter is a reader (`shared`), every live reader
/// before the first live writer, when the lock is free or held by readers; a slot script has
/// its own) and publishes to each newly eligible one except the caller
/// (`wake_newly`). So every change that lets a waiter in is announced by the master where it
/// happens, and nothing else is. The tail every releasing or leaving script ends with is one
/// function, `hand_off`: the caller's place dropped (`leaving`), the eligible waiters read
/// again (`eligible`, the script's own rule; `false` where nobody is queued: nothing to drop or
/// wake), the newly eligible woken, and, with nobody waiting, a real release (a `channel`)
/// that `announce` confirms published on the key's release channel.
/// `place` is the start of every waiter's turn (WAIT, READ_WAIT, WAIT_SLOT): the caller's place
/// kept, or made when it may `join`; `false` when this master has none and it may not.
/// The value K holds while readers hold it (`shared`): never a token, so that other clients'
/// `SET K x NX` fails and their `GET K == token` release finds it is not theirs.
pub const SHARED_MARKER: &str = "__redlock:shared";

/// The prefix of a reader's token (`tokens::reader_token`); the queue's Lua tells a waiting
/// reader from a waiting writer by it.
pub(in crate::lock) const READER_PREFIX: &str = "shr-";

/// `held_value` (for the lock's and the readers' scripts, whose KEYS[9] is the readers key):
/// what holds K, where the readers' key stands in for the marker should something else have
/// deleted K under live shares (see `shared`), so that a writer is refused there all the same.
///
/// The expiries (the argument is in `scripts`, "No key without a TTL"): `keep` (the four queue
/// keys' TTL; run before a script's first queue write, it is also the check that PEXPIRE is
/// allowed there), `fresh` (a write that may create a key, then that key's TTL at once),
/// `draw` (a ticket, the counter never without its TTL: it writes the counter alone, so it
/// keeps that key alone, and the places' keys are kept by their waiters' own writes), `join` (a place and its record, each
/// key given its TTL as it is created; the ticket counter raised with `SET ... PX`),
/// `until_past` (the time the keys of a sorted set of expiries must last to: its latest score
/// but the caller's, or the caller's new one, clamped to `LONGEST` past the master's time, a
/// whole number 1 ms past it), `beyond` (members scored past that horizon: not redlock's) and
/// `set_until` (`SET key value PXAT at`; `PX` before Redis 6.2).
pub(in crate::lock) const FUNCTIONS: &str = r"
local function now_ms()
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function drop(token)
  redis.call('ZREM', KEYS[3], token)
  redis.call('ZREM', KEYS[4], token)
  redis.call('HDEL', KEYS[5], token)
end
local function first_live(now)
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 100)
  if #lapsed > 0 then
    redis.call('ZREM', KEYS[3], unpack(lapsed))
    redis.call('ZREM', KEYS[4], unpack(lapsed))
    redis.call('HDEL', KEYS[5], unpack(lapsed))
  end
  -- At most 100 places without a live lease dropped per call (see the header).
  for _ = 1, 100 do
    local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
    if not first then
      return false
    end
    local lease = redis.call('ZSCORE', KEYS[4], first)
    if lease and tonumber(lease) > now then
      return first
    end
    drop(first)
  end
  -- Out of budget: the oldest place left stands in for the first live waiter.
  return redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false
end
local function keep(ms)
  for i = 3, 6 do
    redis.call('PEXPIRE', KEYS[i], ms)
  end
end
local function fresh(key, ms, ...)
  local result = redis.call(...)
  redis.call('PEXPIRE', key, ms)
  return result
end
local function draw(ms)
  redis.call('PEXPIRE', KEYS[6], ms)
  return fresh(KEYS[6], ms, 'INCR', KEYS[6])
end
local function join(token, ticket, record, ms)
  fresh(KEYS[3], ms, 'ZADD', KEYS[3], ticket, token)
  fresh(KEYS[5], ms, 'HSET', KEYS[5], token, record)
  if (tonumber(redis.call('GET', KEYS[6])) or 0) < tonumber(ticket) then
    redis.call('SET', KEYS[6], ticket, 'PX', ms)
  end
end
local LONGEST = 31622400000
local function until_past(key, token, score, now)
  local top = score
  -- The two highest, lowest first (ZRANGE with negative ranks: ZREVRANGE is one more
  -- command for an ACL to grant).
  local last = redis.call('ZRANGE', key, -2, -1, 'WITHSCORES')
  for i = #last - 1, 1, -2 do
    if last[i] ~= token then
      top = math.max(top, tonumber(last[i + 1]))
      break
    end
  end
  return string.format('%d', math.floor(math.min(top, now + LONGEST)) + 1)
end
local function beyond(key, now)
  return redis.call('ZRANGEBYSCORE', key, string.format('(%d', now + LONGEST), '+inf', 'LIMIT',
                    0, 100)
end
local function set_until(key, value, at, now)
  local set = redis.pcall('SET', key, value, 'PXAT', at)
  if type(set) == 'table' and set.err then
    redis.call('SET', key, value, 'PX', string.format('%d', tonumber(at) - now))
  end
end
local SHARED = '__redlock:shared'
local function is_reader(token)
  return string.sub(token, 1, 4) == 'shr-'
end
local function held_value()
  local current = redis.call('GET', KEYS[1])
  if not current and redis.call('EXISTS', KEYS[9]) == 1 then
    return SHARED
  end
  return current
end
local function eligible_lock(now)
  local first = first_live(now)
  if not first then
    return {}, false
  end
  local current = held_value()
  if not is_reader(first) then
    if current and current ~= first then
      return {}, first
    end
    return {first}, first
  end
  if current and current ~= SHARED then
    return {}, first
  end
  -- Readers at the head enter together: every reader before the first writer, among the
  -- first 100 places (see `shared`). first_live has just dropped the places that lapsed (at
  -- most 100 of them, as everywhere), so the places are read by name alone: one command,
  -- whatever the group's size.
  local group = {}
  for _, token in ipairs(redis.call('ZRANGE', KEYS[3], 0, 99)) do
    if not is_reader(token) then
      break
    end
    group[#group + 1] = token
  end
  return group, first
end
local function wake_newly(before, after, caller, publish, prefix, suffix)
  for _, token in ipairs(after) do
    local known = token == caller
    for _, old in ipairs(before) do
      known = known or old == token
    end
    if not known then
      redis.pcall(publish, prefix .. token .. suffix, '')
    end
  end
end
local function place(token, ticket, record, ms, may_join)
  local placed = redis.call('ZSCORE', KEYS[3], token)
  if not placed and may_join == '' then
    return false, false
  end
  keep(ms)
  if not placed then
    join(token, ticket, record, ms)
  end
  return true, placed
end
local function hand_off(before, eligible, caller, leaving, publish, prefix, suffix, channel,
                        announce)
  local waiting = false
  if eligible then
    if leaving then
      drop(caller)
    end
    local after
    after, waiting = eligible()
    wake_newly(before, after, caller, publish, prefix, suffix)
  end
  if channel ~= '' and not waiting and announce() then
    redis.pcall(publish, channel, '')
  end
end
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lua_knows_the_marker_and_the_readers_prefix() {
        assert!(FUNCTIONS.contains(&format!("local SHARED = '{SHARED_MARKER}'")));
        assert!(FUNCTIONS.contains(&format!(
            "local LONGEST = {}\n",
            super::super::LONGEST_TTL_MS
        )));
        assert!(FUNCTIONS.contains(&format!(
            "string.sub(token, 1, {}) == '{READER_PREFIX}'",
            READER_PREFIX.len()
        )));
    }
}
