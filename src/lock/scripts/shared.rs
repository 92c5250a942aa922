//! The Lua scripts of a shared lock's readers (`--shared`), each with the decoding of its
//! reply. Why they keep readers and writers apart is in `shared`; what they keep on each
//! master:
//!
//! - K itself, while readers hold it: the marker `SHARED_MARKER` (never a token), with the
//!   TTL of the longest live share there (plus 1 ms). A string, so that another client's
//!   `SET K x NX` fails and its `GET K == token` release finds it is not its own;
//! - the readers key, a sorted set: member = a reader's token, score = the master's own time in
//!   ms (`TIME`, inside the script) at which that reader's share there expires. A share lives
//!   exactly until its score: every count counts only members whose score is still ahead, and
//!   every script first prunes at most 100 of those whose time has come (the semaphore's
//!   bound, for the same reason: a script's work may not grow with what another client wrote),
//!   and at most 100 scored past any TTL redlock gives (`beyond`: another client's, not a
//!   share; see `scripts`);
//! - the reader holders key, a hash: token -> holder record (who, for `status`).
//!
//! K and both keys always expire 1 ms after the longest share (`until_past`, then PEXPIREAT
//! and `SET K marker PXAT` at that time, on the scores' own master clock, so K covers every
//! live share exactly on every Redis version), in the script that writes them: none outlives
//! the last share by more than 1 ms (a fractional score: by less than 2), and none is left
//! without a TTL even by a script that fails half-way: `share` computes the time first, gives
//! the keys that exist their expiry before its first write (which also finds an ACL without
//! PEXPIREAT before anything is written), and each key it creates its expiry at once (the
//! argument is in `scripts`, "No key without a TTL"). K is written last, with its TTL in the
//! same command. The last share to go takes all three with it.
//!
//! Each script checks the token before touching a share: a client only extends or removes its
//! own, and an extension never re-creates a share that expired (nor K, if something else
//! deleted it).
//!
//! KEYS, for every script here: 1 K, 2 K's holder record (a writer's), 3-6 K's queue (see
//! `scripts::queue`), 7 the semaphore's slots, 8 its limit (a key in use as a semaphore is
//! refused, as by the lock's ACQUIRE), 9 the readers, 10 their holder records; READ_WAIT also
//! reads 14, the line's policy (see `scripts::supersede`).

use std::sync::LazyLock;
use std::time::Duration;

use super::bit;
use super::history::REMEMBER_LUA;
use super::holder::Holder;
use super::lock::SEMAPHORE_CHECK;
use super::queue::FIFO_POLICY_CHECK;
use super::queue_lua::FUNCTIONS;
use super::revoke::{ACKNOWLEDGE, MARKER};
use crate::lock::wire::lua::Lua;
use crate::lock::wire::resp::Reply;

/// What the reader scripts add to the queue's `FUNCTIONS`: `prune_readers` (drops at most 100
/// shares whose time has come, and at most 100 scored past any TTL), `live_readers`,
/// `expire_readers` (the two readers' keys expire at a time), `keep_readers` (and K = the
/// marker until then), `share` (adds or renews ours, in the order the header argues), `eligible_writer` (the
/// first live waiter, when it is a writer that may take K now), `writer_waits` (a writer among
/// the first 100 places, or a longer line), and `reader_eligible` (this reader is among the
/// first 100 places, and every place ahead of it is a reader's). The last two read places by
/// name alone, after `first_live` dropped those that lapsed (at most 100 per call, as
/// everywhere in the queue: one left over only delays, never admits): two commands per call
/// whatever the line's length, so that a reader's turn costs the same with 4 or 64 readers.
const PRELUDE: &str = r"
local function prune_readers(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[9], '-inf', now, 'LIMIT', 0, 100)
  if #gone > 0 then
    redis.call('ZREM', KEYS[9], unpack(gone))
    redis.call('HDEL', KEYS[10], unpack(gone))
  end
  local foreign = beyond(KEYS[9], now)
  if #foreign > 0 then
    redis.call('ZREM', KEYS[9], unpack(foreign))
    redis.call('HDEL', KEYS[10], unpack(foreign))
  end
end
local function live_readers(now)
  return redis.call('ZCOUNT', KEYS[9], '(' .. now, '+inf')
end
local function live_share(token, now)
  local score = redis.call('ZSCORE', KEYS[9], token)
  return score and tonumber(score) > now
end
local function expire_readers(at)
  redis.call('PEXPIREAT', KEYS[9], at)
  redis.call('PEXPIREAT', KEYS[10], at)
end
local function keep_readers(at, now)
  expire_readers(at)
  set_until(KEYS[1], SHARED, at, now)
end
local function share(token, ttl, record, now)
  local score = now + tonumber(ttl)
  local at = until_past(KEYS[9], token, score, now)
  expire_readers(at)
  redis.call('ZADD', KEYS[9], score, token)
  redis.call('PEXPIREAT', KEYS[9], at)
  if record ~= '' then
    redis.call('HSET', KEYS[10], token, record)
    redis.call('PEXPIREAT', KEYS[10], at)
  end
  set_until(KEYS[1], SHARED, at, now)
end
local function eligible_writer(now)
  local first = first_live(now)
  if not first or is_reader(first) then
    return {}, first
  end
  local current = held_value()
  if current and current ~= first then
    return {}, first
  end
  return {first}, first
end
local function writer_waits(now)
  if redis.call('EXISTS', KEYS[3]) == 0 or not first_live(now) then
    return false
  end
  -- A line longer than the places read may hide a writer: count it as one.
  if redis.call('ZCARD', KEYS[3]) > 100 then
    return true
  end
  for _, place in ipairs(redis.call('ZRANGE', KEYS[3], 0, 99)) do
    if not is_reader(place) then
      return true
    end
  end
  return false
end
local function reader_eligible(token)
  local rank = redis.call('ZRANK', KEYS[3], token)
  if not rank or rank >= 100 then
    return false
  end
  if rank == 0 then
    return true
  end
  for _, place in ipairs(redis.call('ZRANGE', KEYS[3], 0, rank - 1)) do
    if not is_reader(place) then
      return false
    end
  end
  return true
end
";

/// Takes a share as a newcomer: where K is free or held by readers and no writer waits in the
/// queue (where it would be eligible at the back of the line; a reader behind a waiting
/// writer queues). ARGV: token, TTL ms, holder record (may
/// be empty), ticket wanted ('1' when the caller will wait), keep ms (the queue's), the
/// history (`scripts::history`: a share taken is recorded there, each reader its own turn).
/// Returns 1 when taken (or already ours: the same request sent again); `{'semaphore', L}`
/// for a key in use as a semaphore; else the lock's refusal: {holder record or nil, PTTL of
/// K, the value of K or nil, waiters, ticket or nil}.
pub static READ_ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            SEMAPHORE_CHECK,
            REMEMBER_LUA.as_str(),
            r"
local now = now_ms()
local current = redis.call('GET', KEYS[1])
if not current or current == SHARED then
  prune_readers(now)
  if live_share(ARGV[1], now) then
    return 1
  end
  if not writer_waits(now) then
    share(ARGV[1], ARGV[2], ARGV[3], now)
    remember(ARGV[6], 'taken', ARGV[1], ARGV[2], nil, ARGV[3], nil, true)
    return 1
  end
end
local ticket = false
if ARGV[4] ~= '' then
  ticket = draw(tonumber(ARGV[5]))
end
return {redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1]), current,
        redis.call('ZCARD', KEYS[3]), ticket}
",
        ],
        bit(&READ_ACQUIRE),
    )
});

/// A waiting reader's turn, as the lock's WAIT (heartbeat, join, same reply): takes a share
/// when K is free or held by readers and every live waiter ahead of it is a reader, or renews
/// a share an earlier turn left it. Taking keeps the place, as for the lock: the release gives
/// it up. A reader is a first-come, first-served waiter: a superseding line refuses it before
/// it joins, as it refuses WAIT (`FIFO_POLICY_CHECK`: `{'policy', theirs}`), for its place
/// would otherwise count as the newest in that line, and the superseding waiters ahead of it
/// would leave as superseded by a reader. KEYS: the layout through the line's policy, 14.
/// ARGV: token, TTL ms, holder record, ticket, waiter record, lease ms, keep ms, join, the
/// history (a share newly taken is recorded there).
pub static READ_WAIT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            SEMAPHORE_CHECK,
            FIFO_POLICY_CHECK,
            REMEMBER_LUA.as_str(),
            r"
local now = now_ms()
first_live(now)
local ms = tonumber(ARGV[7])
local in_line, placed = place(ARGV[1], ARGV[4], ARGV[5], ms, ARGV[8])
if not in_line then
  return 0
end
local lease = now + tonumber(ARGV[6])
fresh(KEYS[4], ms, 'ZADD', KEYS[4], lease, ARGV[1])
local current = redis.call('GET', KEYS[1])
if not current or current == SHARED then
  prune_readers(now)
  local renewing = live_share(ARGV[1], now)
  if renewing or reader_eligible(ARGV[1]) then
    share(ARGV[1], ARGV[2], ARGV[3], now)
    if not renewing then
      remember(ARGV[9], 'taken', ARGV[1], ARGV[2], nil, ARGV[3], nil, true)
    end
    return 1
  end
end
return {placed and 1 or 2, redis.call('ZRANK', KEYS[3], ARGV[1]), redis.call('ZCARD', KEYS[3]),
        redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1]), current}
",
        ],
        bit(&READ_WAIT),
    )
});

/// Extends a share if it is still ours and K still holds the marker: its expiry becomes now +
/// ms, and K and the readers' keys the TTL of the longest share. Never re-creates a share or K.
/// ARGV: token, ms. Returns 1 when extended, 0 when the share is not (or no longer) there.
pub static READ_EXTEND: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            r"
local now = now_ms()
prune_readers(now)
local current = redis.call('GET', KEYS[1])
if current == '__redlock:revoked' then
  return {'revoked', redis.call('GET', KEYS[2])}
end
if current ~= SHARED or not live_share(ARGV[1], now) then
  return 0
end
local score = now + tonumber(ARGV[2])
local at = until_past(KEYS[9], ARGV[1], score, now)
redis.call('ZADD', KEYS[9], 'XX', score, ARGV[1])
keep_readers(at, now)
return 1
",
        ],
        bit(&READ_EXTEND),
    )
});

/// Removes a share if it is still ours, with its record; K goes with the last live share (only
/// while it holds the marker), or else keeps the TTL of the longest one left. A real release
/// (ARGV[2], the release channel, not empty) also gives up the caller's place in the queue;
/// either way the waiters this change lets in here are woken (`wake_newly` with
/// `eligible_writer`: a reader's going never lets a reader in, since neither K held by readers
/// nor a reader's place keeps a reader out, so only the first waiter can be newly let in, a
/// writer, once K is free; unlike `eligible_lock`, this reads no group of readers, so a
/// reader's release costs the same however many readers wait), and
/// with nobody queued the last reader's release is announced on the release channel.
/// ARGV: token, release channel or empty, publish command, wake channel prefix and suffix, how
/// the turn ended, the history (recorded as RELEASE records it: `scripts::history`).
/// (One exception, a delay and never an admission: a place without a lease, written by
/// something else, that `first_live` drops at the head once the releaser's place is gone, may
/// let readers in unannounced; their heartbeat takes them.)
/// Returns 1 when a live share was removed, `{'acknowledged', the revocation record as it was}`
/// when a revocation naming the token was acknowledged (see `release_vote`), 0 otherwise.
pub static READ_RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            MARKER,
            ACKNOWLEDGE,
            REMEMBER_LUA.as_str(),
            r"
local now = now_ms()
local score = redis.call('ZSCORE', KEYS[9], ARGV[1])
-- A revoked reader's release says it stopped (see `revoke`); the last one opens K, to
-- readers and writers alike.
local revoked = not score and redis.call('GET', KEYS[1]) == REVOKED
local eligible = revoked and eligible_lock or eligible_writer
local queued = (score or revoked or ARGV[2] ~= '') and redis.call('EXISTS', KEYS[3]) == 1
local before = queued and eligible(now)
local released = 0
-- Who revoked it, read before `cross_off` rewrites the record: the releaser is told.
local record = revoked and redis.call('GET', KEYS[2])
local acknowledged = revoked and cross_off(ARGV[1])
if acknowledged then
  released = 1
end
if score then
  redis.call('ZREM', KEYS[9], ARGV[1])
  redis.call('HDEL', KEYS[10], ARGV[1])
  if tonumber(score) > now then
    released = 1
  end
  prune_readers(now)
  local marked = redis.call('GET', KEYS[1]) == SHARED
  if live_readers(now) == 0 then
    if marked then
      redis.call('DEL', KEYS[1])
    end
    redis.call('DEL', KEYS[9], KEYS[10])
  elseif marked then
    keep_readers(until_past(KEYS[9], ARGV[1], now, now), now)
  end
end
hand_off(before, queued and function() return eligible(now) end, ARGV[1], ARGV[2] ~= '',
         ARGV[3], ARGV[4], ARGV[5], ARGV[2],
         function() return released == 1 and redis.call('EXISTS', KEYS[1]) == 0 end)
if ARGV[2] == '' then
  if released == 1 then
    remember(ARGV[7], 'undone', ARGV[1], nil, nil, nil, nil, false)
  end
elseif released == 1 or ARGV[6] == 'lost' then
  remember(ARGV[7], 'end', ARGV[1], nil, ARGV[6], nil, nil, false)
end
if acknowledged then
  return {'acknowledged', record}
end
return released
",
        ],
        bit(&READ_RELEASE),
    )
});

/// One live share on one master.
#[derive(Clone, Debug, PartialEq)]
pub struct Share {
    pub token: String,
    /// How long until it expires there, unless renewed.
    pub expires_in: Duration,
    pub holder: Option<Holder>,
}

/// What one master has of a shared lock's readers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shares {
    /// How many live shares there are (may be more than `shares` lists).
    pub count: usize,
    pub shares: Vec<Share>,
}

/// Live shares as the scripts list them, `{token, ms left, record or nil/false}*`; a record is
/// believed only for the token it names.
pub(in crate::lock) fn shares_of(flat: &[Reply]) -> Vec<Share> {
    flat.chunks(3)
        .filter_map(|triple| {
            let token = triple.first()?.bulk()?;
            let expires_in = match triple.get(1) {
                Some(Reply::Int(ms)) if *ms >= 0 => Duration::from_millis(*ms as u64),
                _ => Duration::ZERO,
            };
            Some(Share {
                token: String::from_utf8_lossy(token).into_owned(),
                expires_in,
                holder: triple
                    .get(2)
                    .and_then(Reply::bulk)
                    .and_then(|record| Holder::from_record(record, token)),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    /// The readers part of READ's answer (the count is read::key's: see its tests).
    #[test]
    fn readers_decode_with_their_records() {
        let holder = Holder::this_process(&["job".into()]);
        let shares = shares_of(&[
            bulk("shr-a"),
            Reply::Int(1500),
            bulk(&holder.record("shr-a")),
            bulk("shr-b"),
            Reply::Int(900),
            Reply::Nil,
        ]);
        assert_eq!(shares.len(), 2);
        assert_eq!(shares[0].expires_in, Duration::from_millis(1500));
        assert!(shares[0].holder.is_some());
        assert!(shares[1].holder.is_none());
    }

    #[test]
    fn a_record_of_another_token_is_not_believed() {
        let holder = Holder::this_process(&["job".into()]);
        let shares = shares_of(&[
            bulk("shr-a"),
            Reply::Int(10),
            bulk(&holder.record("shr-other")),
        ]);
        assert!(shares[0].holder.is_none());
    }
}
