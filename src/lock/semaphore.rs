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
//!    (see `semaphore_scripts`). The script that takes a slot prunes the expired ones, counts,
//!    and adds ours only below L, atomically.
//! 2. A holder needs slots on q = floor(L·N/(L+1)) + 1 masters ([`quorum`]), taken in one
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
//! TTL is (see "Limits" in the README); the holder's own validity never reads a wall clock.
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
//! **The price** is fault tolerance: N − q masters may be down (see README, "At most L at
//! once: `--limit`"). With q = N none may.
//!
//! A slot's token says what it is: `sem<L>-<32 hex digits>` (`held::slot_token`), so that
//! `release`, `extend` and the `--renew-while` renewer, given only the key and the token,
//! treat it as a slot of that limit.

use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::client::Redlock;
use super::held::{Kind, Lock, Timing};
use super::holder::Holder;
use super::keys::{self, Names};
use super::outcome::{AcquireError, AttemptFailure, Conflict, ExtendError, Released};
use super::queue;
use super::queue_turn::{Polled, Turns};
use super::quorum::{Decision, Loss, majority};
use super::round::{Masters, Until};
use super::scripts::binary_vote;
use super::semaphore_scripts::{
    ACQUIRE_SLOT, EXTEND_SLOT, RELEASE_SLOT, SlotRefusal, WAIT_SLOT, granted_ticket, slot_refusal,
    slot_turn, slot_vote,
};
use super::slot_refusals::{conflict, full};
use super::undo;
use super::wakeup::Wakeup;

/// The number of masters a holder of one of `limit` slots needs among `nodes`:
/// floor(L·N/(L+1)) + 1 (see the module header); the majority for L = 1.
pub fn quorum(nodes: usize, limit: u32) -> usize {
    let limit = limit.max(1) as usize;
    limit * nodes / (limit + 1) + 1
}

/// How many masters must draw a ticket for a newcomer to join the queue: N − majority + 1, as
/// for the lock (the queue's own quorum is the majority, whatever the slots need; see `queue`).
/// A slot needs more masters than a majority, so a newcomer's round can be lost to fewer
/// refusals than that: a newcomer that will wait therefore draws a ticket from every master
/// that answers, where it is given the slot too (undone with the round), so that a lost round
/// still joins the queue in arrival order (found by the model checker, tests/queue_model).
fn tickets_needed(nodes: usize) -> usize {
    nodes - majority(nodes) + 1
}

/// Every key a slot script touches (see `semaphore_scripts`): K, its holder record and queue
/// (`Names`), and the semaphore's own three.
pub(super) struct SlotKeys<'a> {
    key: &'a str,
    names: Names,
    slots: String,
    limit: String,
    holders: String,
}

impl<'a> SlotKeys<'a> {
    pub(super) fn of(key: &'a str) -> SlotKeys<'a> {
        SlotKeys {
            key,
            names: Names::of(key),
            slots: keys::slots(key),
            limit: keys::limit(key),
            holders: keys::slot_holders(key),
        }
    }

    pub(super) fn all(&self) -> [&str; 9] {
        let n = &self.names;
        [
            self.key,
            &n.holder,
            &n.queue,
            &n.lease,
            &n.waiters,
            &n.tickets,
            &self.slots,
            &self.limit,
            &self.holders,
        ]
    }
}

/// Why one attempt at a slot did not get one.
pub(super) enum Refused {
    /// Worth another attempt while the wait lasts; with the ticket for the queue, when enough
    /// masters drew one.
    Failed(AttemptFailure, Option<u64>),
    /// Never worth waiting for.
    Conflict(Conflict),
}

impl Redlock {
    /// The number of this client's masters a slot of a semaphore of `limit` needs.
    pub fn slot_quorum(&self, limit: u32) -> usize {
        quorum(self.masters.nodes.len(), limit)
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

    /// One attempt as a newcomer: a slot on every master at once (where the queue leaves one
    /// free), decided at the slot quorum; on failure whatever partial hold it left is removed,
    /// so that contenders do not split the slots until the TTL runs out. A refused caller that
    /// `will_wait` also gets its ticket for the queue, as for the lock (see `queue`).
    pub(super) async fn attempt_slot(
        &self,
        key: &str,
        token: &str,
        limit: u32,
        timing: Timing,
        holder: Option<&Holder>,
        will_wait: bool,
    ) -> Result<Lock, Refused> {
        let quorum = self.slot_quorum(limit);
        let record = holder.map(|h| h.record(token)).unwrap_or_default();
        let names = SlotKeys::of(key);
        let ttl_ms = timing.ttl_ms();
        let limit_text = limit.to_string();
        let keep_ms = queue::keep(&timing).as_millis().to_string();
        let args: [&[u8]; 6] = [
            token.as_bytes(),
            &ttl_ms,
            limit_text.as_bytes(),
            record.as_bytes(),
            if will_wait { b"1" } else { b"" },
            keep_ms.as_bytes(),
        ];
        let keys = names.all();
        let start = Instant::now();
        let round = self
            .masters
            .round_with(
                quorum,
                start + timing.node_timeout,
                // A caller that will wait needs tickets from N - majority + 1 refusals (the
                // queue's quorum is the majority), more than the N - q + 1 that decide the
                // slot: the answers that carry them must not be dropped at the decision.
                if will_wait {
                    Until::WonOrRefusedBy(tickets_needed(self.masters.nodes.len()))
                } else {
                    Until::Decided
                },
                slot_vote,
                |node| node.eval(&ACQUIRE_SLOT, &keys, &args),
            )
            .await;
        let elapsed = start.elapsed();
        self.masters.trace("acquire slot", key, &round, elapsed);
        let refusals: Vec<SlotRefusal> = round
            .answers
            .iter()
            .flatten()
            .filter_map(|answer| answer.as_ref().ok().and_then(slot_refusal))
            .collect();
        let (failure, ticket) = match (conflict(limit, &refusals), round.tally.decision()) {
            // Even when a quorum said yes: holders that disagree are an error to report,
            // not a race to win.
            (Some(conflict), _) => {
                release_slot(&self.masters, key, token, limit, timing, false, None).await;
                return Err(Refused::Conflict(conflict));
            }
            (None, Decision::Won) if elapsed + timing.drift() < timing.ttl => {
                let n = self.masters.nodes.len();
                let yes = round.tally.yes();
                log::info!(
                    event = "acquired", key = key, outcome = "won",
                    elapsed_ms = elapsed.as_micros() as f64 / 1000.0, confirmed = yes, masters = n;
                    "acquired a slot of {key:?} (limit {limit}) in {elapsed:.1?}: {yes} of {} \
                     confirmed, {quorum} needed",
                    crate::plural::counted(n, "master")
                );
                let mut refusals = round.failures(&self.masters);
                refusals.retain(|f| f.cause().is_configuration());
                return Ok(Lock {
                    kind: Kind::Slot { limit },
                    key: key.to_string(),
                    token: token.to_string(),
                    timing,
                    validity_end: timing.validity_end(start),
                    refusals,
                    woken_by: None,
                });
            }
            (None, Decision::Won) => (AttemptFailure::TooSlow { elapsed }, None),
            (None, Decision::Lost(Loss::Refused)) => {
                // Where a slot was given, a ticket was drawn too (see ACQUIRE_SLOT).
                let granted: Vec<u64> = round
                    .answers
                    .iter()
                    .flatten()
                    .filter_map(|answer| answer.as_ref().ok().and_then(granted_ticket))
                    .collect();
                full(
                    limit,
                    refusals,
                    granted,
                    tickets_needed(self.masters.nodes.len()),
                )
            }
            (None, Decision::Lost(Loss::Unreachable) | Decision::Undecided) => {
                let failure = AttemptFailure::Unreachable {
                    needed: quorum,
                    failures: round.failures(&self.masters),
                };
                (failure, None)
            }
        };
        // Unless every master refused, some may have given us a slot (also those that did not
        // answer in time, or whose answer the round did not wait for): give those back.
        if round.tally.no() < self.masters.nodes.len() {
            release_slot(&self.masters, key, token, limit, timing, false, None).await;
        }
        Err(Refused::Failed(failure, ticket.filter(|_| will_wait)))
    }

    /// Renews a slot (see [`Redlock::extend`]), decided by the slot quorum.
    pub(super) fn extend_slot(&self, lock: &mut Lock, limit: u32) -> Result<(), ExtendError> {
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
    pub(super) fn expire_slot_in(&self, lock: &Lock, limit: u32, remaining: Duration) -> bool {
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

/// A waiter's place in the queue, as the undo of its own failed turn puts it back (see
/// RELEASE_SLOT): its ticket, lease and record, and the queue keys' TTL.
pub(super) struct Seat<'a> {
    pub ticket: &'a str,
    pub lease_ms: &'a str,
    pub record: &'a str,
    pub keep_ms: &'a str,
}

/// Removes our slot on every master. `announce`: a real release, which also gives up what is
/// left of our place in the queue; without it, the clean-up of a failed attempt or turn (sent
/// again when the attempt may overtake it, see `undo`), which with `seat` (a waiter's own turn)
/// puts the waiter's place back where the slot took it. Either way the waiters the change lets
/// in are woken (see RELEASE_SLOT). Bounded by one node timeout, as the lock's release.
pub(super) async fn release_slot(
    masters: &Masters,
    key: &str,
    token: &str,
    limit: u32,
    timing: Timing,
    announce: bool,
    seat: Option<&Seat<'_>>,
) -> Released {
    let names = SlotKeys::of(key);
    let channel = if announce {
        keys::released_channel(key)
    } else {
        String::new()
    };
    let limit_text = limit.to_string();
    let (keys, names, channel, limit_text) = (&names.all(), &names.names, &channel, &limit_text);
    let seat_args: [&[u8]; 4] = match seat {
        Some(seat) => [seat.ticket, seat.lease_ms, seat.record, seat.keep_ms].map(str::as_bytes),
        None => [b""; 4],
    };
    let start = Instant::now();
    let round = undo::guarded(masters, &timing, !announce, || {
        masters.round_with(
            quorum(masters.nodes.len(), limit),
            Instant::now() + timing.node_timeout,
            Until::DecidedAndSent,
            binary_vote,
            move |node| async move {
                let [ticket, lease_ms, record, keep_ms] = seat_args;
                let args: [&[u8]; 10] = [
                    token.as_bytes(),
                    channel.as_bytes(),
                    node.publish_command().as_bytes(),
                    names.wake_prefix.as_bytes(),
                    names.wake_suffix.as_bytes(),
                    limit_text.as_bytes(),
                    ticket,
                    lease_ms,
                    record,
                    keep_ms,
                ];
                node.eval(&RELEASE_SLOT, keys, &args).await
            },
        )
    })
    .await;
    masters.trace("release slot", key, &round, start.elapsed());
    match round.tally.decision() {
        Decision::Won => Released::Yes,
        Decision::Lost(Loss::Refused) => Released::NotHeld,
        _ => Released::Unknown {
            failures: round.failures(masters),
        },
    }
}

impl Turns<'_> {
    /// A waiter's turn for a slot (see WAIT_SLOT), decided by the slot quorum.
    pub(super) async fn take_slot(
        &self,
        masters: &Masters,
        join: bool,
        limit: u32,
        cause: Wakeup,
    ) -> Polled {
        let waiter = self.waiter;
        let names = SlotKeys::of(waiter.key);
        let limit_text = limit.to_string();
        let args: [&[u8]; 9] = [
            waiter.token.as_bytes(),
            &self.ttl_ms,
            limit_text.as_bytes(),
            self.record.as_bytes(),
            self.ticket.as_bytes(),
            self.waiting_record.as_bytes(),
            self.lease_ms.as_bytes(),
            self.keep_ms.as_bytes(),
            if join { b"1" } else { b"" },
        ];
        let quorum = quorum(masters.nodes.len(), limit);
        let request = (&*WAIT_SLOT, &names.all()[..], &args[..]);
        let mut polled = self
            .turn(masters, (quorum, limit as usize), request, slot_turn, cause)
            .await;
        if let Err(AttemptFailure::Full { holders, .. }) = &mut polled.outcome {
            // Who holds the slots is not in a turn's answer: say nothing rather than guess.
            holders.clear();
            // A turn that may have taken a slot somewhere, even where the round did not wait
            // for the answer, gives it back (the next turn would renew it, but a waiter that
            // gives up now would leave it to its TTL).
            polled.partial |= polled.first;
        }
        polled
    }
}

#[cfg(test)]
mod tests;
