//! Renewal, for a lock of any kind: one round of the kind's extension script (see `seam`),
//! decided by the kind's quorum, and what it means for the validity (see `held`): the new
//! validity is measured from the start of the round, and counts only if the quorum confirmed
//! before the current validity ran out. Never deletes anything. A renewal refused because a
//! forced release revoked the lock says by whom (`revoke`).

use std::time::Instant;

use super::held::Lock;
use super::seam::Call;
use crate::lock::quorum::outcome::ExtendError;
use crate::lock::quorum::round::{Masters, Until};
use crate::lock::quorum::tally::Decision;
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::revoke::{extend_vote, revoked_reply};

/// One extension round of `lock` (`call`: its kind's script and arguments), decided by
/// `quorum`: the new validity end, measured from the start of the round, if the quorum
/// confirmed before the current validity ran out.
pub(in crate::lock) async fn renewal(
    masters: &Masters,
    lock: &Lock,
    quorum: usize,
    call: &Call,
) -> Result<Instant, ExtendError> {
    let names = Names::of(lock.key());
    let layout = names.keys(lock.key());
    let start = Instant::now();
    // Past the validity an answer no longer counts, so there is no point waiting longer
    // (a lock built from a token has no known validity: give it one node timeout).
    let node_deadline = start + lock.timing.node_timeout;
    let deadline = if lock.validity_end > start {
        node_deadline.min(lock.validity_end)
    } else {
        node_deadline
    };
    let round = masters
        .round_with(quorum, deadline, Until::Conclusive, extend_vote, |node| {
            call.run(node, &layout)
        })
        .await;
    masters.trace("extend", lock.key(), &round, start.elapsed());
    let in_time = lock.validity_end <= start || Instant::now() < lock.validity_end;
    // A renewal that did not win, and that a master refused with a revocation naming our
    // token, was revoked (see `revoke`): say by whom, and stop now rather than retry. A force
    // that reached fewer than a majority does not count: a renewal that still won goes on.
    // Nor does one on a master not known to have given this hold K: one that refused the
    // round that took it may keep a revocation of an earlier partial hold of the same token
    // (a waiter's turn that took K there for a moment, whose undo never arrived), not of this
    // hold, which never held K there. A force that revoked this hold did so on a majority,
    // which meets the masters that gave it K.
    let known = |i: &usize| lock.granted_by.as_ref().is_none_or(|by| by.contains(i));
    let revocation = || {
        round
            .answers
            .iter()
            .enumerate()
            .filter(|(i, _)| known(i))
            .filter_map(|(_, answer)| revoked_reply(answer.as_ref()?.as_ref().ok()?)?)
            .find(|revocation| revocation.names(lock.token()))
    };
    let won = round.tally.decision() == Decision::Won;
    if !(won && in_time)
        && let Some(revocation) = revocation()
    {
        return Err(ExtendError::Revoked(Box::new(revocation)));
    }
    match round.tally.decision() {
        Decision::Won if in_time => Ok(lock.timing.validity_end(start)),
        _ if round.tally.refused_by_majority() => Err(ExtendError::Gone),
        _ => Err(ExtendError::Unconfirmed {
            failures: round.failures(masters),
        }),
    }
}

/// One round that sets `lock`'s expiry (`call`: its kind's extension script, with the time
/// left); true when `quorum` masters confirmed.
pub(in crate::lock) async fn expiry(
    masters: &Masters,
    lock: &Lock,
    quorum: usize,
    call: &Call,
) -> bool {
    let names = Names::of(lock.key());
    let layout = names.keys(lock.key());
    let start = Instant::now();
    let round = masters
        .round_with(
            quorum,
            start + lock.timing.node_timeout,
            Until::DecidedAndSent,
            extend_vote,
            |node| call.run(node, &layout),
        )
        .await;
    masters.trace("expire", lock.key(), &round, start.elapsed());
    round.tally.decision() == Decision::Won
}
