//! Fencing tokens: a number per lock name that only goes up, handed to each holder.
//!
//! A holder that is paused past its validity (GC, swap, SIGSTOP) can still act after someone
//! else took the lock; no lock service alone can prevent that. A resource that remembers the
//! highest token it has seen and refuses lower ones can. The number must therefore be strictly
//! greater for every grant than for any earlier grant, even across holders whose lock overlapped
//! in time because of such a pause.
//!
//! The scheme (antirez's NEXTID, sound when masters keep their data):
//! 1. Read the counter from every master that answers within one node timeout; a majority at
//!    least must answer. Take the maximum M. (Reading all reachable masters, not just a
//!    majority, only makes it harder to miss the latest value.)
//! 2. Propose M+1 to every master with an atomic set-if-greater. The token is granted when a
//!    majority accepted it. Otherwise someone proposed at the same time: read again.
//!
//! Why it holds: a grant of t left t (or more) on a majority; any later read of a majority
//! overlaps it, so it sees at least t and proposes more. Two proposals of the same number
//! cannot both win a majority, because majorities overlap and set-if-greater accepts a number
//! once. Per-node INCR with a maximum over a majority would not be sound: two holders could
//! each win a majority of increments and receive the same number.
//!
//! Upgrading from an earlier build: the counter moved to a new key (see `keys`). The read also
//! takes the counter at its old name into the maximum, so the first grant after the upgrade goes
//! above every grant made before it; from then on the new key alone carries the order. The old key
//! is only read, never written. (Hosts still running an older redlock read only the old key:
//! upgrade every host that uses `--fence` on a key together.)
//!
//! Only a lock gets tokens: a semaphore slot (`--limit`) is one of up to L held at once, and
//! a resource that refuses every token below the highest it has seen would refuse all holders
//! but the latest, live or not. A slot is refused before anything is read (its seam says so:
//! `semaphore`, and so does a reader's), so the
//! library refuses what the command line does (`--fence --limit` is a usage error there).
//!
//! What is left when masters lose data (no persistence): a master that restarts empty counts
//! as 0. The next token is still greater than the last one as long as one master that kept the
//! latest value answers the read. If a majority lost its data and every master that kept the
//! latest value is unreachable at that moment, numbers can repeat or go back. `doctor` warns
//! about masters without `appendfsync always`.
//!
//! # Assumes
//! - **Masters keep the counter for ever.** It has no TTL, so a delayed restart does not help
//!   it: only persistence (`appendonly yes`, `appendfsync always`) keeps it across a restart,
//!   and only a policy that never evicts it (`noeviction` or `volatile-*`: a key without TTL is
//!   never a `volatile-*` candidate) keeps it in memory. `doctor`: *persistence* (warning),
//!   *eviction* (error for `allkeys-*`).
//! - **The lock's assumptions** (see `held`), for the grant only: a token is handed out only
//!   while the lock is valid, and that validity assumes masters that keep keys, clocks that do
//!   not jump (`doctor`: *clock*) and rates that drift less than the drift factor. The order of
//!   the numbers itself reads no clock.

use std::time::Instant;

use super::held::Lock;
use crate::lock::quorum::outcome::MasterFailure;
use crate::lock::quorum::round::{Masters, Round, Until};
use crate::lock::quorum::tally::{Decision, Loss, Vote};
use crate::lock::scripts::FENCE_PROPOSE;
use crate::lock::scripts::calls::args::Proposal;
use crate::lock::scripts::keys;
use crate::lock::scripts::lock::{binary_vote, counter};
use crate::lock::wire::cause::Cause;
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// Why no fencing token was granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenceError {
    /// Too few masters answered.
    Unreachable { failures: Vec<MasterFailure> },
    /// The lock's validity ran out first.
    Expired,
    /// Proposals kept colliding (only possible when the lock is not actually exclusive).
    Contended,
    /// A master holds something that is not a number under the counter's key (`key`: its
    /// current or its earlier name).
    Corrupt { master: String, key: String },
    /// The lock is a slot of a semaphore of this limit: up to `limit` holders at once, so no
    /// order of grants could tell a resource which of them is stale. Nothing was read or
    /// written.
    NotExclusive { limit: u32 },
    /// The lock is a reader's share (`--shared`): readers hold it together, and a fencing
    /// token needs the lock alone. Nothing was read or written.
    Shared,
}

/// How many read-and-propose attempts before giving up.
const ATTEMPTS: usize = 5;

/// Obtains the next fencing token for `lock`, while it is held. Only for the lock: the client
/// asks the lock's kind first (`Seam::fence`), and refuses a slot or a share before this.
pub(in crate::lock) async fn grant(masters: &Masters, lock: &Lock) -> Result<u64, FenceError> {
    let names = keys::Names::of(lock.key());
    let layout = names.keys(lock.key());
    let key = &names.fence;
    let legacy = keys::legacy_fence(lock.key());
    let timeout = lock.timing().node_timeout;
    for _ in 0..ATTEMPTS {
        if lock.validity().is_zero() {
            return Err(FenceError::Expired);
        }
        let start = Instant::now();
        let read = masters
            .round(start + timeout, Until::AllAnswered, answered, |node| {
                read_counters(node, key, &legacy)
            })
            .await;
        masters.trace("fence read", lock.key(), &read, start.elapsed());
        let latest = latest(masters, &read, [key, &legacy])?;
        let proposal = latest + 1;
        let args = Proposal {
            proposed: proposal.to_string(),
        };
        let start = Instant::now();
        let round = masters
            .round(
                start + timeout,
                Until::DecidedAndSent,
                binary_vote,
                |node| FENCE_PROPOSE.run(node, &layout, &args),
            )
            .await;
        masters.trace("fence propose", lock.key(), &round, start.elapsed());
        match round.tally.decision() {
            Decision::Won if !lock.validity().is_zero() => return Ok(proposal),
            Decision::Won => return Err(FenceError::Expired),
            Decision::Lost(Loss::Refused) => continue,
            Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                return Err(FenceError::Unreachable {
                    failures: round.failures(masters),
                });
            }
        }
    }
    Err(FenceError::Contended)
}

/// The highest counter a majority read, or why there is none.
fn latest(masters: &Masters, read: &Round, names: [&str; 2]) -> Result<u64, FenceError> {
    if read.tally.yes() < masters.quorum() {
        return Err(FenceError::Unreachable {
            failures: read.failures(masters),
        });
    }
    let mut latest = 0;
    for (answer, node) in read.answers.iter().zip(&masters.nodes) {
        if let Some(Ok(Reply::Array(values))) = answer {
            for (value, key) in values.iter().zip(names) {
                let value = counter(value).ok_or_else(|| FenceError::Corrupt {
                    master: node.master.to_string(),
                    key: key.to_string(),
                })?;
                latest = latest.max(value);
            }
        }
    }
    Ok(latest)
}

/// A master's counter under its name and its earlier name, as a two-element array. One after the
/// other: the two keys are in different cluster slots, so one script could not read both.
async fn read_counters(node: &Endpoint, key: &str, legacy: &str) -> Result<Reply, NodeError> {
    let current = read_counter(node, key).await?;
    let old = read_counter(node, legacy).await?;
    Ok(Reply::Array(vec![current, old]))
}

/// A master's counter under `key`. A key of another type there (`WRONGTYPE`) is an answer, a
/// value that is no number ([`FenceError::Corrupt`], naming that key), not a failing master:
/// the lock key is fine, the counter is not.
async fn read_counter(node: &Endpoint, key: &str) -> Result<Reply, NodeError> {
    match node.command(key, &[b"GET", key.as_bytes()]).await {
        Err(error) if error.cause() == Cause::NotALock => Ok(Reply::Error(error.to_string())),
        answer => answer,
    }
}

/// Every answer counts for a read; only failures do not.
fn answered(answer: &Result<Reply, NodeError>) -> Vote {
    if answer.is_ok() {
        Vote::Yes
    } else {
        Vote::Error
    }
}
