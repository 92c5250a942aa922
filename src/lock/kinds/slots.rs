//! A slot's own rounds (see `semaphore` for why they are sound, and for the slot's seam, which
//! runs them): the newcomer's attempt (ACQUIRE_SLOT) and the release (RELEASE_SLOT, also the
//! clean-up of a partial hold, which puts a waiter's place back).

use std::time::Instant;

use super::attempt::Refused;
use super::exclusive::{Giving, release_args, release_round};
use super::held::{Kind, Lock};
use super::seam::{Holding, Request, Seat};
use super::undo::Purpose;
use super::waiter::keep;
use crate::lock::quorum::outcome::{AttemptFailure, Released};
use crate::lock::quorum::round::{Masters, Refusals, Until};
use crate::lock::quorum::slot_refusals::{conflict, full};
use crate::lock::quorum::tally::{Decision, Loss, majority, slot_quorum};
use crate::lock::scripts::calls::args::{EndedSlot, Recorded, ReleaseSlot, Take, TakeSlot};
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::slots::{SlotRefusal, granted_ticket, slot_refusal, slot_vote};
use crate::lock::scripts::{ACQUIRE_SLOT, RELEASE_SLOT};

/// How many masters must draw a ticket for a newcomer to join the queue: N − majority + 1, as
/// for the lock (the queue's own quorum is the majority, whatever the slots need; see `queue`).
/// A slot needs more masters than a majority, so a newcomer's round can be lost to fewer
/// refusals than that: a newcomer that will wait therefore draws a ticket from every master
/// that answers, where it is given the slot too (undone with the round), so that a lost round
/// still joins the queue in arrival order (found by the model checker, tests/queue_model).
fn tickets_needed(nodes: usize) -> usize {
    nodes - majority(nodes) + 1
}

/// One attempt as a newcomer: a slot on every master at once (where the queue leaves one
/// free), decided at the slot quorum; on failure whatever partial hold it left is removed,
/// so that contenders do not split the slots until the TTL runs out. A refused caller that
/// `will_wait` also gets its ticket for the queue, as for the lock (see `queue`).
pub(in crate::lock) async fn attempt_slot(
    masters: &Masters,
    request: &Request<'_>,
    names: &Names,
    token: &str,
    limit: u32,
) -> Result<Lock, Refused> {
    let (key, timing, holder) = (request.key, request.timing, request.holder);
    let will_wait = request.will_wait();
    let quorum = slot_quorum(masters.nodes.len(), limit);
    let record = holder.map(|h| h.record(token)).unwrap_or_default();
    let undone = Holding {
        key,
        names,
        token,
        timing,
        history: request.history,
        how: "",
    };
    let args = Recorded {
        args: TakeSlot {
            args: Take {
                token: token.to_string(),
                ttl_ms: timing.ttl_ms(),
                record,
                will_wait,
                keep_ms: keep(&timing).as_millis().to_string(),
            },
            limit: limit.to_string(),
        },
        history: request.history.spec(),
    };
    let layout = names.keys(key);
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
            |node| ACQUIRE_SLOT.run(node, &layout, &args),
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
            release_slot(masters, undone, limit, Purpose::Undo, None).await;
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
            let refusals = Refusals::of(&round, masters, elapsed);
            return Ok(Lock {
                kind: Kind::Slot { limit },
                key: key.to_string(),
                token: token.to_string(),
                timing,
                validity_end: timing.validity_end(start),
                refusals,
                woken_by: None,
                granted_by: Some(round.granted_by(slot_vote)),
                history: request.history,
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
        release_slot(masters, undone, limit, Purpose::Undo, None).await;
    }
    Err(Refused::Failed(failure, ticket.filter(|_| will_wait)))
}

/// Removes our slot on every master. [`Purpose::Release`]: a real release, which also gives up
/// what is left of our place in the queue; otherwise the clean-up of a failed or interrupted
/// attempt or turn (sent again when the attempt may overtake it, see `undo`), which with `seat` (a waiter's own turn)
/// puts the waiter's place back where the slot took it. Either way the waiters the change lets
/// in are woken (see RELEASE_SLOT). Bounded by one node timeout, as the lock's release.
pub(in crate::lock) async fn release_slot(
    masters: &Masters,
    holding: Holding<'_>,
    limit: u32,
    purpose: Purpose,
    seat: Option<&Seat<'_>>,
) -> Released {
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
    let round = Giving {
        what: "release slot",
        quorum: slot_quorum(masters.nodes.len(), limit),
        holding,
        purpose,
    };
    release_round(masters, round, &RELEASE_SLOT, &args).await
}

#[cfg(test)]
mod tests;
