//! Revocation (`release --force`, src/lock/kinds/revoke.rs and src/lock/scripts/revoke.rs) in
//! the queue's model: FORCE and EXTEND as a master runs them, how a forcer and a renewing
//! holder read their answers, and the runs that check it.
//!
//! What is added to the model: a forcer (the last client) whose one round is FORCE, sent at
//! any moment, landing on each master at any moment; every other client, once it holds, may
//! renew once (EXTEND), at any moment, so a renewal may run before, between or after the
//! force's scripts ("a revoked holder renewing late"). A renewal refused by a majority (its
//! token gone, the marker in its place) stops the holder, which then releases, as `run` does:
//! that release crosses it off (ACKNOWLEDGE) and its hand-off wakes the first waiter ("a
//! waiter woken by the revocation"). A revoked holder that never learns of it releases as
//! usual, with the same effect.
//!
//! Time, as in the rest of the model, is events: the marker expires only after the revoked
//! holder died (a holder frozen for good: its guard kills its command at its validity, before
//! the marker's TTL, the revoked token's plus drift, runs out; the argument is in
//! src/lock/kinds/revoke.rs). FORCE publishes nothing a client here hears: the Lua publishes only on the key's
//! release channel, for `status --watch`, where no waiter in line listens.
//!
//! The known-bad rules: FORCE frees the key at once (`Force::FreeAtOnce`), as `DEL` on every
//! master would; or the marker runs out before the revoked holder's validity
//! (`Force::ShortTtl`). The model finds two holders either way: the revoked one, which has not
//! renewed yet, and the waiter that took the freed key.
//!
//! Whose revocation a holder counts (issue 47, item 4): a waiter's turn may take K on one
//! master for a moment and be revoked there, and if its undo is lost (a connection broken
//! under it) the marker stays, naming its token, after it later takes the lock properly on
//! the other masters. `Start::StaleMarker` starts there (a ghost, `Master::stale`, marks that
//! marker). A renewal that is lost counts a revocation only from the masters that gave its
//! hold the lock (`Lock::granted_by`, the answers the hold won with: `Client::won_with`),
//! so it never names a force that ran before it held (`COUNTS_ITS_OWN`). Two known-bad rules,
//! each caught in 13 steps: counting from any master (`Force::CountedFromAnyMaster`), and
//! from every master but those that refused the winning round (`Force::CountedUnlessRefused`,
//! the first fix), where the stale marker's master answers after the turn already won. From
//! that start the no-lost-wake-up promise is not checked: it is for runs without a lost
//! request (see `properties`).
//!
//! A semaphore's slots (limit 2 on 3 masters, so a holder needs all 3) are revoked the same
//! way: FORCE renames every live slot, still counted (`revoked_slots`); EXTEND_SLOT answers
//! revoked; a revoked holder's release frees its renamed slot and wakes whoever that lets in.
//! The first known-bad rule, for slots (every slot freed at once), lets a third holder in. In these runs the first
//! slot holder renews (at any moment), the second never does (`Own::never_renews`): both
//! renewing multiplies the interleavings past CI's budget.

use stateright::Checker;

use super::client::{Client, Phase};
use super::master::{Answer, Master, Ran, answered};
use super::properties::COUNTS_ITS_OWN;
use super::protocol::{Force, Rules};
use super::start::Start;
use super::system::QueueModel;
use super::{fixed, fixed_slots, hand_off, holds};
use crate::model_kit::{MAJORITY, MASTERS, check};

impl Master {
    /// FORCE: a token in K is revoked; a marker, or nothing, is left as it is.
    pub(super) fn force(&mut self, force: Force) -> Ran {
        // Taken either way: the known-bad rule frees it.
        if let Some(holder) = self.lock.take()
            && force != Force::FreeAtOnce
        {
            self.revoked = Some(holder);
            self.stale = false;
        }
        answered(Answer::Forced)
    }

    /// EXTEND: compare-and-pexpire; the marker in the caller's place says so.
    pub(super) fn extend(&mut self, from: u8) -> Ran {
        let revoked = self.revoked == Some(from);
        answered(Answer::Renewed {
            extended: self.lock == Some(from),
            revoked,
            stale: revoked && self.stale,
        })
    }
}

impl Client {
    /// An answer to the forcer's round, or to a holder's renewal. The forcer is done once
    /// every master answered. A renewal confirmed by the kind's quorum goes on holding; lost
    /// (refused by more than N − quorum), the holder stops (its command dead) and releases
    /// (RELEASE, which crosses it off where it was revoked) when a master said it was revoked
    /// or a majority refused (`renewal`: `Revoked`, `Gone`); otherwise the renewal was only
    /// unconfirmed, and the holder goes on until its validity ends (here: goes on holding,
    /// which only adds holding).
    pub(super) fn forced_or_renewed(&mut self, rules: Rules) {
        let answers = self.answers.iter().flatten();
        if self.own.forcer {
            if answers.count() == MASTERS {
                self.stop_listening();
                self.phase = Phase::Done;
            }
            return;
        }
        let extended = answers
            .clone()
            .filter(|a| matches!(a, Answer::Renewed { extended: true, .. }))
            .count();
        // The revocations it counts: from the masters that gave it the lock (`renewal`), or
        // as a known-bad rule says.
        let counted = || {
            let won_with = self.won_with;
            self.answers
                .into_iter()
                .zip(won_with)
                .filter(move |(_, took)| {
                    !rules.keeps_grants || rules.force.counts_revocation_from(*took)
                })
                .filter_map(|(answer, _)| match answer {
                    Some(Answer::Renewed {
                        revoked: true,
                        stale,
                        ..
                    }) => Some(stale),
                    _ => None,
                })
        };
        let revoked = counted().next().is_some();
        let refused = answers.count() - extended;
        let quorum = rules.kind.quorum();
        let lost = refused > MASTERS - quorum;
        // `renewal` looks for a revocation once the round is decided and not won (here:
        // lost); it names the first it finds, so any stale one counted may be the one named.
        if lost && counted().any(|stale| stale) {
            self.own.named_stale = true;
        }
        if extended >= quorum || (lost && !revoked && refused < MAJORITY) {
            self.stop_listening();
            self.phase = Phase::Holding;
        } else if lost {
            self.stop_listening();
            self.send(super::master::Request::Release {
                announce: true,
                reseat: None,
            });
            self.phase = Phase::Done;
        }
    }
}

fn forced(force: Force, model: QueueModel) -> QueueModel {
    QueueModel {
        force: Some(force),
        ..model
    }
}

/// A holder revoked at any moment, renewing at any moment, and two waiters: never two holders,
/// the order kept, and the first waiter woken by the revoked holder's release, never left to
/// a timer.
#[test]
fn a_revoked_holder_hands_off_to_a_waiter_without_a_timer() {
    holds(forced(Force::Marker, fixed(hand_off(2, 0, 0))));
}

/// A newcomer arrives at any moment of a revocation: it queues behind the revoked key and is
/// woken by the revoked holder's release.
#[test]
fn a_newcomer_waits_out_a_revocation() {
    holds(forced(Force::Marker, fixed(hand_off(0, 0, 1))));
}

/// Two newcomers from nothing, the force at any moment: a partial hold revoked, a holder
/// revoked before or after its renewal.
#[test]
fn a_revocation_of_newcomers_from_nothing() {
    holds(forced(Force::Marker, fixed(Start::Empty { newcomers: 2 })));
}

/// The revoked holder may die at any step (frozen for good): the marker expires after it, and
/// never lets a second holder in; with timers, the waiter takes the key in the end.
#[test]
fn a_revoked_holder_that_dies_is_waited_out() {
    holds(forced(
        Force::Marker,
        QueueModel {
            crash: true,
            timers: 1,
            ..fixed(hand_off(1, 0, 0))
        },
    ));
}

/// Larger bounds than CI can afford (minutes in a debug build): a waiter and a newcomer; the
/// revoked holder's death with two timers.
#[test]
#[ignore]
fn revocation_holds_within_larger_bounds() {
    holds(forced(Force::Marker, fixed(hand_off(1, 0, 1))));
    holds(forced(
        Force::Marker,
        QueueModel {
            crash: true,
            timers: 2,
            ..fixed(hand_off(1, 0, 0))
        },
    ));
}

/// The known-bad rule: FORCE frees the key at once. The waiter's backoff takes the freed key
/// while the revoked holder, which has not renewed yet, still holds it: two holders.
#[test]
fn freeing_the_key_at_once_on_force_makes_two_holders() {
    finds_two_holders(Force::FreeAtOnce);
}

/// A second known-bad rule: the marker runs out before the revoked holder's validity (its TTL
/// not the holder's own remaining TTL plus drift). The waiter's timer takes the key where the
/// marker ran out, while the revoked holder, which has not renewed yet, still holds it.
#[test]
fn a_marker_shorter_than_the_holders_validity_makes_two_holders() {
    finds_two_holders(Force::ShortTtl);
}

/// A holder, a waiter with one timer, a forcer that revokes with `force`: the checker finds
/// two holders, and the trace says how.
fn finds_two_holders(force: Force) {
    finds_too_many_holders(forced(
        force,
        QueueModel {
            timers: 1,
            ..fixed(hand_off(1, 0, 0))
        },
    ));
}

/// The checker finds more holders than the limit in `model`, and the trace says how.
fn finds_too_many_holders(model: QueueModel) {
    let checker = check::explore(model, 1);
    let path = checker.assert_any_discovery("never more holders than the limit");
    println!("{}", super::trace::tell(&model, path));
}

/// A marker that an earlier partial hold of the waiter's token left on one master (its undo
/// lost: `Start::StaleMarker`), a force at any moment, each holder renewing at any moment:
/// the waiter takes the lock on the other two, and a renewal of its that is lost counts only
/// a revocation of this hold (from the masters that gave it the lock, `Lock::granted_by`).
#[test]
fn a_revocation_of_an_earlier_partial_hold_is_not_counted_for_a_later_one() {
    holds(forced(Force::Marker, fixed(Start::StaleMarker)));
}

/// Known-bad: a renewal counts a revocation from any master. The waiter, holding on two
/// masters, is revoked on one by the force; its lost renewal counts the stale marker of the
/// third, and would name a force that ran before it held.
#[test]
fn counting_a_revocation_from_any_master_names_an_earlier_force() {
    counts_a_stale_revocation(Force::CountedFromAnyMaster);
}

/// Known-bad: the first fix (2ce65c6), every master but those that refused the winning
/// round. The waiter's turn wins on two masters before the third (the stale marker's)
/// answers; that master did not refuse before the win, so its marker counts.
#[test]
fn counting_a_revocation_unless_refused_names_an_earlier_force() {
    counts_a_stale_revocation(Force::CountedUnlessRefused);
}

/// The search for `force`'s model, from a stale marker, stops at a holder that counted it;
/// the path is told.
fn counts_a_stale_revocation(force: Force) {
    let model = forced(force, fixed(Start::StaleMarker));
    let path = check::until_caught(model, COUNTS_ITS_OWN)
        .unwrap_or_else(|| panic!("{force:?} was not caught"));
    println!("{force:?}:\n{}", super::trace::tell(&model, path));
}

/// Slots of a semaphore of limit 2 (a holder needs all 3 masters), revoked by `force`.
fn forced_slots(force: Force, start: Start) -> QueueModel {
    forced(force, fixed_slots(start))
}

/// Both slot holders revoked at any moment, each renewing at any moment, and a waiter: never
/// three holders, the order kept, and the waiter woken by a revoked holder's release (its
/// renamed slot freed), never left to a timer.
#[test]
fn revoked_slots_hand_off_to_a_waiter_without_a_timer() {
    holds(forced_slots(Force::Marker, hand_off(1, 0, 0)));
}

/// A newcomer arrives at any moment of a revocation of both slots: it queues behind the
/// revoked slots and is woken by a revoked holder's release.
#[test]
fn a_newcomer_waits_out_revoked_slots() {
    holds(forced_slots(Force::Marker, hand_off(0, 0, 1)));
}

/// Larger bounds than CI can afford: a revoked slot holder may die at any step (frozen for
/// good): its renamed slot expires after it, and never lets a third holder in; with a timer,
/// the waiter takes a slot in the end. (2026-11-28, debug build: 45,204,970 states, 8,573,181
/// distinct, 34 steps deep, 321 s; passed.)
#[test]
#[ignore]
fn a_revoked_slot_holder_that_dies_is_waited_out() {
    holds(QueueModel {
        crash: true,
        timers: 1,
        ..forced_slots(Force::Marker, hand_off(1, 0, 0))
    });
}

/// The known-bad rule for slots: FORCE frees every slot at once (as `DEL` of the slots key
/// on every master would). The waiter's backoff takes a freed slot while both revoked
/// holders, which have not renewed yet, still hold theirs: three holders of a limit of 2.
#[test]
fn freeing_the_slots_at_once_on_force_lets_three_in() {
    finds_too_many_holders(QueueModel {
        timers: 1,
        ..forced_slots(Force::FreeAtOnce, hand_off(1, 0, 0))
    });
}
