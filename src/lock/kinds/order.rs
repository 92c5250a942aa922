//! Orders (`--order N`): a run whose order is lower than the highest order that already took
//! the lock is outdated, and neither waits nor runs. CI deploy queues give each pipeline a
//! number that grows (its id); once pipeline 103 deployed, 101 must not deploy after it.
//!
//! The highest order that took the lock is a max register kept on every master (the order
//! register, see `keys::order`), read and raised by one script (`scripts::order`):
//! 1. **Before waiting**, the register is read from a majority ([`check`]). A master holding an
//!    order above N makes the run outdated at once: it does not join the line.
//! 2. **Once the lock is taken with N, before the command runs**, the register is raised to N
//!    on every master with a set-if-not-lower ([`raise`]), and the answers of a majority are
//!    read: each master says what it held before. If one held more than N, the run is outdated
//!    (a higher order took the lock while this run waited): the lock is released and the
//!    command does not run. If a majority did not answer, the command does not run either: the
//!    lock is released and the run fails as unreachable (exit 69). An equal order raises it
//!    again (the same pipeline retried runs again, and renews the register's TTL).
//!
//! Why it holds (the fencing counter's argument, see `fence`): a run with order h runs only
//! after a majority confirmed that it holds h or more. A run with r < h that takes the lock
//! later does so after h's hold ended (the lock's own safety: holds do not overlap), so its
//! raise reads a majority after h's raise landed; two majorities share a master, that master
//! holds h or more (a register never goes down but by its TTL), and the run sees it: outdated.
//! Step 1 is only the early exit; step 2, under the lock, is what decides. A run nested in a
//! hold of the same lock (re-entrance) takes nothing but raises all the same, under the
//! enclosing hold ([`raise_inherited`]): its command runs there, so its order took the lock
//! as much as the enclosing run's did, and a later lower order must see it. The model in
//! tests/queue_model/orders.rs checks this with requests delayed, reordered and lost on a
//! minority, a run that dies mid-raise, and a raise that lands after its run decided, ran or
//! died; it catches a register set to a lower order, a decision on one answer, and a raise
//! whose answers are not heeded.
//!
//! What a failed raise leaves: the masters it reached hold N. A lower order may then be
//! called outdated although N's command never ran (it took the lock, and the register says
//! so); the same N, retried, runs. This errs on the side of skipping a deploy that a newer one
//! will replace, never of running one after a newer one.
//!
//! # Assumes
//! - **The fencing counter's assumptions** (see `fence`): masters keep the register
//!   (persistence; `doctor`: *persistence*), and the lock's own (see `held`), since step 2
//!   relies on holds not overlapping: a raise confirmed after the lock's validity ran out
//!   counts for nothing ([`OrderError::Expired`]).
//! - **A year and a day.** The register's TTL is [`LONGEST_TTL_MS`], set again by every run
//!   that takes the lock with the highest order: a key where no run took the lock for longer
//!   forgets its orders, as it forgets every other key redlock wrote (only the fencing counter
//!   has no TTL, and `list --problems` reports it when idle).
//! - **Orders only go up** for newer runs, and stay below 2^53 (`scripts::order`).

use std::time::{Duration, Instant};

use super::held::Lock;
use crate::lock::quorum::outcome::MasterFailure;
use crate::lock::quorum::round::{Masters, Round, Until};
use crate::lock::quorum::tally::Vote;
use crate::lock::scripts::LONGEST_TTL_MS;
use crate::lock::scripts::ORDER;
use crate::lock::scripts::calls::args;
use crate::lock::scripts::keys;
use crate::lock::scripts::order::register;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// Why a run with an order may not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrderError {
    /// A higher order already took the lock: `ran`, the highest a master said.
    Outdated { ran: u64 },
    /// Too few masters answered (`failures`: those that failed, and why).
    Unreachable { failures: Vec<MasterFailure> },
    /// The lock's validity ran out before a majority confirmed the raise.
    Expired,
    /// The lock is a slot of a semaphore or a reader's share: others hold it alongside, so no
    /// order could say which of them is outdated. Nothing was read or written.
    NotAlone,
}

/// Step 1: whether a run with `order` is already outdated on lock `key`, by a read of a
/// majority's registers.
pub(in crate::lock) async fn check(
    masters: &Masters,
    key: &str,
    order: u64,
    node_timeout: Duration,
) -> Result<(), OrderError> {
    let round = ask(masters, key, order, false, node_timeout).await;
    judge(masters, &round, order)
}

/// Step 2: raises the register of the lock just taken to `order`, on every master; outdated
/// when a master already held more. Only for a lock held alone (the caller asks its seam).
pub(in crate::lock) async fn raise(
    masters: &Masters,
    lock: &Lock,
    order: u64,
) -> Result<(), OrderError> {
    raise_inherited(masters, lock.key(), order, lock.timing().node_timeout).await?;
    if lock.validity().is_zero() {
        return Err(OrderError::Expired);
    }
    Ok(())
}

/// Step 2 for a run nested in a hold of the same lock (re-entrance, see `commands::reentrance`):
/// it takes nothing, and its command runs under the enclosing hold, so its order is raised
/// under that hold as the enclosing run's own would be. Its validity is the enclosing run's
/// (unknown here): the enclosing supervisor stops this process's group before it ends.
pub(in crate::lock) async fn raise_inherited(
    masters: &Masters,
    key: &str,
    order: u64,
    node_timeout: Duration,
) -> Result<(), OrderError> {
    let round = ask(masters, key, order, true, node_timeout).await;
    judge(masters, &round, order)
}

/// One ORDER round: decided once a majority answered; a raise is also sent to every master
/// whose answer is not waited for.
async fn ask(masters: &Masters, key: &str, order: u64, raise: bool, timeout: Duration) -> Round {
    let names = keys::Names::of(key);
    let layout = names.keys(key);
    let args = args::Order {
        order: order.to_string(),
        raise,
        ttl_ms: LONGEST_TTL_MS.to_string(),
    };
    let until = if raise {
        Until::DecidedAndSent
    } else {
        Until::Decided
    };
    let start = Instant::now();
    let round = masters
        .round(start + timeout, until, answered, |node| {
            ORDER.run(node, &layout, &args)
        })
        .await;
    let what = if raise { "order raise" } else { "order read" };
    masters.trace(what, key, &round, start.elapsed());
    round
}

/// Outdated when any master that answered holds more than `order`; unreachable when fewer
/// than a majority answered.
fn judge(masters: &Masters, round: &Round, order: u64) -> Result<(), OrderError> {
    if round.tally.yes() < masters.quorum() {
        return Err(OrderError::Unreachable {
            failures: failures(masters, round),
        });
    }
    let highest = round
        .answers
        .iter()
        .flatten()
        .filter_map(|answer| register(answer).ok().flatten())
        .max();
    match highest {
        Some(ran) if ran > order => Err(OrderError::Outdated { ran }),
        _ => Ok(()),
    }
}

/// The masters that did not answer with a register, and why: what failed, and what answered
/// with something that is no register (the script refuses those, so this says what a master
/// that is not running it would have sent, rather than nothing).
fn failures(masters: &Masters, round: &Round) -> Vec<MasterFailure> {
    let mut failures = round.failures(masters);
    for (answer, node) in round.answers.iter().zip(&masters.nodes) {
        if let Some(Ok(reply)) = answer
            && register(&Ok(reply.clone())).is_err()
        {
            failures.push(MasterFailure {
                master: node.master.to_string(),
                error: NodeError::BadReply(format!("{reply} is no order register")),
            });
        }
    }
    failures
}

/// A register read is an answer; anything else (a failure, a register that is no number:
/// the script's error) counts as a master that did not answer.
fn answered(answer: &Result<Reply, NodeError>) -> Vote {
    match register(answer) {
        Ok(_) => Vote::Yes,
        Err(()) => Vote::Error,
    }
}
