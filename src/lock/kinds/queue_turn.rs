//! One turn of a waiter in the fair queue (see `queue`): its kind's WAIT (the lock's, a
//! reader's READ_WAIT, a slot's WAIT_SLOT: see `seam`) on every master at once, and what the
//! answers say: the lock taken, or where the waiter stands.

use std::time::Instant;

use super::held::Lock;
use super::seam::{InTheWay, Queued, Wait};
use super::waiter::{Waiter, keep, lease};
use super::wakeup::Wakeup;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::{Masters, Refusals, Until};
use crate::lock::quorum::tally::Decision;
use crate::lock::quorum::tally::Loss;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::queue::{Turn, wait_vote};
use crate::lock::scripts::replies::Mark;

/// What one turn found.
pub(in crate::lock) struct Polled {
    pub outcome: Result<Lock, AttemptFailure>,
    /// Some master gave us the lock although the turn failed: undo it.
    pub partial: bool,
    /// Masters that have our place (or gave us the lock).
    pub placed: usize,
    /// Of those, the masters where this very turn made the place (it had lapsed there).
    pub remade: usize,
    /// Masters that answered that they have no place for us.
    pub placeless: usize,
    /// Some master names us first (for a slot: in a position the free slots leave room for).
    pub first: bool,
    /// A master found the key in use otherwise (as a lock, readers or a semaphore).
    pub conflict: Option<Conflict>,
    /// Masters whose line has the other policy, and refused to place us in it (the policy
    /// they named is in `policy`). Unlike `conflict`, a vote: waiters of both policies that
    /// arrive at once may each be placed first on some masters, and the line's policy is the
    /// one of the waiters placed on enough of them (see `queue`, "One policy per line").
    pub policy_refusals: usize,
    pub policy: Option<Conflict>,
    /// Masters that did not answer.
    pub unheard: usize,
    /// A master says a newer waiter evicted us from the line (`--supersede`): who.
    pub superseded: Option<Mark>,
    /// Some master refused because the lock is held by a token without a holder record: a
    /// client outside the queue, whose release announces nothing (see `wakeup`).
    pub outsider: bool,
}

/// A waiter's turns: the waiter and the arguments of its every turn, built once.
pub(in crate::lock) struct Turns<'a> {
    pub waiter: &'a Waiter<'a>,
    pub queued: Queued,
}

impl<'a> Turns<'a> {
    pub(in crate::lock) fn new(waiter: &'a Waiter<'a>) -> Turns<'a> {
        let record = waiter
            .holder
            .map(|h| h.record(&waiter.token))
            .unwrap_or_default();
        // The same record, dated from when the wait began.
        let waiting_record = waiter
            .holder
            .map(|h| {
                Holder {
                    since_ms: crate::lock::scripts::holder::unix_millis(
                        std::time::SystemTime::now(),
                    ),
                    ..h.clone()
                }
                .record(&waiter.token)
            })
            .unwrap_or_default();
        let queued = Queued {
            token: waiter.token.clone(),
            ttl_ms: waiter.timing.ttl_ms(),
            record,
            ticket: waiter.ticket.to_string(),
            waiting_record,
            lease_ms: lease(&waiter.timing).as_millis().to_string(),
            keep_ms: keep(&waiter.timing).as_millis().to_string(),
            history: waiter.history,
        };
        Turns { waiter, queued }
    }

    /// One turn on every master, as the waiter's kind asks for it (see `seam`), decided by the
    /// kind's quorum; a waiter whose position is below the kind's room somewhere may take it at
    /// its next turn. `cause` is what started it (see `wakeup`), said when it takes the lock.
    pub(in crate::lock) async fn take(
        &self,
        masters: &Masters,
        join: bool,
        cause: Wakeup,
    ) -> Polled {
        let waiter = self.waiter;
        let seam = waiter.seam;
        let Wait { call, room, decode } = seam.wait(&self.queued, join, waiter.names, waiter.line);
        let quorum = seam.quorum(masters.nodes.len());
        let layout = waiter.names.keys(waiter.key);
        let start = Instant::now();
        let round = masters
            .round_with(
                quorum,
                start + waiter.timing.node_timeout,
                // Not `Decided`: a turn that fails must hear every master, or undo what one it
                // did not hear from may have given it (no partial holds). A lost turn is not
                // urgent; a won one still returns at quorum.
                Until::WonOrAllAnswered,
                wait_vote,
                |node| call.run(node, &layout),
            )
            .await;
        let elapsed = start.elapsed();
        masters.trace("turn", waiter.key, &round, elapsed);
        let mut polled = Polled {
            outcome: Err(AttemptFailure::TooSlow { elapsed }),
            // Anything but a refusal from every master may have left the key with us.
            partial: round.tally.no() < masters.nodes.len(),
            placed: 0,
            placeless: 0,
            remade: 0,
            first: false,
            conflict: None,
            policy_refusals: 0,
            policy: None,
            unheard: round
                .answers
                .iter()
                .filter(|answer| !matches!(answer, Some(Ok(_))))
                .count(),
            superseded: None,
            outsider: false,
        };
        let mut held = InTheWay::default();
        for answer in round.answers.iter().flatten() {
            match decode(answer) {
                Some(Turn::Taken) => polled.placed += 1,
                Some(Turn::NoPlace) => polled.placeless += 1,
                Some(Turn::Conflict(policy @ Conflict::Policy { .. })) => {
                    polled.policy_refusals += 1;
                    polled.policy = Some(policy);
                }
                Some(Turn::Conflict(conflict)) => polled.conflict = Some(conflict),
                Some(Turn::Superseded(mark)) => polled.superseded = Some(mark),
                Some(Turn::Waiting(place)) => {
                    polled.placed += 1;
                    polled.remade += usize::from(!place.placed_before);
                    polled.first |= place.position < room;
                    held.place = held.place.max(place.position + 1);
                    held.waiters = held.waiters.max(place.waiters);
                    held.free &= place.refusal.free;
                    held.shared |= place.refusal.shared;
                    held.revoked |= place.refusal.revoked;
                    // Readers announce their releases like holders of the lock: not outsiders.
                    polled.outsider |= seam.outsiders()
                        && !place.refusal.free
                        && !place.refusal.shared
                        && place.refusal.holder.is_none();
                    held.holder = held.holder.take().or(place.refusal.holder);
                    if let Some(ttl) = place.refusal.expires_in {
                        held.expires_in = Some(held.expires_in.map_or(ttl, |t| t.max(ttl)));
                    }
                }
                None => {}
            }
        }
        polled.outcome = match round.tally.decision() {
            Decision::Won if elapsed + waiter.timing.drift() < waiter.timing.ttl => {
                log::info!(
                    event = "acquired", key = waiter.key, outcome = "turn", cause = cause.label(),
                    elapsed_ms = elapsed.as_micros() as f64 / 1000.0,
                    confirmed = round.tally.yes(), masters = masters.nodes.len();
                    "acquired {:?} in turn (started by {cause}) in {elapsed:.1?}", waiter.key
                );
                polled.partial = false;
                let refusals = Refusals::of(&round, masters, elapsed);
                Ok(Lock {
                    kind: seam.kind(),
                    key: waiter.key.to_string(),
                    token: waiter.token.clone(),
                    timing: waiter.timing,
                    validity_end: waiter.timing.validity_end(start),
                    refusals,
                    woken_by: None,
                    granted_by: Some(round.granted_by(wait_vote)),
                    history: waiter.history,
                })
            }
            Decision::Won => Err(AttemptFailure::TooSlow { elapsed }),
            Decision::Lost(Loss::Refused) => {
                let (failure, partial) = seam.refused_turn(held, polled.first);
                polled.partial |= partial;
                Err(failure)
            }
            Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                Err(AttemptFailure::Unreachable {
                    needed: quorum,
                    failures: round.failures(masters),
                })
            }
        };
        polled
    }
}
