//! What the operations report: why an attempt failed, what an extension or a release found,
//! and what each master has of a lock. Every failure names its master, password redacted.

use std::time::Duration;

use crate::lock::scripts::holder::Holder;
pub use crate::lock::scripts::replies::{Conflict, Mark, MasterState, QueuedWaiter};
use crate::lock::scripts::revoke::Revocation;

use crate::lock::wire::cause::{Cause, cause};
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

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
        /// `release --force` revoked it, on some master that refused: it stays closed until
        /// the revoked holder stops and says so, or its TTL runs out (`holder` may then be
        /// whoever forced: the record K has there).
        revoked: bool,
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

/// Why `acquire` gave up.
#[derive(Clone, Debug, PartialEq)]
pub enum AcquireError {
    /// The last attempt failed and the wait budget is spent.
    Failed(AttemptFailure),
    /// The wait was cancelled (a signal).
    Cancelled,
    /// The key is in use otherwise (see [`Conflict`]); whatever this attempt took was released.
    Conflict(Conflict),
    /// A newer waiter evicted this one from the line (`--supersede`); its place was given up
    /// and nothing is held. Boxed: a mark carries a whole record.
    Superseded(Box<Superseded>),
    /// A superseding waiter (`--supersede`) found its place in line gone on more masters than
    /// it can spare, and no eviction mark naming it: it left the line, and nothing is held.
    /// Not superseded as far as anyone knows (the place lapsed while the waiter was stopped or
    /// cut off, or masters restarted without it; or a mark that named it has expired), so not
    /// reported as such: a run that ends so is worth retrying.
    LostPlace,
}

/// Who superseded a waiter (`--supersede`), as far as it is known.
#[derive(Clone, Debug, PartialEq)]
pub struct Superseded {
    /// The evictor's mark.
    pub mark: Mark,
    /// This waiter's own ticket.
    pub ticket: u64,
}

impl Superseded {
    /// Whether the waiter that superseded this one was in line before it came: then it was
    /// refused on arrival (with `--order`: a higher order was already waiting), not evicted.
    pub fn was_there_first(&self) -> bool {
        self.mark.ticket.is_some_and(|theirs| theirs < self.ticket)
    }
}

/// What an extension round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtendError {
    /// A majority no longer has our token: the lock is gone for good.
    Gone,
    /// No majority confirmed in time; the lock may still be ours. Worth retrying while the
    /// validity lasts.
    Unconfirmed { failures: Vec<MasterFailure> },
    /// A forced release put its revocation in our token's place (see `revoke`): the lock is
    /// gone, taken away by whoever this names. Boxed: the record is large beside the rest.
    Revoked(Box<Revocation>),
}

/// What a release round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// A majority deleted our key.
    Yes,
    /// Released as [`Released::Yes`], but a forced release had revoked it: on `on` of the
    /// masters that answered, the release acknowledged the revocation (it said the holder
    /// stopped, which opens what the revocation kept closed for it), and `by` is who revoked
    /// it, where the record says (see `revoke`). `taken`: the force had taken the hold away,
    /// since fewer masters than the kind's quorum still had the token to delete (a renewal
    /// would have been refused as revoked); false when the force reached too few masters
    /// for that, and the holder held on a quorum to the end, as its renewals would have.
    Acknowledged {
        by: Option<Box<Revocation>>,
        on: usize,
        taken: bool,
    },
    /// A majority did not have our token: the lock had expired or was someone else's.
    NotHeld,
    /// Too few masters answered to tell.
    Unknown { failures: Vec<MasterFailure> },
}

/// What one master has of a lock.
#[derive(Clone, Debug)]
pub struct Inspection {
    pub master: Master,
    pub state: MasterState,
    /// The fencing counter: `None` where no `--fence` grant was ever made.
    pub fence: Option<u64>,
    /// What is wrong with the fencing counter there, where it is not a number (a key of
    /// another type, or text): a `--fence` grant fails there; the lock is not affected.
    pub fence_problem: Option<String>,
    /// The first waiters of the fair queue there, in order.
    pub queue: Vec<QueuedWaiter>,
    /// How many wait there in all.
    pub waiting: usize,
    /// The highest order that took the lock there (`--order`), where one did.
    pub order: Option<u64>,
    /// The line's policy there (`--supersede`: `supersede`), where one is stored.
    pub policy: Option<String>,
    /// The revocation record, where `release --force` revoked the lock there (K holds the
    /// marker).
    pub revocation: Option<Revocation>,
}
