//! The Lua scripts of a semaphore's slots (`--limit`), each with the decoding of its reply.
//! Why they keep at most L holders is in `semaphore`; what they keep on each master:
//!
//! - the slots key, a sorted set: member = a holder's token, score = the master's own time in
//!   ms (from `TIME`, inside the script) at which that holder's slot there expires. A slot
//!   lives exactly until its score, by the master's clock, like a key with a TTL: every count
//!   of slots counts only the members whose score is still ahead (`live_slots`), and every
//!   script first prunes at most 100 of those whose time has come. The cap bounds the work of
//!   one call on a master that serves nobody else meanwhile (10,000 expired members, written
//!   by another client, made every slot script fail: "too many results to unpack"); a member
//!   left over counts for nothing, and the next calls prune it, so nothing is lost by leaving
//!   it a while (the key's TTL, that of the longest slot, bounds it too);
//! - the limit key: the L the holders agreed on, refused to a holder that brings another L;
//! - the holders key, a hash: token -> holder record (who, for `status` and waiters).
//!
//! The three keys always get the TTL of the longest slot (plus 1 ms), so none outlives the
//! last slot and none is ever left without a TTL, even by a script that fails half-way (`take`
//! computes the time first, gives the keys that exist their expiry before its first write,
//! and each key it creates its expiry at once; the limit is `SET ... PXAT`: the argument is in
//! `scripts`, "No key without a TTL").
//!
//! A slot another client wrote with a score past any TTL redlock gives (`beyond`: the master's
//! time plus a year and a day) is not a slot: `prune` drops it (at most 100 a call), and the
//! time the keys last to is clamped to that horizon (`until_past`), so that no score makes a
//! time that is not a whole number of ms ahead. Before, a slot scored 1e20 wrapped negative
//! in `string.format('%d')`, PEXPIREAT at that time deleted the slots key with the slot just
//! taken, and L + 1 holders held (issue 33). Counting such a slot would only refuse more;
//! dropping it also keeps one foreign write from pinning the semaphore's limit for a year. All are in the slot of the semaphore's name
//! K (see `keys`), and so is K itself, which the scripts read to refuse a key in use as a lock.
//!
//! Like the lock's scripts, each checks the token before touching a slot: a client can only
//! extend or remove its own slot, and an extension never re-creates a slot that expired.
//!
//! Waiters for a slot use the lock's fair queue (`queue`, with its keys and shared functions
//! from `queue_lua`): a newcomer takes a free slot only if the live waiters leave one for
//! it, a waiter takes one when its position leaves room (slots taken + position < L), and a
//! change that lets waiters in (a release, a clean-up, a waiter leaving) wakes those it lets in
//! (`eligible_slots`, `queue_lua::wake_newly`). The queue only adds refusals:
//! every slot is still taken by the same count below L, so it changes nothing in the argument
//! in `semaphore`.
//!
//! The scripts use `TIME` before writing, which Redis allows with effects replication (the
//! default since 5.0, the only mode since 7.0); the queue's `now_ms` asks for it on the
//! releases before.

use std::sync::LazyLock;
use std::time::Duration;

use super::bit;
use super::history::REMEMBER_LUA;
use super::holder::Holder;
use super::lock::Refusal;
use super::queue::{Place, Turn};
use super::queue_lua::FUNCTIONS;
use super::replies::Vote;
use super::revoke::MARKER;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// What the slot scripts add to the queue's `FUNCTIONS`: the master's time `now` in ms,
/// `prune` (drops at most 100 slots whose time has come, and at most 100 scored past any TTL,
/// with their records), `live_slots` (how many slots have not expired), `expire_slots` and
/// `keep_slots` (give the slot keys an expiry time, and store the limit with it), `take` (a new
/// slot, in the order the header argues) and `renew` (our slot's new time). KEYS, for every
/// script here, the one layout (`keys::Names::keys`) through the slots' records: 1 K,
/// 2 K's holder record, 3-6 K's queue (see `scripts::queue`), 7 the slots, 8 the limit, 9-10
/// a shared lock's readers and their records (unread here), 11 the slots' holder records.
pub(super) const PRELUDE: &str = r"
local now = now_ms()
local function prune()
  local gone = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 100)
  if #gone > 0 then
    redis.call('ZREM', KEYS[7], unpack(gone))
    redis.call('HDEL', KEYS[11], unpack(gone))
  end
  local foreign = beyond(KEYS[7], now)
  if #foreign > 0 then
    redis.call('ZREM', KEYS[7], unpack(foreign))
    redis.call('HDEL', KEYS[11], unpack(foreign))
  end
end
local function live_slots()
  return redis.call('ZCOUNT', KEYS[7], '(' .. now, '+inf')
end
local function expire_slots(at)
  redis.call('PEXPIREAT', KEYS[7], at)
  redis.call('PEXPIREAT', KEYS[11], at)
end
local function keep_slots(at, l)
  expire_slots(at)
  set_until(KEYS[8], l, at, now)
end
local function take(token, ttl, l, record)
  local score = now + tonumber(ttl)
  local at = until_past(KEYS[7], token, score, now)
  expire_slots(at)
  redis.call('ZADD', KEYS[7], score, token)
  redis.call('PEXPIREAT', KEYS[7], at)
  if record ~= '' then
    redis.call('HSET', KEYS[11], token, record)
    redis.call('PEXPIREAT', KEYS[11], at)
  end
  set_until(KEYS[8], l, at, now)
end
local function renew(token, ttl, l)
  local score = now + tonumber(ttl)
  local at = until_past(KEYS[7], token, score, now)
  redis.call('ZADD', KEYS[7], 'XX', score, token)
  keep_slots(at, l)
end
local function eligible_slots(l)
  prune()
  local first = first_live(now)
  local room = tonumber(l) - live_slots()
  if room <= 0 or not first then
    return {}, first
  end
  return redis.call('ZRANGE', KEYS[3], 0, room - 1), first
end
local function full(extra)
  local taken = redis.call('ZRANGEBYSCORE', KEYS[7], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1000)
  local frees = -1
  if #taken > 0 then
    frees = tonumber(taken[2]) - now
  end
  local out = {'full', frees, extra, redis.call('ZCARD', KEYS[3])}
  for i = 1, #taken, 2 do
    out[#out + 1] = taken[i]
    out[#out + 1] = redis.call('HGET', KEYS[11], taken[i])
  end
  return out
end
";

/// Takes a slot as a newcomer. ARGV: token, TTL in ms, L, holder record (may be empty), ticket
/// wanted ('1' when the caller will wait: every answer then draws a ticket, a slot taken
/// too), keep ms (the queue's), the history (`scripts::history`: a slot taken is recorded
/// there, each holder its own turn). A newcomer takes a free slot only when the live waiters leave
/// one for it (slots taken + waiters < L): it never passes the queue. Returns 1 when the slot
/// was taken (or was already ours: the same request sent again), `{'taken', ticket}` when it
/// was taken with a ticket wanted; otherwise a refusal: `{'lock', 1 if readers hold it else
/// 0}` when K is in use as a lock, `{'limit', L'}` when the live slots were taken with another
/// limit, `{'full', ms until the first slot expires or -1, ticket or nil, waiters, token, record or
/// nil, ...}`.
pub static ACQUIRE_SLOT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            REMEMBER_LUA.as_str(),
            r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'lock', redis.call('GET', KEYS[1]) == SHARED and 1 or 0}
end
prune()
if redis.call('ZSCORE', KEYS[7], ARGV[1]) then
  return 1
end
local count = live_slots()
local limit = redis.call('GET', KEYS[8])
if count > 0 and limit and limit ~= ARGV[3] then
  return {'limit', limit}
end
local waiting = 0
if redis.call('EXISTS', KEYS[3]) == 1 and first_live(now) then
  waiting = redis.call('ZCARD', KEYS[3])
end
if count + waiting < tonumber(ARGV[3]) then
  take(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
  remember(ARGV[7], 'taken', ARGV[1], ARGV[2], nil, ARGV[4], nil, true)
  if ARGV[5] ~= '' then
    local ticket = draw(tonumber(ARGV[6]))
    return {'taken', ticket}
  end
  return 1
end
local ticket = false
if ARGV[5] ~= '' then
  ticket = draw(tonumber(ARGV[6]))
end
return full(ticket)
",
        ],
        bit(&ACQUIRE_SLOT),
    )
});

/// A waiter's turn for a slot, as the queue's WAIT for the lock: keeps its place (the
/// heartbeat), joins when told to, and takes a slot when it is among the first live waiters
/// that the free slots leave room for (slots taken + its position < L), or renews one an
/// earlier turn left it. ARGV: token, TTL ms, L, holder record, ticket, waiter record, lease
/// ms, keep ms, join ('1' or empty), the history (a slot newly taken is recorded there).
/// Returns 1 when taken (the place is given up), 0 when this
/// master has no place for the waiter and it was not told to join, `{'lock'}` or `{'limit',
/// L'}` as ACQUIRE_SLOT, else `{'full', ms until the first slot expires or -1, 0-based
/// position, waiters, token, record or nil, ...}`.
pub static WAIT_SLOT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            REMEMBER_LUA.as_str(),
            r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'lock', redis.call('GET', KEYS[1]) == SHARED and 1 or 0}
end
first_live(now)
local ms = tonumber(ARGV[8])
if not place(ARGV[1], ARGV[5], ARGV[6], ms, ARGV[9]) then
  return 0
end
local lease = now + tonumber(ARGV[7])
fresh(KEYS[4], ms, 'ZADD', KEYS[4], lease, ARGV[1])
prune()
if redis.call('ZSCORE', KEYS[7], ARGV[1]) then
  renew(ARGV[1], ARGV[2], ARGV[3])
  drop(ARGV[1])
  return 1
end
local count = live_slots()
local limit = redis.call('GET', KEYS[8])
if count > 0 and limit and limit ~= ARGV[3] then
  return {'limit', limit}
end
local position = redis.call('ZRANK', KEYS[3], ARGV[1])
if count + position < tonumber(ARGV[3]) then
  take(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
  drop(ARGV[1])
  remember(ARGV[10], 'taken', ARGV[1], ARGV[2], nil, ARGV[4], nil, true)
  return 1
end
return full(position)
",
        ],
        bit(&WAIT_SLOT),
    )
});

/// Extends a slot if it is still ours: sets its expiry to now + ms, never re-creating a slot
/// that expired or was removed. ARGV: token, ms, L. Returns 1 when extended, 0 when the slot is
/// not (or no longer) there, `{'revoked', record}` where `release --force` revoked it (see
/// `revoke`).
pub static EXTEND_SLOT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            MARKER,
            REVOKED_SLOTS,
            r"
prune()
if is_revoked_slot(ARGV[1]) then
  return 0
end
if not redis.call('ZSCORE', KEYS[7], ARGV[1]) then
  return revoked_answer(ARGV[1])
end
renew(ARGV[1], ARGV[2], ARGV[3])
return 1
",
        ],
        bit(&EXTEND_SLOT),
    )
});

/// Removes a slot if it is still ours, with its record; the last slot takes the limit and the
/// records with it. A real release (`announce`: ARGV[2] not empty) also gives up what is left
/// of the caller's place in the queue, or, with nobody queued, announces on the release
/// channel. A clean-up (ARGV[2] empty) keeps the place; a waiter undoing its own failed turn
/// (ARGV[7] not empty) also gets back the place its slot took here (WAIT_SLOT drops the place
/// of a slot it takes), with its ticket, so that nobody behind it passes it on this master.
/// Either way, the waiters this very change lets take a slot here are woken, on their own
/// channels (`wake_newly`, with `eligible_slots`: the first L - slots live waiters); the
/// caller is not. Notices are best effort (pcall).
/// ARGV: token, release channel or empty, publish command, wake channel prefix and suffix, L,
/// then for a waiter's undo: ticket, lease ms, waiter record, keep ms (else empty); how the
/// turn ended and the history (recorded as RELEASE records it, see `scripts::history`).
/// A revoked holder's release (or undo) says it stopped: its revoked slot goes (`revoke`).
/// Returns 1 when removed, `{'acknowledged', the revocation record}` when the revoked slot of
/// the token was removed (as done as 1, see `release_vote`), 0 when the slot was not (or no
/// longer) there.
pub static RELEASE_SLOT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            MARKER,
            REVOKED_SLOTS,
            REMEMBER_LUA.as_str(),
            r"
local before = eligible_slots(ARGV[6])
local removed, acknowledged = 0, false
if not is_revoked_slot(ARGV[1]) then
  removed = redis.call('ZREM', KEYS[7], ARGV[1])
end
if removed == 1 then
  redis.call('HDEL', KEYS[11], ARGV[1])
elseif not is_revoked_slot(ARGV[1]) then
  acknowledged = acknowledge_slot(ARGV[1])
  if acknowledged then
    removed = 1
  end
end
if live_slots() == 0 then
  redis.call('DEL', KEYS[8], KEYS[11])
end
if ARGV[2] == '' and removed == 1 and ARGV[7] ~= '' then
  local ms = tonumber(ARGV[10])
  local lease = now + tonumber(ARGV[8])
  keep(ms)
  fresh(KEYS[3], ms, 'ZADD', KEYS[3], ARGV[7], ARGV[1])
  fresh(KEYS[4], ms, 'ZADD', KEYS[4], lease, ARGV[1])
  if ARGV[9] ~= '' then
    fresh(KEYS[5], ms, 'HSET', KEYS[5], ARGV[1], ARGV[9])
  end
end
hand_off(before, function() return eligible_slots(ARGV[6]) end, ARGV[1], ARGV[2] ~= '',
         ARGV[3], ARGV[4], ARGV[5], ARGV[2], function() return removed == 1 end)
if ARGV[2] == '' then
  if removed == 1 then
    remember(ARGV[12], 'undone', ARGV[1], nil, nil, nil, nil, false)
  end
elseif removed == 1 or ARGV[11] == 'lost' then
  remember(ARGV[12], 'end', ARGV[1], nil, ARGV[11], nil, nil, false)
end
if acknowledged then
  return {'acknowledged', acknowledged}
end
return removed
",
        ],
        bit(&RELEASE_SLOT),
    )
});

/// A slot waiter leaves the queue (LEAVE, with the room the free slots leave): the waiters its
/// going lets take a slot here are woken. ARGV: token, publish command, wake channel prefix and
/// suffix, L. Returns 1 when a place was removed, 0 when this master had none.
pub static LEAVE_SLOT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            PRELUDE,
            r"
local before = eligible_slots(ARGV[5])
if redis.call('ZSCORE', KEYS[3], ARGV[1]) == false then
  return 0
end
hand_off(before, function() return eligible_slots(ARGV[5]) end, ARGV[1], true, ARGV[2],
         ARGV[3], ARGV[4], '')
return 1
",
        ],
        bit(&LEAVE_SLOT),
    )
});

/// How an ACQUIRE_SLOT or WAIT_SLOT answer counts: taken, refused (or no place), or an error.
pub(in crate::lock) fn slot_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(reply) if granted_ticket(reply).is_some() => Vote::Yes,
        Ok(Reply::Int(0)) | Ok(Reply::Array(_)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// The ticket an ACQUIRE_SLOT drew where it gave the slot (`{'taken', ticket}`): a newcomer
/// that will wait draws one from every master, so that a round lost to fewer refusals than the
/// queue's tickets need (a slot needs more masters than a majority) still joins the queue.
pub(in crate::lock) fn granted_ticket(reply: &Reply) -> Option<u64> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    match fields.as_slice() {
        [kind, Reply::Int(ticket)] if kind.bulk() == Some(b"taken".as_slice()) => {
            u64::try_from(*ticket).ok()
        }
        _ => None,
    }
}

/// Why one master refused a slot.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::lock) enum SlotRefusal {
    /// No slot for us: L are taken, or the free ones are left to waiters ahead.
    Full {
        /// The holders (their records, where they left one).
        holders: Vec<(String, Option<Holder>)>,
        /// When the first slot expires unless renewed (`None`: none is taken).
        frees_in: Option<Duration>,
        /// ACQUIRE_SLOT: the ticket drawn, when one was asked for; WAIT_SLOT: our position.
        extra: Option<u64>,
        /// How many wait in the queue there.
        waiters: usize,
    },
    /// The key is in use as a lock.
    IsLock,
    /// The key is in use as a shared lock: readers hold it (`--shared`).
    IsShared,
    /// The live slots were taken with this limit (as stored: text).
    Limit(String),
}

/// Decodes a refusal of ACQUIRE_SLOT or WAIT_SLOT; `None` for any other answer.
pub(in crate::lock) fn slot_refusal(reply: &Reply) -> Option<SlotRefusal> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    let kind = fields.first().and_then(Reply::bulk)?;
    let int = |i: usize| match fields.get(i) {
        Some(Reply::Int(n)) => u64::try_from(*n).ok(),
        _ => None,
    };
    match kind {
        b"lock" if matches!(fields.get(1), Some(Reply::Int(1))) => Some(SlotRefusal::IsShared),
        b"lock" => Some(SlotRefusal::IsLock),
        b"limit" => Some(SlotRefusal::Limit(
            fields
                .get(1)
                .and_then(Reply::text)
                .unwrap_or_else(|| "?".into()),
        )),
        b"full" => {
            let holders = fields
                .get(4..)
                .unwrap_or_default()
                .chunks(2)
                .filter_map(|pair| {
                    let token = pair.first()?.bulk()?;
                    let record = pair.get(1).and_then(Reply::bulk);
                    let holder = record.and_then(|r| Holder::from_record(r, token));
                    Some((String::from_utf8_lossy(token).into_owned(), holder))
                })
                .collect();
            Some(SlotRefusal::Full {
                holders,
                frees_in: fields.get(1).and_then(millis),
                extra: int(2),
                waiters: int(3).unwrap_or(0) as usize,
            })
        }
        _ => None,
    }
}

/// Decodes a WAIT_SLOT answer as the queue reads a turn; `None` for an error, a conflict
/// (see `slot_refusal`) or anything else.
pub(in crate::lock) fn slot_turn(answer: &Result<Reply, NodeError>) -> Option<Turn> {
    match answer {
        Ok(Reply::Int(1)) => Some(Turn::Taken),
        Ok(Reply::Int(0)) => Some(Turn::NoPlace),
        Ok(reply) => match slot_refusal(reply)? {
            SlotRefusal::Full {
                holders,
                frees_in,
                extra: Some(position),
                waiters,
            } => Some(Turn::Waiting(Place {
                placed_before: true,
                position: position as usize,
                waiters,
                refusal: Refusal {
                    holder: holders.into_iter().find_map(|(_, holder)| holder),
                    expires_in: frees_in,
                    free: false,
                    shared: false,
                    revoked: false,
                    waiters,
                    ticket: None,
                },
            })),
            _ => None,
        },
        Err(_) => None,
    }
}

mod decode;
mod revoke;

use decode::millis;
pub(in crate::lock) use decode::slots_of;
pub use decode::{Slot, Slots};
pub(in crate::lock::scripts) use revoke::REVOKED_SLOTS;
pub use revoke::{REVOKED_SLOT_PREFIX, revoked_slot};

#[cfg(test)]
mod tests;
