//! The one release round, for every kind: the kind gives its call (RELEASE and its kin, with
//! their arguments, [`Seam::release`]); the round is the engine's, written once here.
//!
//! **Why it is enough.** The call is sent to every master, decided by the kind's quorum and
//! bounded by one node timeout: a master that does not answer keeps the hold only until its
//! TTL, which every key has. The undo of an attempt ([`Purpose::Undo`], [`Purpose::Abandon`])
//! is sent again when the attempt it undoes may overtake it on the wire (see `undo`), so that
//! no partial hold outlives the attempt that made it by more than its TTL. The answers are read
//! for a revocation of the token (see `revoke`), so that a revoked holder learns it here.

use std::time::Instant;

use super::revoke;
use super::seam::{Holding, Seam, Seat};
use super::undo::{self, Purpose};
use crate::lock::quorum::outcome::Released;
use crate::lock::quorum::round::Masters;
use crate::lock::scripts::revoke::release_vote;

/// Gives back what `holding` holds on every master, as `seam` gives it back: a release
/// ([`Purpose::Release`]), or the undo of a failed or interrupted attempt or turn, which with
/// `seat` (a waiter's own turn) puts its place back where taking had removed it.
pub(in crate::lock) async fn release(
    seam: &dyn Seam,
    masters: &Masters,
    holding: Holding<'_>,
    purpose: Purpose,
    seat: Option<&Seat<'_>>,
) -> Released {
    let giving = seam.release(holding, purpose, seat);
    let (key, timing) = (holding.key, holding.timing);
    let quorum = seam.quorum(masters.nodes.len());
    let start = Instant::now();
    let layout = holding.names.keys(key);
    let round = undo::guarded(masters, &timing, purpose, |until| {
        masters.round_with(
            quorum,
            Instant::now() + timing.node_timeout,
            until,
            release_vote,
            |node| giving.call.run(node, &layout),
        )
    })
    .await;
    masters.trace(giving.trace, key, &round, start.elapsed());
    revoke::released(&round, masters, holding.token)
}
