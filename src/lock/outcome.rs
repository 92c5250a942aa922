//! What the operations report: why an attempt failed, what an extension or a release found,
//! and what each master has of a lock. Every failure names its master, password redacted.

use std::time::Duration;

use super::cause::{Cause, cause};
use super::holder::Holder;
use super::master::Master;
use super::node::NodeError;
use super::resp::Reply;

/// One master's failure, named for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterFailure {
    /// The master, password redacted.
    pub master: String,
    pub error: NodeError,
}

impl MasterFailure {
    /// Why it failed, in terms a user can act on.
    pub fn cause(&self) -> Cause {
        cause(&self.error)
    }
}

impl std::fmt::Display for MasterFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.master, self.error)
    }
}

/// Why one attempt to take the lock failed.
#[derive(Clone, Debug, PartialEq)]
pub enum AttemptFailure {
    /// Enough masters answered, and too many of them hold the key for someone else.
    Held {
        /// Who holds it, if the holder left a record (other Redlock clients do not). Boxed:
        /// failures travel by value, and most have no holder to name.
        holder: Option<Box<Holder>>,
        /// The longest time to live seen on a master that refused.
        expires_in: Option<Duration>,
        /// No master that refused has the lock taken: only the fair queue stands in the way
        /// (others were waiting first).
        free: bool,
        /// Readers hold it (`--shared`), on some master that refused.
        shared: bool,
        /// How many wait in the fair queue (the most any master counts), we ourselves
        /// included once we have a place (`place`).
        waiters: usize,
        /// Our place in the queue, 1 for the first, once queued.
        place: Option<usize>,
    },
    /// Too few masters answered for a majority.
    Unreachable {
        needed: usize,
        failures: Vec<MasterFailure>,
    },
    /// A majority said yes, but so slowly that no validity was left.
    TooSlow { elapsed: Duration },
    /// A semaphore (`--limit`): too many masters had all `limit` slots taken.
    Full {
        limit: u32,
        /// The holders named by the masters that refused (each once), with their record
        /// where they left one.
        holders: Vec<(String, Option<Holder>)>,
        /// The soonest a slot expires on a master that refused, unless renewed.
        frees_in: Option<Duration>,
        /// How many wait in the fair queue (the most any master counts), we ourselves
        /// included once we have a place (`place`).
        waiters: usize,
        /// Our place in the queue, 1 for the first, once queued.
        place: Option<usize>,
    },
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

/// Why `acquire` gave up.
#[derive(Clone, Debug, PartialEq)]
pub enum AcquireError {
    /// The last attempt failed and the wait budget is spent.
    Failed(AttemptFailure),
    /// The wait was cancelled (a signal).
    Cancelled,
    /// The key is in use otherwise (see [`Conflict`]); whatever this attempt took was released.
    Conflict(Conflict),
}

/// What an extension round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtendError {
    /// A majority no longer has our token: the lock is gone for good.
    Gone,
    /// No majority confirmed in time; the lock may still be ours. Worth retrying while the
    /// validity lasts.
    Unconfirmed { failures: Vec<MasterFailure> },
}

/// What a release round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// A majority deleted our key.
    Yes,
    /// A majority did not have our token: the lock had expired or was someone else's.
    NotHeld,
    /// Too few masters answered to tell.
    Unknown { failures: Vec<MasterFailure> },
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

/// What one master has of a lock.
#[derive(Clone, Debug)]
pub struct Inspection {
    pub master: Master,
    pub state: MasterState,
    /// The fencing counter: `None` where no `--fence` grant was ever made.
    pub fence: Option<u64>,
    /// The first waiters of the fair queue there, in order.
    pub queue: Vec<QueuedWaiter>,
    /// How many wait there in all.
    pub waiting: usize,
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
pub(super) fn queued_waiters(flat: Option<&Reply>, now_ms: Option<u64>) -> Vec<QueuedWaiter> {
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
