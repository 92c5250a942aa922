//! The fair queue's Lua (see `queue` for the algorithm and why it is sound): the functions every
//! queue-aware script shares, the two scripts only waiters run (WAIT, LEAVE), and the decoding
//! of their replies.
//!
//! Every queue-aware script takes the same keys, all in the lock's cluster slot (see `keys`):
//! `KEYS[1]` the lock, `KEYS[2]` its holder record, `KEYS[3]` the queue (token -> ticket),
//! `KEYS[4]` the leases (token -> the master's time in ms when that place lapses), `KEYS[5]`
//! the waiters' records (token -> JSON), `KEYS[6]` the ticket counter; then `KEYS[7]` and
//! `KEYS[8]`, a semaphore's slots and limit (refused), and `KEYS[9]`, a shared lock's readers
//! (a writer is refused where they hold: see `shared`): the one layout (`keys::Names::keys`)
//! through the readers (`keys::Through::Readers`), where every script finds each key at the
//! same position.
//!
//! Two rules keep the queue from ever leaving anything behind:
//! - every script that adds to a place's keys (the queue, the leases, the records) runs `keep`
//!   before its first write, which gives the four queue keys a TTL of twice the writer's
//!   lease, and gives each key it creates that TTL at once (`fresh`, `join`, `draw`: nothing
//!   can fail in between, see `scripts`, "No key without a TTL"), so a key outlives every
//!   place in it and vanishes once nobody refreshes it. A ticket (`draw`) writes the counter
//!   alone, so it keeps the counter alone (its PEXPIRE before the INCR is the same check);
//!   the counter outlives every place too, since every place's heartbeat keeps it. A turn
//!   that takes the lock with its place already there writes no queue key, and keeps none
//!   (WAIT). Both cut the herd's PEXPIREs per section from about 100 to 67 (BENCHMARKS.md,
//!   "Fewer scripts, fewer commands, smaller bodies"). (Waiters with other node timeouts have
//!   other leases; a shorter keep can outlast a longer lease written before it as long as
//!   node timeouts differ by less than 1.5 s, which the default TTL/20, at most 1 s, always
//!   does. Beyond that the worst case is a place that vanishes early and is put back at the
//!   next heartbeat, or a counter kept by a newcomer's shorter keep that expires under a
//!   stopped waiter's place, so that a later newcomer is placed ahead of it: order, not
//!   safety.)
//! - a place is only believed while its lease runs: `first_live` drops places that lapsed by
//!   the master's own clock, and places without a lease (written by something else), before
//!   it names the first waiter.
//!
//! Bounded work per call: a script blocks its master while it runs, so none may do work that
//! grows with what a foreign client wrote into the queue. `first_live` drops at most 100
//! lapsed places and at most 100 places without a live lease at the head of the queue per
//! call (100 000 places without a lease took one call 0.24 to 0.8 s before, 1 000 000 over
//! 10 s; now any call takes about a millisecond: BENCHMARKS.md). When that
//! budget runs out, the oldest place left stands in for the first live waiter without its
//! lease being checked: the caller treats the queue as occupied (a newcomer is refused and
//! joins, no waiter takes the lock in that call, a release wakes that place's channel,
//! where nobody may listen). That only adds refusals, so safety is untouched. Progress is
//! still guaranteed: a dropped place never comes back (a live waiter re-adds only its own,
//! with a lease), and every ACQUIRE, WAIT (each waiter's heartbeat, at least one a second),
//! RELEASE and LEAVE spends the budget again, so G dead places ahead of the first live waiter
//! are gone after G/100 calls, and then that waiter is first. Until then the hand-off waits:
//! 100 000 foreign places cost one lone waiter about 17 minutes, or the queue keys expire
//! (`keep`) once nobody writes them.

use std::sync::LazyLock;

use super::bit;
use super::history::REMEMBER_LUA;
use super::holder::Holder;
use super::lock::{Refusal, SEMAPHORE_CHECK, semaphore_in_use, ttl};
use super::queue_lua::{FUNCTIONS, SHARED_MARKER};
use super::replies::Conflict;
use super::replies::Vote;
use super::replies::{Mark, mark, policy_in_use};
use super::revoke::REVOKED_MARKER;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// A waiter's turn: keeps its place (the heartbeat), joins the queue when told to, and takes
/// the lock when it is the first live waiter and the lock is free (or already its own: a
/// partial hold of an earlier turn, whose TTL it renews). Taking keeps the place: the release
/// gives it up (RELEASE drops it), and a turn that took the lock on a minority only (a master
/// that restarted empty while others still hold it) keeps its place there for the next turn.
/// A waiter without `--supersede` is refused, before it joins, where the line's policy says
/// `supersede` (`{'policy', 'supersede'}`, see `scripts::supersede`).
/// KEYS: the layout (`keys::Names::keys`) through the line's policy, 14. ARGV: token, ttl ms, holder record, ticket,
/// waiter record, lease ms, keep ms, join ('1': add the place if this master does not have it;
/// empty: a place that lapsed stays lost), the history (`scripts::history`: a take that was
/// not already this token's is recorded there).
/// Returns 1 when taken, 0 when this master has no place for the
/// waiter and it was not told to join, else {1 placed before / 2 joined now, 0-based position,
/// waiters, holder record or nil, PTTL of the lock, token in the lock or nil}.
pub static WAIT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            SEMAPHORE_CHECK,
            FIFO_POLICY_CHECK,
            REMEMBER_LUA.as_str(),
            WAIT_BODY,
        ],
        bit(&WAIT),
    )
});

/// WAIT after its checks: the heartbeat, the join and the take (shared with the superseding
/// WAIT_SUPERSEDE, see `scripts::supersede`, whose checks come first).
pub(in crate::lock) const WAIT_BODY: &str = r"
local now = now_ms()
local first = first_live(now)
local ms = tonumber(ARGV[7])
local current = held_value()
local function take()
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if ARGV[3] ~= '' then
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  end
  if current ~= ARGV[1] then
    remember(ARGV[9], 'taken', ARGV[1], ARGV[2], nil, ARGV[3], nil, true)
  end
end
-- The first live waiter has its place here: taking writes nothing to the queue, so it needs
-- no `keep` (the place stays until the release; see `place`).
if first == ARGV[1] and (not current or current == ARGV[1]) then
  take()
  return 1
end
local in_line, placed = place(ARGV[1], ARGV[4], ARGV[5], ms, ARGV[8])
if not in_line then
  return 0
end
local lease = now + tonumber(ARGV[6])
if not placed then
  first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
end
fresh(KEYS[4], ms, 'ZADD', KEYS[4], lease, ARGV[1])
if not placed and first == ARGV[1] and (not current or current == ARGV[1]) then
  take()
  return 1
end
return {placed and 1 or 2, redis.call('ZRANK', KEYS[3], ARGV[1]), redis.call('ZCARD', KEYS[3]),
        redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1]), current}
";

/// A waiter of the lock leaves the queue (interrupted, or out of patience). A waiter that its
/// going lets take the lock here (it was first and the lock is free) is woken, so that nobody
/// waits for a place that is gone. (A slot waiter leaves with LEAVE_SLOT.)
/// ARGV: token, publish command, wake channel prefix, wake channel suffix, how it leaves
/// (`gave up`, `interrupted`: recorded in the history as `left`, with the waiter's record;
/// empty: not recorded), the history (`scripts::history`).
/// Returns 1 when a place was removed, 0 when this master had none.
pub static LEAVE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::composed(
        &[
            FUNCTIONS,
            REMEMBER_LUA.as_str(),
            r"
local now = now_ms()
local before = eligible_lock(now)
if redis.call('ZSCORE', KEYS[3], ARGV[1]) == false then
  return 0
end
if ARGV[5] ~= '' then
  local who = redis.call('HGET', KEYS[5], ARGV[1]) or ''
  remember(ARGV[6], 'left', ARGV[1], nil, ARGV[5], who, nil, false)
end
hand_off(before, function() return eligible_lock(now) end, ARGV[1], true, ARGV[2], ARGV[3],
         ARGV[4], '')
return 1
",
        ],
        bit(&LEAVE),
    )
});

/// The start of the lock's WAIT for a waiter without `--supersede`: where the line's policy
/// says `supersede`, a waiter that has no place yet is refused before it joins, with
/// `{'policy', the policy}` (it would otherwise wait in a line whose other waiters evict it).
pub(in crate::lock) const FIFO_POLICY_CHECK: &str = r"
if redis.call('EXISTS', KEYS[14]) == 1 and redis.call('ZSCORE', KEYS[3], ARGV[1]) == false then
  return {'policy', redis.call('GET', KEYS[14])}
end
";

/// One master's answer to WAIT.
#[derive(Debug)]
pub(in crate::lock) enum Turn {
    /// The lock is ours there.
    Taken,
    /// This master has no place for us (it lapsed, or the master lost its data).
    NoPlace,
    /// Still waiting there.
    Waiting(Place),
    /// The key is in use otherwise there (see [`Conflict`]).
    Conflict(Conflict),
    /// A newer waiter evicted this one from the line there (`--supersede`): who, as its mark
    /// says.
    Superseded(Mark),
}

/// Where a waiter stands on one master.
#[derive(Debug)]
pub(in crate::lock) struct Place {
    /// False when this very request made the place (it had lapsed, or the master lost it).
    pub placed_before: bool,
    /// 0 for the first waiter.
    pub position: usize,
    pub waiters: usize,
    /// Who holds the lock there, and for how long still.
    pub refusal: Refusal,
}

/// How a WAIT answer counts: taken, waiting (or placeless), or an error.
pub(in crate::lock) fn wait_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(Reply::Int(0)) | Ok(Reply::Array(_)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// Decodes a WAIT answer; `None` for an error or anything else.
pub(in crate::lock) fn turn(answer: &Result<Reply, NodeError>) -> Option<Turn> {
    match answer {
        Ok(Reply::Int(1)) => Some(Turn::Taken),
        Ok(Reply::Int(0)) => Some(Turn::NoPlace),
        Ok(reply @ Reply::Array(_)) if mark(reply).is_some() => mark(reply).map(Turn::Superseded),
        Ok(reply @ Reply::Array(_)) if policy_in_use(reply).is_some() => {
            policy_in_use(reply).map(|theirs| Turn::Conflict(Conflict::Policy { theirs }))
        }
        Ok(reply @ Reply::Array(_)) if semaphore_in_use(reply).is_some() => {
            let limit = semaphore_in_use(reply).flatten();
            Some(Turn::Conflict(Conflict::IsSemaphore { limit }))
        }
        Ok(Reply::Array(fields)) => {
            let int = |i: usize| match fields.get(i) {
                Some(Reply::Int(n)) => usize::try_from(*n).ok(),
                _ => None,
            };
            let token = fields.get(5).and_then(Reply::bulk);
            let holder = match (fields.get(3).and_then(Reply::bulk), token) {
                (Some(record), Some(token)) => Holder::from_record(record, token),
                _ => None,
            };
            Some(Turn::Waiting(Place {
                placed_before: int(0) == Some(1),
                position: int(1)?,
                waiters: int(2).unwrap_or(0),
                refusal: Refusal {
                    holder,
                    expires_in: fields.get(4).and_then(ttl),
                    free: token.is_none(),
                    shared: token == Some(SHARED_MARKER.as_bytes()),
                    revoked: token == Some(REVOKED_MARKER.as_bytes()),
                    waiters: int(2).unwrap_or(0),
                    ticket: None,
                },
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::lock::scripts::replies::queued_waiters;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn turns_decode() {
        assert!(matches!(turn(&Ok(Reply::Int(1))), Some(Turn::Taken)));
        assert!(matches!(turn(&Ok(Reply::Int(0))), Some(Turn::NoPlace)));
        assert!(turn(&Err(NodeError::Timeout)).is_none());
        let waiting = Reply::Array(vec![
            Reply::Int(2),
            Reply::Int(3),
            Reply::Int(7),
            Reply::Nil,
            Reply::Int(1500),
            bulk("other"),
        ]);
        let Some(Turn::Waiting(place)) = turn(&Ok(waiting)) else {
            panic!("a place")
        };
        assert_eq!((place.position, place.waiters), (3, 7));
        assert_eq!(place.refusal.expires_in, Some(Duration::from_millis(1500)));
        assert!(!place.refusal.free);
        assert_eq!(wait_vote(&Ok(Reply::Int(0))), Vote::No);
        assert_eq!(wait_vote(&Ok(Reply::Int(1))), Vote::Yes);
        assert_eq!(wait_vote(&Ok(Reply::Nil)), Vote::Error);
    }

    #[test]
    fn queued_waiters_decode_with_their_lease() {
        let flat = Reply::Array(vec![
            bulk("t1"),
            bulk("4"),
            bulk("10500"),
            Reply::Nil,
            bulk("t2"),
            bulk("5"),
            bulk("9000"),
            bulk("not json"),
        ]);
        let waiters = queued_waiters(Some(&flat), Some(10_000));
        assert_eq!(waiters.len(), 2);
        assert_eq!(waiters[0].ticket, 4);
        assert_eq!(waiters[0].lapses_in, Some(Duration::from_millis(500)));
        assert_eq!(waiters[1].lapses_in, None);
        assert!(waiters[1].holder.is_none());
        assert!(queued_waiters(None, None).is_empty());
    }
}
