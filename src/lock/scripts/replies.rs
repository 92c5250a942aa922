//! What one master says, typed: the vocabulary the scripts decode their replies into, and the
//! layers above count and report. A reply says nothing of the other masters; judging them
//! together is the quorum's (`quorum`).

use std::time::Duration;

use super::holder::Holder;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// One master's answer to one request, as far as the quorum is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    /// The master did what was asked: set the key, extended it, or deleted it.
    Yes,
    /// The master answered but refused: the key is someone else's, or no longer ours.
    No,
    /// The master answered with an error, or the connection to it failed.
    Error,
}

/// A key used in a way that does not match how its holders use it: never waited for, since
/// waiting would not make it right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// A semaphore slot was asked for, but the key is in use as a lock.
    IsLock,
    /// A semaphore slot was asked for, but readers hold the key as a shared lock (`--shared`).
    IsShared,
    /// The lock was asked for, but the key is in use as a semaphore (of this limit, if known).
    IsSemaphore { limit: Option<String> },
    /// A slot of a semaphore of `ours` was asked for, but its holders agreed on `theirs`.
    Limit { ours: u32, theirs: String },
}

/// The state of a lock key on one master.
#[derive(Clone, Debug, PartialEq)]
pub enum MasterState {
    Free,
    Held {
        token: String,
        /// Remaining time to live; `None` if the key has no TTL (set by something else).
        ttl: Option<Duration>,
        holder: Option<Holder>,
    },
    Unreachable(NodeError),
}

/// One waiter as a master shows it to `status` (see INSPECT).
#[derive(Clone, Debug, PartialEq)]
pub struct QueuedWaiter {
    pub token: String,
    pub ticket: u64,
    /// How long its place lasts without a heartbeat (`None`: lapsed, awaiting removal).
    pub lapses_in: Option<Duration>,
    /// Who it is, with `since_ms` = when it started waiting.
    pub holder: Option<Holder>,
}

/// Decodes INSPECT's queue part: {token, ticket, lease, record}* and the master's time.
pub(in crate::lock) fn queued_waiters(
    flat: Option<&Reply>,
    now_ms: Option<u64>,
) -> Vec<QueuedWaiter> {
    let Some(Reply::Array(flat)) = flat else {
        return Vec::new();
    };
    let text = |reply: &Reply| {
        reply
            .bulk()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    flat.chunks(4)
        .filter_map(|w| {
            let token = text(w.first()?)?;
            let ticket = text(w.get(1)?)?.parse::<f64>().ok()? as u64;
            let lease = w.get(2).and_then(text).and_then(|l| l.parse::<f64>().ok());
            let lapses_in = match (lease, now_ms) {
                (Some(lease), Some(now)) if lease as u64 > now => {
                    Some(Duration::from_millis(lease as u64 - now))
                }
                _ => None,
            };
            let holder = w.get(3).and_then(Reply::bulk).and_then(Holder::from_json);
            Some(QueuedWaiter {
                token,
                ticket,
                lapses_in,
                holder,
            })
        })
        .collect()
}
