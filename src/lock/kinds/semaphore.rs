//! A counting semaphore over N independent masters: at most L holders of a key at once
//! (`--limit L`). A holder holds a *slot*; everything else (the round, validity, renewal,
//! release, waiting) is the lock's.
//!
//! **The problem.** Counting holders per master and asking a majority is unsound: with N = 5
//! and L = 2, three clients can each hold a slot on 3 masters (9 slots, and 5 masters have
//! 10), so a majority admits three holders.
//!
//! **The scheme.**
//! 1. Each master keeps at most L live slots per key, each with its own expiry: the slots key
//!    is a sorted set of holder tokens scored by the master's time at which each slot expires
//!    (see `scripts::slots`). The script that takes a slot prunes the expired ones, counts,
//!    and adds ours only below L, atomically.
//! 2. A holder needs slots on q = floor(L·N/(L+1)) + 1 masters ([`slot_quorum`]), taken in one
//!    round like the lock: all masters at once, each under the per-node timeout, decided as
//!    soon as q said yes or q can no longer be reached (`Tally::with_quorum`).
//! 3. Its validity is the lock's: TTL − elapsed − drift, measured on this host's monotonic
//!    clock from the start of the round (`held`). Past it, the holder may not assume it
//!    holds the slot.
//!
//! **Why at most L hold at once.** Suppose L+1 clients each consider themselves a holder at
//! one instant. Each is within its validity, so each of its q masters still has its slot
//! live: the master added the slot after the round started and keeps it a full TTL by its own
//! clock, while the holder stops TTL − drift after the round started (the drift allowance
//! covers clocks that run at slightly different rates). That makes (L+1)·q live slots at that
//! instant, and (L+1)·q > (L+1)·L·N/(L+1) = L·N; but N masters hold at most L·N live slots
//! at any instant. With L = 1, q = floor(N/2) + 1, the majority: the lock's argument is this
//! one's special case.
//!
//! **Per-holder expiry.** A slot ends at its own score, not with the key: every script prunes
//! the members whose time has come before it counts, so a killed holder's slot frees itself
//! one TTL after its last renewal, whatever the other holders do. (A TTL on the key alone
//! would be kept alive by the others' renewals.) The keys themselves get the TTL of their
//! longest slot, so nothing is left without a TTL.
//!
//! **Renewal.** At TTL/3, as the lock: the extension script moves our slot's expiry only where
//! the slot is still live (it never re-creates one), and the renewal counts only if q masters
//! confirmed before the validity ran out; the new validity is measured from the start of the
//! round. A renewal that q masters did not confirm means the slot *may be lost*: a master that
//! did not confirm may have dropped it (expired while we could not reach it, restarted empty,
//! evicted) and given it to another client, and with our slot on fewer than q masters the
//! count above no longer covers us: L others may each legitimately hold q masters. So the
//! supervisor stops the command before the validity ends, exactly as for a lost lock; refused
//! by so many masters that q cannot be reached any more (N − refusals < q), the slot is gone
//! for certain and the command is stopped at once.
//!
//! **Drift and clocks.** The score is the master's wall clock (`TIME`), the same clock Redis
//! expires keys by, so a slot is exactly as exposed to a master's clock jump as a lock key's
//! TTL is (see docs/guarantees-and-limits.md, "Limits"); the holder's own validity never reads a
//! wall clock.
//!
//! **Assumes** what the lock assumes (see `held`), for the slots key:
//! - masters keep it for a full TTL: one that restarts empty or evicts it frees every slot it
//!   held, and L others may then each hold q masters while we count on ours (`doctor`:
//!   *persistence*, *eviction*, *role*);
//! - master clocks do not jump: a slot ends at its score by the master's wall clock, so one
//!   stepped forward prunes slots early (`doctor`: *clock*);
//! - clock rates drift less than the drift factor between this host's monotonic clock (the
//!   validity) and each master's (the score); no `doctor` check measures rates.
//!
//! **One limit per key.** The limit is stored beside the slots; a master whose live slots were
//! taken with another L refuses, and that refusal is an error ([`Conflict::Limit`]), never a
//! wait and never an admission. Holders with different L's cannot both hold: every q is more
//! than half of N (q > L·N/(L+1) ≥ N/2), so their quorums share a master, which refused the
//! later one. The same holds for a key used as a lock: a slot is refused where K exists, the
//! lock where the slots key does, and a majority and a slot quorum share a master.
//!
//! **Waiting** is the lock's fair queue (`queue`), with one rule changed for L slots: a
//! newcomer takes a free slot only when the live waiters leave one for it (slots taken +
//! waiters < L), a waiter takes one when its position does (slots taken + position < L), and a
//! release wakes the waiters the free slots now leave room for. The queue only ever adds
//! refusals, so it takes nothing from the argument above; it decides who may *try*, in arrival
//! order. Its own quorum stays the majority (tickets, places), whatever q the slots need.
//!
//! **The price** is fault tolerance: N − q masters may be down (see docs/semaphore.md). With
//! q = N none may.
//!
//! A slot's token says what it is: `sem<L>-<32 hex digits>` (`held::slot_token`), so that
//! `release`, `extend` and the `--renew-while` renewer, given only the key and the token,
//! treat it as a slot of that limit.

use std::time::Duration;

use super::cancel::Cancel;
use super::client::Redlock;
use super::held::{Kind, Lock, Timing};
use super::slots::SlotKeys;
use crate::lock::quorum::outcome::{AcquireError, AttemptFailure, ExtendError};
use crate::lock::quorum::slot_verdict::SlotsInspection;
use crate::lock::quorum::tally::slot_quorum;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::slots::EXTEND_SLOT;
use crate::lock::scripts::slots::{INSPECT_SLOTS, inspected_slots};

impl Redlock {
    /// The number of this client's masters a slot of a semaphore of `limit` needs.
    pub fn slot_quorum(&self, limit: u32) -> usize {
        slot_quorum(self.masters.nodes.len(), limit)
    }

    /// Takes one of `limit` slots of `key` on [`Redlock::slot_quorum`] masters, waiting as
    /// [`Redlock::acquire`] does: in the key's fair queue, in arrival order, woken when a
    /// release leaves room, until `wait` is spent or `cancel` fires. The [`Lock`] it returns
    /// is renewed, released and timed like the lock. A key in use as a lock, or as a semaphore
    /// of another limit, fails at once with [`AcquireError::Conflict`].
    #[allow(clippy::too_many_arguments)]
    pub fn acquire_slot(
        &self,
        key: &str,
        limit: u32,
        timing: Timing,
        holder: Option<&Holder>,
        wait: Duration,
        cancel: &Cancel,
        on_retry: &mut dyn FnMut(&AttemptFailure),
    ) -> Result<Lock, AcquireError> {
        let kind = Kind::Slot { limit };
        self.take(key, kind, timing, holder, wait, cancel, on_retry)
    }

    /// Renews a slot (see [`Redlock::extend`]), decided by the slot quorum.
    pub(in crate::lock) fn extend_slot(
        &self,
        lock: &mut Lock,
        limit: u32,
    ) -> Result<(), ExtendError> {
        let names = SlotKeys::of(lock.key());
        let ttl_ms = lock.timing.ttl_ms();
        let limit_text = limit.to_string();
        let args: [&[u8]; 3] = [lock.token.as_bytes(), &ttl_ms, limit_text.as_bytes()];
        let renewed = self.runtime.block_on(self.renewal(
            lock,
            self.slot_quorum(limit),
            (&EXTEND_SLOT, &names.all(), &args),
        ));
        lock.validity_end = renewed?;
        Ok(())
    }

    /// Makes a slot expire `remaining` from now (see [`Redlock::expire_in`]).
    pub(in crate::lock) fn expire_slot_in(
        &self,
        lock: &Lock,
        limit: u32,
        remaining: Duration,
    ) -> bool {
        let names = SlotKeys::of(lock.key());
        let ms = remaining.as_millis().to_string().into_bytes();
        let limit_text = limit.to_string();
        let args: [&[u8]; 3] = [lock.token.as_bytes(), &ms, limit_text.as_bytes()];
        self.runtime.block_on(self.expiry(
            lock,
            self.slot_quorum(limit),
            (&EXTEND_SLOT, &names.all(), &args),
        ))
    }
}

impl Redlock {
    /// Reads the semaphore `key` on every master (waits for all of them, up to one node
    /// timeout). Judge it with [`crate::lock::judge_slots`].
    pub fn inspect_slots(&self, key: &str, node_timeout: Duration) -> Vec<SlotsInspection> {
        let names = SlotKeys::of(key);
        let keys = names.all();
        let read =
            self.masters
                .read_everywhere("inspect slots", key, &INSPECT_SLOTS, &keys, node_timeout);
        self.runtime
            .block_on(read)
            .into_iter()
            .map(|(master, answer)| SlotsInspection {
                master: master.clone(),
                state: answer.and_then(inspected_slots),
            })
            .collect()
    }
}
