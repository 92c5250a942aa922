//! A semaphore's slots revoked by `release --force`: the Lua FORCE runs on a slots key, and
//! what EXTEND_SLOT and RELEASE_SLOT do with a revoked slot. Why it never lets L + 1 holders
//! in is argued in `kinds::revoke`; what each master keeps:
//!
//! **A revoked slot stays counted.** FORCE renames each live slot of the slots key (KEYS[7]):
//! the member `token` becomes [`REVOKED_SLOT_PREFIX`]` .. token`, scored by the time the slot
//! had left there plus drift (`ms + ms · factor + 2`, ms the score minus the master's time),
//! and its holder record in KEYS[11] becomes, under the renamed member, a revocation record
//! naming that one token (the lock's record: `scripts::revoke`). Every count of slots
//! (`live_slots`, `eligible_slots`, `full`) counts members, so the renamed slot fills the
//! semaphore exactly as the slot did, and a little longer; `prune` drops it, record and all,
//! once its time has come, as any slot. The three keys are given the expiry of the longest
//! slot before the first renamed member is written, and the records' hash again as it may be
//! created: no key without a TTL.
//!
//! **Nobody renews it.** EXTEND_SLOT compares the member with the caller's token: the renamed
//! slot is not it, so nothing is extended; it answers `{'revoked', record}` instead of 0, as
//! the lock's EXTEND does, and the renewal reads who revoked it. A token that is itself a
//! renamed member (handed in from outside) is nobody's: refused by both scripts.
//!
//! **Who frees it early.** Only the revoked holder's release (or undo) with its own token:
//! RELEASE_SLOT, not finding `token`, removes `REVOKED_SLOT_PREFIX .. token` with its record,
//! and its hand-off wakes whoever the freed slot lets in. It answers `{'acknowledged',
//! record}` instead of 1, so that the releaser hears who revoked it; the round counts that
//! answer as a release done (`scripts::revoke`'s `release_vote`), exactly as 1.

/// What a revoked slot's member starts with, before the revoked token. Never a token's start
/// (tokens are `sem<L>-...`), so that no holder's compare finds it.
pub const REVOKED_SLOT_PREFIX: &str = "__redlock:revoked:";

/// The revoked token behind a member of the slots key, where it is a revoked slot.
pub fn revoked_slot(member: &str) -> Option<&str> {
    member.strip_prefix(REVOKED_SLOT_PREFIX)
}

/// The Lua of revoked slots, after the slots' `PRELUDE` (and, for `revoke_slots`, the
/// marker): `is_revoked_slot(member)`, `revoked_answer(token)` (EXTEND_SLOT's `{'revoked',
/// record}` for a revoked `token`, or 0), `acknowledge_slot(token)` (RELEASE_SLOT's: removes
/// the revoked slot of `token` with its record, and returns that record, `''` where it had
/// none, or false where there was no such slot) and `revoke_slots(by, factor)`
/// (FORCE's, on a slots key: see the header; `by` the forcer's record as JSON). It returns
/// `{'forced', {token, its record or false}*, longest ms kept}` where it revoked a live slot,
/// `{'revoked', an earlier record, ms}` where only revoked slots are live, `{'free'}` where no
/// slot is.
pub(in crate::lock::scripts) const REVOKED_SLOTS: &str = r"
local REVOKED_SLOT = '__redlock:revoked:'
local function is_revoked_slot(member)
  return string.sub(member, 1, #REVOKED_SLOT) == REVOKED_SLOT
end
local function revoked_answer(token)
  local member = REVOKED_SLOT .. token
  if not redis.call('ZSCORE', KEYS[7], member) then
    return 0
  end
  return {'revoked', redis.call('HGET', KEYS[11], member)}
end
local function acknowledge_slot(token)
  local member = REVOKED_SLOT .. token
  if redis.call('ZREM', KEYS[7], member) == 0 then
    return false
  end
  local record = redis.call('HGET', KEYS[11], member) or ''
  redis.call('HDEL', KEYS[11], member)
  return record
end
local function revoke_slots(by, factor)
  prune()
  local live = redis.call('ZRANGEBYSCORE', KEYS[7], '(' .. now,
                          string.format('%d', now + LONGEST), 'WITHSCORES')
  local fresh, earlier, longest = {}, false, 0
  for i = 1, #live, 2 do
    local member, ms = live[i], tonumber(live[i + 1]) - now
    if is_revoked_slot(member) then
      earlier = earlier or redis.call('HGET', KEYS[11], member)
      longest = math.max(longest, ms)
    else
      fresh[#fresh + 1] = {member, math.min(ms + math.floor(ms * factor) + 2, LONGEST)}
    end
  end
  if #fresh == 0 then
    if #live == 0 then
      return {'free'}
    end
    return {'revoked', earlier, math.floor(longest)}
  end
  local top = 0
  for _, slot in ipairs(fresh) do
    top = math.max(top, slot[2])
  end
  -- Every key lasts past the longest revoked slot before the first one is written.
  local at = until_past(KEYS[7], '', now + top, now)
  expire_slots(at)
  local limit = redis.call('GET', KEYS[8])
  if limit then
    set_until(KEYS[8], limit, at, now)
  end
  local answer = {}
  for _, slot in ipairs(fresh) do
    local token, ms = slot[1], slot[2]
    local old = redis.call('HGET', KEYS[11], token)
    local record = cjson.decode(by)
    record.token = REVOKED
    record.revoked = {{token = token, record = old or cjson.null}}
    record.unlisted = 0
    record.until_ms = now + ms
    -- The renamed slot first: the slot is counted throughout.
    redis.call('ZADD', KEYS[7], string.format('%d', now + ms), REVOKED_SLOT .. token)
    redis.call('ZREM', KEYS[7], token)
    redis.call('HSET', KEYS[11], REVOKED_SLOT .. token, cjson.encode(record))
    redis.call('PEXPIREAT', KEYS[11], at)
    redis.call('HDEL', KEYS[11], token)
    answer[#answer + 1] = token
    answer[#answer + 1] = old or false
    longest = math.max(longest, ms)
  end
  return {'forced', answer, longest}
end
";
