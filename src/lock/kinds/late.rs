//! Refusals that come after the decision: a master that refused for a configuration reason
//! (its certificate does not verify, a wrong password or database) is reported even when the
//! quorum did not need it.
//!
//! 1. **The problem.** A round stops listening once it has decided (see `round`). A master
//!    that answers a request on an open connection answers in the same round trip as the
//!    others, so its refusal (NOPERM, READONLY, a password it wants) is usually in by then and
//!    kept (`Lock::refusals`). But a master still being connected to answers round trips
//!    later: a TLS handshake, then AUTH and SELECT. With a majority of plain masters the
//!    decision always comes first, the request is dropped with its connection attempt, and
//!    the next round (a renewal, the release) starts another attempt that the next decision
//!    drops again: a `rediss://` master whose certificate does not verify was never reported,
//!    while the lock quietly did without it (one failure from losing it, on 3 masters).
//!    The same holds for a master on an open connection whose answer comes after the decision:
//!    a read-only replica among three masters answers READONLY, and whether the warning came
//!    depended on whether its answer beat the others' (1 run in 5 of `run -- true`). Nor does
//!    the release round hear it later: the release only deletes our token, which a replica
//!    does not have, so it writes nothing and refuses nothing.
//! 2. **The fix: a bounded moment for the late, off the path that waits.** Right after the
//!    lock is taken, the caller asks [`late_refusals`] about every master whose refusal is
//!    not known (it did not refuse before the decision) and that the round did not hear: one
//!    whose answer the round did not wait for, one without an open connection (whose
//!    connection attempt the decision cut short, or that failed already). Each is sent a
//!    PING, for one node timeout at most, the bound the round itself would have given it (a
//!    master without a connection is connected to and logged in again first). On an open
//!    connection the PING is answered after the acquire request queued before it (see
//!    `pipe`: answers come in request order), and the pipe keeps the error reply that nobody
//!    waited for, so once the PING is answered the acquire's late refusal is in
//!    (`Endpoint::take_unwanted_refusal`). A refusal for a configuration reason, the PING's
//!    own or the late one, is returned; silence and unreachable masters are not (the round's
//!    own failures already say what they can). `run` asks from a thread of its own while the
//!    command runs, so the command does not start later for it; it is said once, since a
//!    refusal heard in the round is not asked about again.
//! 3. **Why not at the next use of the connection.** There is no next use to read: a
//!    connection attempt lives in the request that made it, and nothing runs between rounds
//!    (see `client`), so each round's attempt would be cut short the same way.
//! 4. **Why not wait in the round.** The uncontended path stays one round trip: a master that
//!    the decision did not need must not delay it, and the validity runs from the round's
//!    start. A master that is down or black-holed would cost every acquire a node timeout.
//! 5. **What it costs.** Nothing when every master answered in the round. Otherwise one PING
//!    per master concerned (with a connection attempt where there is none: the connection is
//!    kept if it opens, and used by the next round), and a caller that waits for the answer
//!    before exiting waits at most one node timeout for a master it was connecting to, and
//!    for one that had the round's request a moment ([`GRACE`]) after it is done: that one may
//!    be paused, and a paused minority must not cost a node timeout (what it sent by then, a
//!    READONLY that came a moment after the others' answers, is read all the same).

use std::time::Duration;

use super::cancel::Cancel;
use crate::lock::quorum::outcome::MasterFailure;
use crate::lock::quorum::round::{Masters, Refusals};
use crate::lock::wire::endpoint::Endpoint;

/// The masters the round that took the lock did not hear (see the module header), those of
/// `refusals.heard` excepted.
pub(in crate::lock) fn unheard<'a>(
    masters: &'a Masters,
    refusals: &'a Refusals,
) -> impl Iterator<Item = &'a Endpoint> {
    masters.nodes.iter().enumerate().filter_map(|(i, node)| {
        let unheard = refusals.unanswered.contains(&i) || !node.is_connected();
        let refused = refusals
            .heard
            .iter()
            .any(|h| h.master == node.master.to_string());
        (unheard && !refused).then_some(node)
    })
}

/// How long a caller that is done still waits for a master that had the round's request: far
/// longer than a live master on a loaded host answers behind the others, short next to a
/// node timeout.
const GRACE: Duration = Duration::from_millis(50);

/// The masters that the round did not hear, asked again (a PING after the round's request, on
/// a new connection where there is none) within `timeout`: those that refused for a
/// configuration reason, with their refusal. A master that had the round's request is waited
/// for only until `done` and a moment more ([`GRACE`], or as long as the round took to decide
/// if that was longer; a live master answers about a round trip after the others): its
/// silence may be a pause (SIGSTOP, a black hole), and a paused minority must not hold up a
/// caller that is done for a node timeout (whatever arrived from it by then still counts).
pub(in crate::lock) async fn late_refusals(
    masters: &Masters,
    key: &str,
    refusals: &Refusals,
    timeout: Duration,
    done: &Cancel,
) -> Vec<MasterFailure> {
    let grace = refusals.decided_after.max(GRACE).min(timeout);
    let asked = unheard(masters, refusals).map(|node| ask_again(node, key, timeout, (grace, done)));
    let answers = futures_util::future::join_all(asked).await;
    answers.into_iter().flatten().collect()
}

/// One master of [`late_refusals`]: its refusal for a configuration reason, if it refused.
async fn ask_again(
    node: &Endpoint,
    key: &str,
    timeout: Duration,
    (grace, done): (Duration, &Cancel),
) -> Option<MasterFailure> {
    let had_request = node.is_connected();
    let ping = tokio::time::timeout(timeout, node.command(key, &[b"PING"]));
    let answer = if had_request {
        tokio::select! {
            answer = ping => Some(answer),
            () = async {
                done.cancelled().await;
                tokio::time::sleep(grace).await;
            } => None,
        }
    } else {
        Some(ping.await)
    };
    let error = match answer {
        // Answered after the round's request: its refusal, if it refused, is in by now.
        Some(Ok(Ok(_))) | None => node.take_unwanted_refusal()?,
        Some(Ok(Err(error))) => error,
        // A handshake that never ended says so (a plaintext port given as rediss://).
        Some(Err(_)) => node
            .take_unwanted_refusal()
            .unwrap_or_else(|| node.timed_out()),
    };
    error.cause().is_configuration().then(|| MasterFailure {
        master: node.master.to_string(),
        error,
    })
}
