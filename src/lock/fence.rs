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
//! What is left when masters lose data (no persistence): a master that restarts empty counts
//! as 0. The next token is still greater than the last one as long as one master that kept the
//! latest value answers the read. If a majority lost its data and every master that kept the
//! latest value is unreachable at that moment, numbers can repeat or go back. `doctor` warns
//! about masters without `appendfsync always`.

use std::time::Instant;

use redis::Value;

use super::Lock;
use super::client::{MasterFailure, Redlock, Round, Until, binary_vote};
use super::node::NodeError;
use super::quorum::{Decision, Loss, Vote};
use super::scripts::{FENCE_PROPOSE, fence_key};

/// Why no fencing token was granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenceError {
    /// Too few masters answered.
    Unreachable { failures: Vec<MasterFailure> },
    /// The lock's validity ran out first.
    Expired,
    /// Proposals kept colliding (only possible when the lock is not actually exclusive).
    Contended,
    /// A master holds something that is not a number under the counter's key.
    Corrupt { master: String },
}

/// How many read-and-propose attempts before giving up.
const ATTEMPTS: usize = 5;

impl Redlock {
    /// Obtains the next fencing token for `lock`, while it is held.
    pub fn fence(&self, lock: &Lock) -> Result<u64, FenceError> {
        let key = fence_key(lock.key());
        let timeout = lock.timing().node_timeout;
        self.runtime.block_on(async {
            for _ in 0..ATTEMPTS {
                if lock.validity().is_zero() {
                    return Err(FenceError::Expired);
                }
                let start = Instant::now();
                let read = self
                    .round(start + timeout, Until::AllAnswered, answered, |node| {
                        node.command(redis::Cmd::get(&key))
                    })
                    .await;
                self.trace("fence read", lock.key(), &read, start.elapsed());
                let latest = self.latest(&read)?;
                let proposal = latest + 1;
                let proposal_text = proposal.to_string();
                let args: [&[u8]; 1] = [proposal_text.as_bytes()];
                let keys = [key.as_str()];
                let start = Instant::now();
                let round = self
                    .round(
                        start + timeout,
                        Until::DecidedAndSent,
                        binary_vote,
                        |node| node.eval(&FENCE_PROPOSE, &keys, &args),
                    )
                    .await;
                self.trace("fence propose", lock.key(), &round, start.elapsed());
                match round.tally.decision() {
                    Decision::Won if lock.validity() > std::time::Duration::ZERO => {
                        return Ok(proposal);
                    }
                    Decision::Won => return Err(FenceError::Expired),
                    Decision::Lost(Loss::Refused) => continue,
                    Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                        return Err(FenceError::Unreachable {
                            failures: round.failures(&self.nodes),
                        });
                    }
                }
            }
            Err(FenceError::Contended)
        })
    }

    /// The highest counter a majority read, or why there is none.
    fn latest(&self, read: &Round) -> Result<u64, FenceError> {
        if read.tally.yes() < self.quorum() {
            return Err(FenceError::Unreachable {
                failures: read.failures(&self.nodes),
            });
        }
        let mut latest = 0;
        for (answer, node) in read.answers.iter().zip(&self.nodes) {
            if let Some(Ok(value)) = answer {
                let value = counter(value).ok_or_else(|| FenceError::Corrupt {
                    master: node.master.to_string(),
                })?;
                latest = latest.max(value);
            }
        }
        Ok(latest)
    }
}

/// Every answer counts for a read; only failures do not.
fn answered(answer: &Result<Value, NodeError>) -> Vote {
    if answer.is_ok() {
        Vote::Yes
    } else {
        Vote::Error
    }
}

/// A counter as stored: missing is 0.
pub(super) fn counter(value: &Value) -> Option<u64> {
    match value {
        Value::Nil => Some(0),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Value::Int(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_parse_and_missing_is_zero() {
        assert_eq!(counter(&Value::Nil), Some(0));
        assert_eq!(counter(&Value::BulkString(b"42".to_vec())), Some(42));
        assert_eq!(counter(&Value::BulkString(b"x".to_vec())), None);
    }
}
