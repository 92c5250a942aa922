//! Taking a lock in turn, as `run` and `acquire` do ([`crate::lock::Redlock::take_in_turn`]):
//! the take and the steps around it, in the one order that makes `--order` and `--fence`
//! sound, written once for every caller:
//! 1. **The order check, before any wait** (`order`, step 1): a run whose order a higher one
//!    already outran fails at once ([`TakeError::Order`]) and never joins the line. Nothing
//!    is taken.
//! 2. **The take**, waited for as the request says (`take`). Its time ([`Taken::taken_at`]) is
//!    when the hold began: `--hold-min` and the time held count from there, not from after
//!    the steps below, which the lock's TTL already has to cover.
//! 3. **The order raised under the lock** (`order`, step 2): what decides whether the run is
//!    outdated, so it comes after the take and before anything runs under it.
//! 4. **A fencing token** (`fence`), last: no token is spent on a run that step 3 stops.
//!
//! A step after the take that fails gives the lock back before it returns, recording in the
//! key's history how the turn ended (outdated, or released), and says what the release found
//! ([`TakeError::Raise`], [`TakeError::Fence`]): no caller is left holding a lock that must
//! not be used. The caller hears of the wait as it goes ([`TakeObserver`]); what it says, and
//! the exit codes, are the caller's.

use std::time::Instant;

use super::fence::FenceError;
use super::held::Lock;
use super::order::OrderError;
use crate::lock::quorum::outcome::{AcquireError, AttemptFailure, Released};

/// What a take in turn does besides taking.
#[derive(Clone, Copy, Debug, Default)]
pub struct Steps {
    /// `--order`: checked before the wait, raised once taken.
    pub order: Option<u64>,
    /// `--fence`: a fencing token once taken (and raised).
    pub fence: bool,
}

/// A lock taken in turn: the lock, when it was taken (before steps 3 and 4), and its fencing
/// token when [`Steps::fence`] asked for one.
pub struct Taken {
    pub lock: Lock,
    pub taken_at: Instant,
    pub fence: Option<u64>,
}

/// Why a take in turn ended without a lock to use.
pub enum TakeError {
    /// Step 1: the order check failed (outdated, or too few masters answered). Nothing was
    /// taken.
    Order(OrderError),
    /// Step 2: the wait ended without the lock (the observer heard of it first).
    Acquire(AcquireError),
    /// Step 3: the order could not be raised; the lock was released, as `released` says.
    Raise {
        error: OrderError,
        released: Released,
    },
    /// Step 4: no fencing token; the lock was released, as `released` says.
    Fence {
        error: FenceError,
        released: Released,
    },
}

/// What a caller hears of a take in turn while it goes on, to show progress and count it.
pub trait TakeObserver {
    /// An attempt failed and will be retried: who is in the way (see
    /// [`crate::lock::Redlock::acquire`]).
    fn retry(&mut self, failure: &AttemptFailure);

    /// The wait is over, `waited` after it began (after step 1): taken or not, heard before
    /// the steps that follow a take.
    fn waited(&mut self, outcome: &Result<Lock, AcquireError>, waited: std::time::Duration);
}
