//! A newcomer's attempt, one round for every kind: the kind gives its call (the script and its
//! arguments), how its round is decided and what its answers mean ([`Seam::newcomer`],
//! [`Seam::conflict`], [`Seam::refused`]); the round, the decision, the validity and the undo
//! are the engine's, written once here.
//!
//! **The decision.** Taken only when the kind's quorum said yes and the round ended within
//! the TTL less the drift (Redlock's validity, measured on this host's monotonic clock from
//! before the first request). A conflict the answers show (the key in use as another kind,
//! holders that disagree on the limit) is never worth waiting for, and is reported before a
//! refusal is read.
//!
//! **Nothing left behind.** Unless every master refused, some may have granted it (also those
//! that did not answer in time, or whose answer the round did not wait for): whatever a failed
//! attempt may hold is given back at once, with the kind's own release as an undo, so that
//! contenders do not split the vote until the TTL runs out. A conflict is undone even when
//! every master answered it, as a master that saw none may have granted it.
//!
//! **The ticket.** A refused caller that will wait hears enough masters to carry the tickets
//! it needs: N − majority + 1 of them (the queue's own quorum is the majority, whatever the
//! kind needs; see `queue`), and it joins the queue only with that many (see `take`).

use std::time::Instant;

use super::attempt::Refused;
use super::held::Lock;
use super::release::release;
use super::seam::{Holding, Request, Seam};
use super::undo::Purpose;
use super::waiter::keep;
use crate::lock::quorum::outcome::AttemptFailure;
use crate::lock::quorum::round::{Masters, Refusals, Until};
use crate::lock::quorum::tally::{Decision, Loss, majority};
use crate::lock::scripts::calls::args::Take;
use crate::lock::scripts::keys::Names;
use crate::plural::counted;

/// One attempt as a newcomer with `token` at what `seam` takes: taken, or refused (with a
/// ticket for the queue when the request will wait and enough masters drew one); whatever a
/// failed attempt may have left is removed before it returns.
pub(in crate::lock) async fn attempt(
    seam: &dyn Seam,
    masters: &Masters,
    request: &Request<'_>,
    names: &Names,
    token: &str,
) -> Result<Lock, Refused> {
    let (key, timing, holder) = (request.key, request.timing, request.holder);
    let will_wait = request.will_wait();
    let n = masters.nodes.len();
    let quorum = seam.quorum(n);
    let take = Take {
        token: token.to_string(),
        ttl_ms: timing.ttl_ms(),
        record: holder.map(|h| h.record(token)).unwrap_or_default(),
        will_wait,
        keep_ms: keep(&timing).as_millis().to_string(),
    };
    let tickets_needed = n - majority(n) + 1;
    let newcomer = seam.newcomer(key, take, request.history.spec(), tickets_needed);
    let undone = Holding {
        key,
        names,
        token,
        timing,
        history: request.history,
        how: "",
    };
    let layout = names.keys(key);
    let start = Instant::now();
    let round = masters
        .round_with(
            quorum,
            start + timing.node_timeout,
            if will_wait {
                newcomer.waiting
            } else {
                Until::Decided
            },
            newcomer.vote,
            |node| newcomer.call.run(node, &layout),
        )
        .await;
    let elapsed = start.elapsed();
    masters.trace(newcomer.trace, key, &round, elapsed);
    let decision = round.tally.decision();
    if let Some(conflict) = seam.conflict(&round, decision == Decision::Won) {
        release(seam, masters, undone, Purpose::Undo, None).await;
        return Err(Refused::Conflict(conflict));
    }
    let (failure, ticket) = match decision {
        Decision::Won if elapsed + timing.drift() < timing.ttl => {
            // The round stops listening at quorum: say what is known, not more.
            let yes = round.tally.yes();
            let so_far = if round.tally.pending() > 0 {
                " so far"
            } else {
                ""
            };
            log::info!(
                event = "acquired", key = key, outcome = "won",
                elapsed_ms = elapsed.as_micros() as f64 / 1000.0, confirmed = yes, masters = n;
                "acquired {} in {elapsed:.1?}: {yes} of {} confirmed{so_far}",
                newcomer.what,
                counted(n, "master")
            );
            return Ok(Lock {
                kind: seam.kind(),
                key: key.to_string(),
                token: token.to_string(),
                timing,
                validity_end: timing.validity_end(start),
                refusals: Refusals::of(&round, masters, elapsed),
                woken_by: None,
                granted_by: Some(round.granted_by(newcomer.vote)),
                history: request.history,
            });
        }
        Decision::Won => (AttemptFailure::TooSlow { elapsed }, None),
        Decision::Lost(Loss::Refused) => seam.refused(&round, tickets_needed),
        Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
            let failure = AttemptFailure::Unreachable {
                needed: quorum,
                failures: round.failures(masters),
            };
            (failure, None)
        }
    };
    if round.tally.no() < n {
        release(seam, masters, undone, Purpose::Undo, None).await;
    }
    Err(Refused::Failed(failure, ticket.filter(|_| will_wait)))
}
