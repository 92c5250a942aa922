//! One read of a key for the watch: the key read in one round and judged as `status` judges
//! it (`read::key::state`, which also tells a forced key as `Seen::Revoked`, whatever its
//! kind), with the first waiters in line, whose wake channels the watch listens on.

use std::time::{Duration, Instant};

use super::changes::Observation;
use crate::lock::quorum::round::Masters;
use crate::lock::read::key::read_key;

/// How many of the first waiters in line the watch listens for: each wake channel costs a
/// connection per master, and a release wakes the first (for readers, the readers at the head
/// together; for a semaphore, as many as slots came free). A hand-off to a waiter further back
/// is seen by the fallback read.
pub(super) const WAITERS_LISTENED: usize = 2;

/// What one read found: the observation, and the tokens of the first waiters in line (whose
/// wake channels announce the next hand-off).
pub(super) struct Read {
    pub observation: Observation,
    pub next_waiters: Vec<String>,
}

/// Reads `key` on every master, as `status` does (one round), waiting at most one node timeout.
pub(super) async fn observe(masters: &Masters, key: &str, node_timeout: Duration) -> Read {
    let at = Instant::now();
    let state = read_key(masters, key, node_timeout).await.state();
    let masters = state.reachability();
    let next_waiters = state
        .line
        .into_iter()
        .take(WAITERS_LISTENED)
        .map(|waiter| waiter.token)
        .collect();
    Read {
        observation: Observation {
            seen: state.seen,
            masters,
            at,
            done: Instant::now(),
        },
        next_waiters,
    }
}
