//! What every kind's attempt as a newcomer shares: why an attempt failed ([`Refused`]) and the
//! backoff between attempts. Below the kinds and the queue, which all retry the same way.

use std::time::Duration;

use crate::lock::quorum::outcome::{AttemptFailure, Conflict};

/// Why one attempt as a newcomer (at the lock or at a slot) did not take it.
pub(in crate::lock) enum Refused {
    /// Worth another attempt while the wait lasts; with the ticket for the queue, when enough
    /// masters drew one.
    Failed(AttemptFailure, Option<u64>),
    /// Never worth waiting for.
    Conflict(Conflict),
}

/// Backoff between attempts: exponential from 10 ms to 250 ms, each delay drawn uniformly from
/// its upper half so that contenders that failed together do not retry together.
pub(in crate::lock) fn retry_delay(attempt: u32) -> Duration {
    let ceiling_ms = 10u64.saturating_mul(1 << attempt.min(5)).min(250);
    Duration::from_millis(fastrand::u64(ceiling_ms / 2..=ceiling_ms))
}
