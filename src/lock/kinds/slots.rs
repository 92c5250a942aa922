//! A slot's own rounds (see `semaphore` for why they are sound): the slot quorum, the keys a
//! slot script touches, the newcomer's attempt (ACQUIRE_SLOT), a waiter's turn (WAIT_SLOT) and
//! the release (RELEASE_SLOT, also the clean-up of a partial hold). Free functions over the
//! masters, so that the client's wait loop, the queue and the semaphore's operations share them
//! without naming one another.

use std::time::Instant;

use super::attempt::Refused;
use super::held::{Kind, Lock, Timing};
use super::queue_turn::{Polled, Turns};
use super::undo::{self, Purpose};
use super::waiter::keep;
use super::wakeup::Wakeup;
use crate::lock::quorum::outcome::{AttemptFailure, Released};
use crate::lock::quorum::round::{Masters, Until};
use crate::lock::quorum::slot_refusals::{conflict, full};
use crate::lock::quorum::tally::{Decision, Loss, majority, slot_quorum};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::lock::binary_vote;
use crate::lock::scripts::slots::{
    ACQUIRE_SLOT, RELEASE_SLOT, SlotRefusal, WAIT_SLOT, granted_ticket, slot_refusal, slot_turn,
    slot_vote,
};

/// How many masters must draw a ticket for a newcomer to join the queue: N − majority + 1, as
/// for the lock (the queue's own quorum is the majority, whatever the slots need; see `queue`).
/// A slot needs more masters than a majority, so a newcomer's round can be lost to fewer
/// refusals than that: a newcomer that will wait therefore draws a ticket from every master
/// that answers, where it is given the slot too (undone with the round), so that a lost round
/// still joins the queue in arrival order (found by the model checker, tests/queue_model).
fn tickets_needed(nodes: usize) -> usize {
    nodes - majority(nodes) + 1
}

/// Every key a slot script touches (see `scripts::slots`): K, its holder record and queue
/// (`Names`), and the semaphore's own three.
pub(in crate::lock) struct SlotKeys<'a> {
    key: &'a str,
    names: Names,
    slots: String,
    limit: String,
    holders: String,
}

impl<'a> SlotKeys<'a> {
    pub(in crate::lock) fn of(key: &'a str) -> SlotKeys<'a> {
        SlotKeys {
            key,
            names: Names::of(key),
            slots: keys::slots(key),
            limit: keys::limit(key),
            holders: keys::slot_holders(key),
        }
    }

    pub(in crate::lock) fn all(&self) -> [&str; 9] {
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

/// One attempt as a newcomer: a slot on every master at once (where the queue leaves one
/// free), decided at the slot quorum; on failure whatever partial hold it left is removed,
/// so that contenders do not split the slots until the TTL runs out. A refused caller that
/// `will_wait` also gets its ticket for the queue, as for the lock (see `queue`).
pub(in crate::lock) async fn attempt_slot(
    masters: &Masters,
    key: &str,
    token: &str,
    limit: u32,
    timing: Timing,
    holder: Option<&Holder>,
    will_wait: bool,
) -> Result<Lock, Refused> {
    let quorum = slot_quorum(masters.nodes.len(), limit);
    let record = holder.map(|h| h.record(token)).unwrap_or_default();
    let names = SlotKeys::of(key);
    let ttl_ms = timing.ttl_ms();
    let limit_text = limit.to_string();
    let keep_ms = keep(&timing).as_millis().to_string();
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
    let round = masters
        .round_with(
            quorum,
            start + timing.node_timeout,
            // A caller that will wait needs tickets from N - majority + 1 refusals (the
            // queue's quorum is the majority), more than the N - q + 1 that decide the
            // slot: the answers that carry them must not be dropped at the decision.
            if will_wait {
                Until::WonOrRefusedBy(tickets_needed(masters.nodes.len()))
            } else {
                Until::Decided
            },
            slot_vote,
            |node| node.eval(&ACQUIRE_SLOT, &keys, &args),
        )
        .await;
    let elapsed = start.elapsed();
    masters.trace("acquire slot", key, &round, elapsed);
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
            release_slot(masters, key, token, limit, timing, Purpose::Undo, None).await;
            return Err(Refused::Conflict(conflict));
        }
        (None, Decision::Won) if elapsed + timing.drift() < timing.ttl => {
            let n = masters.nodes.len();
            let yes = round.tally.yes();
            log::info!(
                event = "acquired", key = key, outcome = "won",
                elapsed_ms = elapsed.as_micros() as f64 / 1000.0, confirmed = yes, masters = n;
                "acquired a slot of {key:?} (limit {limit}) in {elapsed:.1?}: {yes} of {} \
                 confirmed, {quorum} needed",
                crate::plural::counted(n, "master")
            );
            let mut refusals = round.failures(masters);
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
                tickets_needed(masters.nodes.len()),
            )
        }
        (None, Decision::Lost(Loss::Unreachable) | Decision::Undecided) => {
            let failure = AttemptFailure::Unreachable {
                needed: quorum,
                failures: round.failures(masters),
            };
            (failure, None)
        }
    };
    // Unless every master refused, some may have given us a slot (also those that did not
    // answer in time, or whose answer the round did not wait for): give those back.
    if round.tally.no() < masters.nodes.len() {
        release_slot(masters, key, token, limit, timing, Purpose::Undo, None).await;
    }
    Err(Refused::Failed(failure, ticket.filter(|_| will_wait)))
}

/// A waiter's place in the queue, as the undo of its own failed turn puts it back (see
/// RELEASE_SLOT): its ticket, lease and record, and the queue keys' TTL.
pub(in crate::lock) struct Seat<'a> {
    pub ticket: &'a str,
    pub lease_ms: &'a str,
    pub record: &'a str,
    pub keep_ms: &'a str,
}

/// Removes our slot on every master. [`Purpose::Release`]: a real release, which also gives up
/// what is left of our place in the queue; otherwise the clean-up of a failed or interrupted
/// attempt or turn (sent again when the attempt may overtake it, see `undo`), which with `seat` (a waiter's own turn)
/// puts the waiter's place back where the slot took it. Either way the waiters the change lets
/// in are woken (see RELEASE_SLOT). Bounded by one node timeout, as the lock's release.
pub(in crate::lock) async fn release_slot(
    masters: &Masters,
    key: &str,
    token: &str,
    limit: u32,
    timing: Timing,
    purpose: Purpose,
    seat: Option<&Seat<'_>>,
) -> Released {
    let names = SlotKeys::of(key);
    let channel = if purpose.announces() {
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
    let round = undo::guarded(masters, &timing, purpose, |until| {
        masters.round_with(
            slot_quorum(masters.nodes.len(), limit),
            Instant::now() + timing.node_timeout,
            until,
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
    pub(in crate::lock) async fn take_slot(
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
        let quorum = slot_quorum(masters.nodes.len(), limit);
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
