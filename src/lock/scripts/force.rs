//! FORCE, the one script of `release --force` (the record it leaves and how its answer is read:
//! `scripts::revoke`; a semaphore's slots: `scripts::slots`, its `revoke`). A module of its
//! own because it is composed from both: the slots' scripts read the marker from `revoke`,
//! so `revoke` cannot read the slots' Lua back.

use std::sync::LazyLock;

use super::bit;
use super::history::REMEMBER_LUA;
use super::queue_lua::FUNCTIONS;
use super::revoke::MARKER;
use super::slots::{PRELUDE as SLOTS_PRELUDE, REVOKED_SLOTS};
use crate::lock::wire::lua::Lua;

/// FORCE: revokes whoever holds `K` on this master.
/// KEYS: the layout through the slots' records (K, its record, the queue's, the slots',
/// the readers'). ARGV: the record of whoever forces (a holder record as JSON, its note the
/// reason), the drift factor, the TTL to keep a `K` that has none (ms), the key's release
/// channel and the command to publish with: a force that revokes is announced there (best
/// effort, `pcall`), so that `status --watch` hears it at once; no waiter in line listens
/// there, and one that did would find the key still closed; the history (`scripts::history`:
/// each revoked token of the lock, of its readers and of a semaphore's slots is recorded
/// there, `by` the record).
/// Revokes the token in K, or every live reader (K then held by the readers' marker: their
/// shares and records go, and the first 100 are listed in the record, the rest counted in
/// `unlisted`, so that none of them can open K early while another may still read).
/// On a key used as a semaphore (its slots key there), every live slot is revoked instead,
/// each kept counted under its own revocation record (`scripts::slots`, `revoke_slots`).
/// Returns `{'forced', {token, its record or nil}*, ms kept}`, `{'revoked', record, PTTL}`
/// where `K` (or every live slot) was revoked already (the force stands: nothing is changed),
/// or `{'free'}`.
pub static FORCE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            SLOTS_PRELUDE,
            MARKER,
            REVOKED_SLOTS,
            REMEMBER_LUA.as_str(),
            r"
local current = redis.call('GET', KEYS[1])
if current == REVOKED then
  return {'revoked', redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1])}
end
if not current and redis.call('EXISTS', KEYS[7]) == 1 then
  local answer = revoke_slots(ARGV[1], tonumber(ARGV[2]))
  if answer[1] == 'forced' then
    redis.pcall(ARGV[5], ARGV[4], '')
    for i = 1, #answer[2], 2 do
      remember(ARGV[6], 'revoked', answer[2][i], nil, nil, nil, ARGV[1], false)
    end
  end
  return answer
end
local ms = redis.call('PTTL', KEYS[1])
local revoked, answer, unlisted = {}, {}, 0
if current == SHARED or (not current and redis.call('EXISTS', KEYS[9]) == 1) then
  -- Every live share (the first 100 listed, the rest counted), kept closed for the longest.
  local last = string.format('%d', now + LONGEST)
  local live = redis.call('ZRANGEBYSCORE', KEYS[9], '(' .. now, last, 'LIMIT', 0, 100)
  if #live == 0 then
    return {'free'}
  end
  unlisted = redis.call('ZCOUNT', KEYS[9], '(' .. now, last) - #live
  local top = redis.call('ZRANGEBYSCORE', KEYS[9], '(' .. now, last, 'WITHSCORES', 'LIMIT',
                         unlisted + #live - 1, 1)
  ms = math.max(ms, math.floor(tonumber(top[2]) - now))
  for _, token in ipairs(live) do
    local old = redis.call('HGET', KEYS[10], token)
    revoked[#revoked + 1] = {token = token, record = old or cjson.null}
    answer[#answer + 1] = token
    answer[#answer + 1] = old or false
  end
elseif current then
  local old = redis.call('GET', KEYS[2])
  revoked[1] = {token = current, record = old or cjson.null}
  answer = {current, old or false}
else
  return {'free'}
end
if ms < 0 then
  ms = tonumber(ARGV[3])
end
ms = ms + math.floor(ms * tonumber(ARGV[2])) + 2
local record = cjson.decode(ARGV[1])
record.token = REVOKED
record.revoked = revoked
record.unlisted = unlisted
record.until_ms = now + ms
-- K first: from here on it is closed, and both keys carry their TTL from their first write.
redis.call('SET', KEYS[1], REVOKED, 'PX', ms)
redis.call('SET', KEYS[2], cjson.encode(record), 'PX', ms)
redis.call('DEL', KEYS[9], KEYS[10])
for _, holder in ipairs(revoked) do
  remember(ARGV[6], 'revoked', holder.token, nil, nil, nil, ARGV[1], false)
end
-- Told on the release channel, so that `status --watch` hears it at once (best effort).
redis.pcall(ARGV[5], ARGV[4], '')
return {'forced', answer, ms}
",
        ],
        bit(&FORCE),
    )
});
