//! Undoing an attempt: whatever a failed or interrupted attempt (or a waiter's turn) may have
//! taken is removed at once, and the removal is not overtaken by the attempt it undoes.
//!
//! 1. **The same connection.** The undo (RELEASE or RELEASE_SLOT, announcing nothing) goes to
//!    each master on the connection that carried the attempt, behind it (see `pipe`: queued in
//!    order, never withdrawn), so the master runs the attempt first, however late, and the
//!    undo then removes what it took.
//! 2. **The race.** That connection can break before the attempt is answered: the master
//!    closed it, a middlebox reset it, or something that is not a reply came (and we closed
//!    it). The attempt's bytes may then be anywhere: run already, lost, or still on their way
//!    (held by a middlebox, retransmitted, in the socket buffer of a busy master). The undo
//!    has to go on a new connection and may arrive first; the attempt then takes the key after
//!    its undo and holds it until its TTL: a partial hold that splits the vote of contenders.
//! 3. **What is done: bounded, not prevented.** A connection that breaks with requests
//!    unanswered of which some bytes went out is noted, with the time (`Pipe::stranded`,
//!    `Node::stranded_since`). An undo that finds such a break on any master, noted since its
//!    attempt could have been sent (two node timeouts before the undo; an attempt's round
//!    lasts at most one), sends itself once more, to every master, one node timeout after the
//!    first undo ended (an undo is a compare-and-delete of our own token: running it twice is
//!    harmless). A stranded attempt that runs within that time is removed by the second undo.
//! 4. **Why not more.** Nothing a client sees tells whether a request still in the network
//!    will arrive: a close may come from a middlebox, not from the master. Preventing it
//!    outright would need every attempt to check a per-token tombstone on every master (a
//!    write per undo, a read per attempt on the uncontended path, one key more per lock). So an
//!    attempt that reaches its master more than a node timeout after its undo still holds that
//!    master until its TTL, as any partial hold did before. That costs contenders time, never
//!    safety: a partial hold only refuses others, and whoever holds a majority holds it alone.
//! 5. **Cost.** Only after a break that stranded requests: one node timeout and one round more.
//!    Otherwise nothing.
//! 6. **After a signal** ([`Purpose::Abandon`]: the wait was cancelled, redlock is about to exit
//!    128+N). The user asked redlock to stop now, and a master that accepts and never answers,
//!    with `--node-timeout 20s`, would otherwise hold the exit for 20 s (twice, with step 3).
//!    So the undo stops as soon as it is on the wire of every connection (`Until::Sent`),
//!    decided or not: that is all step 1 needs, since bytes in the kernel's hands reach a live
//!    master even after redlock exits, behind the attempt they undo; no answer would change
//!    what redlock does next. Step 3's second pass is skipped: it would wait a node timeout,
//!    and what it guards against only costs contenders time (a partial hold until the TTL),
//!    never safety. A master still being connected to was sent neither the attempt nor the
//!    undo.

use std::time::{Duration, Instant};

use super::held::Timing;
use crate::lock::quorum::round::{Masters, Until};

/// What a release round is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lock) enum Purpose {
    /// The end of a hold: announced to the next waiter, its outcome reported.
    Release,
    /// Removing what a failed attempt or turn may have taken (steps 1 to 5).
    Undo,
    /// The same after a signal ended the wait: bounded by getting onto the wire (step 6).
    Abandon,
}

impl Purpose {
    /// Whether the release tells the next waiter (see RELEASE).
    pub(in crate::lock) fn announces(self) -> bool {
        self == Purpose::Release
    }

    /// How long the round listens.
    pub(in crate::lock) fn until(self) -> Until {
        match self {
            Purpose::Release => Until::Released,
            Purpose::Undo => Until::DecidedAndSent,
            Purpose::Abandon => Until::Sent,
        }
    }
}

/// Runs `round`, a release round, listening as `purpose` says; for an undo, runs it once more,
/// one node timeout later, if a connection to some master broke with requests stranded on it
/// since the attempt being undone could have been sent (see the header). Returns the first
/// round's outcome: the second only removes what a late attempt took.
pub(in crate::lock) async fn guarded<T, Fut>(
    masters: &Masters,
    timing: &Timing,
    purpose: Purpose,
    round: impl Fn(Until) -> Fut,
) -> T
where
    Fut: Future<Output = T>,
{
    // The attempt's round started at most one node timeout before this; one more for margin.
    let now = Instant::now();
    let since = now.checked_sub(2 * timing.node_timeout).unwrap_or(now);
    let first = round(purpose.until()).await;
    if purpose == Purpose::Undo && stranded(masters, timing, since).await {
        round(purpose.until()).await;
    }
    first
}

/// Whether a connection to some master broke with requests stranded on it since `since`; if
/// so, after waiting one node timeout, so that a stranded attempt on its way lands first.
async fn stranded(masters: &Masters, timing: &Timing, since: Instant) -> bool {
    let stranded = masters
        .nodes
        .iter()
        .filter(|node| node.stranded_since(since));
    let names: Vec<String> = stranded.map(|node| node.master.to_string()).collect();
    if names.is_empty() {
        return false;
    }
    let wait: Duration = timing.node_timeout;
    log::debug!(
        "the connection to {} broke with requests unanswered: undoing again in {wait:?}, after \
         anything still on its way",
        names.join(", ")
    );
    tokio::time::sleep(wait).await;
    true
}
