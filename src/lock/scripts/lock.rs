//! The Lua scripts each master runs, and the keys they touch.
//!
//! The keys they touch are named in [`super::keys`] (documented in docs/protocol.md, "Key layout"):
//! - `K` holds the lock token, a random string, with the lock's TTL. Any Redlock client that
//!   contends with `SET K <token> NX PX <ttl>` on the same masters interoperates with us.
//! - the holder record holds a small JSON record of who holds the lock (host, pid, user,
//!   command, since, and the token it holds it with). It is written, extended and deleted in
//!   the same script as `K`, so it never outlives a lock of ours. It can outlive it when
//!   something else deletes or replaces `K`: that is why it names the token, and is believed
//!   only while `K` still holds that token.
//! - the fencing counter (`--fence`): a number, without TTL.
//!
//! All keys of one script are in the lock's cluster hash slot (see `keys`).
//!
//! Every script checks the token before touching anything, so a client can only ever extend or
//! delete its own lock, and nothing here re-creates a key that expired: a failed extension never
//! resurrects or deletes a lock.

use std::sync::LazyLock;
use std::time::Duration;

use super::bit;
use super::history::REMEMBER_LUA;
use super::holder::Holder;
use super::queue_lua::{FUNCTIONS, SHARED_MARKER};
use super::replies::Vote;
use super::revoke::{ACKNOWLEDGE, MARKER, REVOKED_MARKER};
pub use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// Takes the lock, unless others are queued for it (see `queue`): `SET K token NX PX ttl`, then
/// the holder record with the same TTL. Nobody waiting costs three `EXISTS` more than a bare
/// `SET NX` (the queue, a semaphore's slots, readers): no clock, no ticket.
/// KEYS: see `scripts::queue`. ARGV: token, ttl in ms, holder record (may be empty), ticket
/// wanted ('1' when the caller will wait: a refusal then also draws a ticket), keep ms, the
/// history (`scripts::history`: a take is recorded there).
/// Returns 1 when the lock was taken, or was already taken with this very token (the same
/// request sent again after a connection failed; tokens are never reused); otherwise {holder
/// record or nil, PTTL of the lock, the token in the lock or nil, waiters, ticket or nil}, so
/// that a refusal also says who is in the way, at no extra round trip.
pub static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            SEMAPHORE_CHECK,
            REMEMBER_LUA.as_str(),
            r"
local waiting = redis.call('EXISTS', KEYS[3]) == 1 and first_live(now_ms()) ~= false
-- Readers hold K (see `shared`): K holds their marker, and the readers key refuses a writer
-- too, should something else have deleted K under live shares.
local readers = redis.call('EXISTS', KEYS[9]) == 1
if not waiting and not readers and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] ~= '' then
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  end
  remember(ARGV[6], 'taken', ARGV[1], ARGV[2], nil, ARGV[3], nil, true)
  return 1
end
local current = held_value()
if current == ARGV[1] then
  return 1
end
local ticket = false
if ARGV[4] ~= '' then
  ticket = draw(tonumber(ARGV[5]))
end
return {redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1]), current,
        redis.call('ZCARD', KEYS[3]), ticket}
",
        ],
        bit(&ACQUIRE),
    )
});

/// The start of the lock's ACQUIRE and WAIT: a key in use as a semaphore (its slots key exists
/// exactly while a slot may be live) is refused with `{'semaphore', its limit or nil}`.
pub(in crate::lock) const SEMAPHORE_CHECK: &str = r"
if redis.call('EXISTS', KEYS[7]) == 1 then
  return {'semaphore', redis.call('GET', KEYS[8])}
end
";

/// The limit of the semaphore a refusal says the key is in use as (`Some(None)`: limit not
/// known); `None` for any other answer.
pub(in crate::lock) fn semaphore_in_use(reply: &Reply) -> Option<Option<String>> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    if fields.first().and_then(Reply::bulk) != Some(b"semaphore".as_slice()) {
        return None;
    }
    Some(fields.get(1).and_then(Reply::text))
}

/// How an ACQUIRE answer counts: taken, refused (held by another), or an error.
pub(in crate::lock) fn acquire_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(Reply::Array(_)) | Ok(Reply::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// What one master's refusal to ACQUIRE (or a waiter's turn) says about the lock.
#[derive(Debug)]
pub(in crate::lock) struct Refusal {
    /// The holder, when its record belongs to the token in the lock.
    pub holder: Option<Holder>,
    /// The lock's remaining TTL there (`None`: no TTL, or free).
    pub expires_in: Option<Duration>,
    /// The lock is free there: the refusal is the queue's (others wait ahead).
    pub free: bool,
    /// Readers hold it there (`--shared`: K holds the marker).
    pub shared: bool,
    /// Revoked there by `release --force` (the record is then whoever forced).
    pub revoked: bool,
    /// How many wait in the queue there.
    pub waiters: usize,
    /// The ticket drawn there, when one was asked for.
    pub ticket: Option<u64>,
}

/// Decodes a refusal (`{record, PTTL, token, waiters, ticket}`); `None` for any other answer.
pub(in crate::lock) fn refusal(reply: &Reply) -> Option<Refusal> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    let token = fields.get(2).and_then(Reply::bulk);
    let holder = match (fields.first().and_then(Reply::bulk), token) {
        (Some(record), Some(token)) => Holder::from_record(record, token),
        _ => None,
    };
    let int = |i: usize| match fields.get(i) {
        Some(Reply::Int(n)) => u64::try_from(*n).ok(),
        _ => None,
    };
    Some(Refusal {
        holder,
        expires_in: fields.get(1).and_then(ttl),
        free: token.is_none(),
        shared: token == Some(SHARED_MARKER.as_bytes()),
        revoked: token == Some(REVOKED_MARKER.as_bytes()),
        waiters: int(3).unwrap_or(0) as usize,
        ticket: int(4),
    })
}

/// Extends the lock if it is still ours: compare-and-pexpire, never re-creating a missing key.
/// KEYS: lock, holder. ARGV: token, ttl in ms.
/// Returns 1 when extended, 0 when the key is missing or holds another token, and
/// `{'revoked', record}` when a forced release put its marker in the token's place (see
/// `revoke`: the caller reads who, and whether the record names its token). The readers'
/// marker (`SHARED_MARKER`) and the revocation's are nobody's token: "extending" one would
/// cut K's TTL under live shares, or keep a revoked K closed longer.
pub static EXTEND: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local current = redis.call('GET', KEYS[1])
if ARGV[1] ~= '__redlock:shared' and ARGV[1] ~= '__redlock:revoked' and current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if current == '__redlock:revoked' then
  return {'revoked', redis.call('GET', KEYS[2])}
end
return 0
",
        bit(&EXTEND),
    )
});

/// How a 1-or-0 answer (FENCE_PROPOSE) counts: done, refused, or an error (a release's:
/// `revoke::release_vote`; an extension's: `revoke::extend_vote`).
pub(in crate::lock) fn binary_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(Reply::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// Releases the lock if it is still ours: compare-and-delete, holder record included. A real
/// release (not the clean-up of a failed attempt or turn) also gives up the releaser's place in
/// the queue (a waiter keeps it while it holds the lock, see WAIT). Either way, a waiter that
/// this very change lets take the lock on this master is woken, on its own channel (see
/// `queue_lua::wake_newly`): also where the releaser held only its place (its turn took
/// the lock elsewhere), and also for a clean-up (a newcomer's partial hold kept the first
/// waiter out); the caller's own undo wakes nobody. A real release with nobody queued
/// announces on the key's release channel (for waiters that are not queued: an earlier
/// redlock). Announcing is best effort (`pcall`): an ACL that denies PUBLISH must not turn a
/// done release into an error.
/// KEYS: see `scripts::queue`. ARGV: token, release channel (empty: a clean-up, which keeps the
/// place), the command to announce with (PUBLISH, or SPUBLISH on a cluster: every channel is
/// in the lock's slot), wake channel prefix, wake channel suffix, how the turn ended
/// (`history::Ending`), the history (`scripts::history`).
/// A real release that deletes its token, or opens its revocation, records its end there (a
/// lost turn's also where K had already expired, so that the history says lost, not
/// expired); a clean-up that deletes its token records it undone.
/// A revoked holder's release (or clean-up: it never held) says that it stopped, and deletes
/// K as its own release would have, waking whoever that lets in (see `revoke`).
/// Returns 1 when deleted, `{'acknowledged', the revocation record}` when a revocation naming
/// the token was acknowledged (K opened: as done as a deletion, see `release_vote`), 0 when
/// the key is missing or holds another token.
pub static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            MARKER,
            ACKNOWLEDGE,
            REMEMBER_LUA.as_str(),
            r"
-- The readers' marker is nobody's token (see `shared`): releasing it would delete K under
-- live shares; nor is the revocation's.
local mine = ARGV[1] ~= SHARED and ARGV[1] ~= REVOKED and redis.call('GET', KEYS[1]) == ARGV[1]
-- Only our lock going (or its revocation opening), or our place (a real release), can change
-- who may take the lock here: a clean-up that finds neither leaves the queue alone.
local opens = not mine and redis.call('GET', KEYS[1]) == REVOKED and acknowledges(ARGV[1])
-- Who revoked it, read before the record goes: the releaser is told (see `revoke`).
local record = opens and redis.call('GET', KEYS[2])
local queued = (mine or opens or ARGV[2] ~= '') and redis.call('EXISTS', KEYS[3]) == 1
-- The clock before any write: on Redis 3.2 to 4, a script may write after TIME only once it
-- asked for effects replication, which now_ms does first.
local now = queued and now_ms()
-- While K holds our token, nobody but us can be eligible here (a writer only with K free or
-- its own; a reader only with K free or the readers'), and `wake_newly` never wakes the
-- caller: nobody is to be read before.
local before = queued and (mine and {} or eligible_lock(now))
local released = 0
if mine or opens then
  redis.call('DEL', KEYS[2])
  redis.call('DEL', KEYS[1])
  released = 1
end
hand_off(before, queued and function() return eligible_lock(now) end, ARGV[1], ARGV[2] ~= '',
         ARGV[3], ARGV[4], ARGV[5], ARGV[2], function() return released == 1 end)
if ARGV[2] == '' then
  if mine then
    remember(ARGV[7], 'undone', ARGV[1], nil, nil, nil, nil, false)
  end
elseif mine or opens or ARGV[6] == 'lost' then
  remember(ARGV[7], 'end', ARGV[1], nil, ARGV[6], nil, nil, false)
end
if opens then
  return {'acknowledged', record}
end
return released
",
        ],
        bit(&RELEASE),
    )
});

/// Fencing: sets the counter to the proposed number only if that is greater than what the
/// master has (a missing counter counts as 0). KEYS: the layout (`keys::Names::keys`) through
/// the counter, 12, the one it reads. ARGV: proposed number.
/// Returns 1 when set, 0 when the master already had that number or more. Lua numbers are
/// doubles: exact up to 2^53, far beyond any count of grants.
/// The number is written as one below it, then INCR: a counter INCR made is stored as a number
/// (`OBJECT ENCODING` `int`) on every server, where Valkey 9 keeps what a script SETs as text
/// (`embstr`). `list` reads an `int` counter's encoding only, never its value: a GET would
/// reset the idle time it reports (see `scripts::scan`). A refused INCR leaves the counter at
/// a number no holder was given, below the proposed one: still a counter that only grows.
pub static FENCE_PROPOSE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local current = tonumber(redis.call('GET', KEYS[12]) or '0') or 0
local proposed = tonumber(ARGV[1])
if proposed > current then
  redis.call('SET', KEYS[12], string.format('%d', proposed - 1))
  redis.call('INCR', KEYS[12])
  return 1
end
return 0
",
        bit(&FENCE_PROPOSE),
    )
});

/// A fencing counter as stored: missing is 0; `None` for anything that is not a number.
pub(in crate::lock) fn counter(value: &Reply) -> Option<u64> {
    match value {
        Reply::Nil => Some(0),
        Reply::Bulk(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Reply::Int(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// A PTTL answer: `None` for a key without TTL (-1) or missing (-2).
pub(in crate::lock) fn ttl(value: &Reply) -> Option<Duration> {
    match value {
        Reply::Int(ms) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
