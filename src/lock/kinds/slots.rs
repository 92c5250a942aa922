//! A slot's own calls (see `semaphore` for why they are sound, and for the slot's seam, which
//! gives them): the newcomer's attempt (ACQUIRE_SLOT, which `newcomer` runs) with what its
//! answers mean, and the release (RELEASE_SLOT, also the clean-up of a partial hold, which
//! puts a waiter's place back).

use super::exclusive::release_args;
use super::seam::{Holding, Newcomer, Seat};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::{Round, Until};
use crate::lock::quorum::slot_refusals::{conflict, full};
use crate::lock::scripts::calls::Call;
use crate::lock::scripts::calls::args::{EndedSlot, Recorded, ReleaseSlot, Take, TakeSlot};
use crate::lock::scripts::slots::{SlotRefusal, granted_ticket, slot_refusal, slot_vote};
use crate::lock::scripts::{ACQUIRE_SLOT, RELEASE_SLOT};

/// A newcomer's attempt at a slot: ACQUIRE_SLOT on every master at once (where the queue
/// leaves one free), decided at the slot quorum. A caller that will wait needs tickets from
/// `tickets_needed` refusals (N − majority + 1, as for the lock: the queue's own quorum is the
/// majority), more than the N − q + 1 that decide the slot: the answers that carry them must
/// not be dropped at the decision. A slot needs more masters than a majority, so a round can
/// be lost to fewer refusals than that: a newcomer that will wait therefore draws a ticket
/// from every master that answers, where it is given the slot too (undone with the round), so
/// that a lost round still joins the queue in arrival order (found by the model checker,
/// tests/queue_model).
pub(in crate::lock) fn newcomer(
    limit: u32,
    key: &str,
    take: Take,
    history: String,
    tickets_needed: usize,
) -> Newcomer {
    let args = Recorded {
        args: TakeSlot {
            args: take,
            limit: limit.to_string(),
        },
        history,
    };
    Newcomer {
        call: Call::new(&ACQUIRE_SLOT, args),
        vote: slot_vote,
        waiting: Until::WonOrRefusedBy(tickets_needed),
        trace: "acquire slot",
        what: format!("a slot of {key:?} (limit {limit})"),
    }
}

/// What the masters that refused a slot said of it.
fn refusals(round: &Round) -> Vec<SlotRefusal> {
    round
        .answers
        .iter()
        .flatten()
        .filter_map(|answer| answer.as_ref().ok().and_then(slot_refusal))
        .collect()
}

/// A newcomer's conflict at a slot of `limit`, even when its quorum said yes: holders that
/// disagree (the key in use as a lock or a shared lock, or with another limit) are an error
/// to report, not a race to win.
pub(in crate::lock) fn conflict_of(limit: u32, round: &Round) -> Option<Conflict> {
    conflict(limit, &refusals(round))
}

/// A slot newcomer's round refused by its masters: the semaphore is full (who holds it, as
/// far as the refusals named them), with the ticket where `tickets_needed` masters drew one;
/// where a slot was given, a ticket was drawn too (see ACQUIRE_SLOT).
pub(in crate::lock) fn refused(
    limit: u32,
    round: &Round,
    tickets_needed: usize,
) -> (AttemptFailure, Option<u64>) {
    let granted: Vec<u64> = round
        .answers
        .iter()
        .flatten()
        .filter_map(|answer| answer.as_ref().ok().and_then(granted_ticket))
        .collect();
    full(limit, refusals(round), granted, tickets_needed)
}

/// Removes our slot on every master. [`Purpose::Release`]: a real release, which also gives up
/// what is left of our place in the queue; otherwise the clean-up of a failed or interrupted
/// attempt or turn (sent again when the attempt may overtake it, see `undo`), which with `seat` (a waiter's own turn)
/// puts the waiter's place back where the slot took it. Either way the waiters the change lets
/// in are woken (see RELEASE_SLOT). Bounded by one node timeout, as the lock's release.
pub(in crate::lock) fn release_slot(
    holding: Holding<'_>,
    limit: u32,
    purpose: Purpose,
    seat: Option<&Seat<'_>>,
) -> Call {
    let args = EndedSlot {
        args: ReleaseSlot {
            release: release_args(holding, purpose),
            limit: limit.to_string(),
            seat: match seat {
                Some(seat) => {
                    [seat.ticket, seat.lease_ms, seat.record, seat.keep_ms].map(str::to_string)
                }
                None => Default::default(),
            },
        },
        how: holding.how.to_string(),
        history: holding.history.spec(),
    };
    Call::new(&RELEASE_SLOT, args)
}

#[cfg(test)]
mod tests;
