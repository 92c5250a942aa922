//! A waiter in the fair queue (see `queue`): who it is, and how long its place and the
//! queue's keys last. Below the queue and its turns, which both read it.

use std::time::{Duration, Instant};

use super::held::Timing;
use super::seam::{Line, Seam};
use crate::lock::scripts::history::History;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::Names;

/// How often a waiter that is not first renews its place.
pub(in crate::lock) const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a place lasts without a heartbeat: three heartbeats, plus room for two slow
/// requests.
pub(in crate::lock) fn lease(timing: &Timing) -> Duration {
    3 * HEARTBEAT + 2 * timing.node_timeout
}

/// How long the queue's keys live after the last write: longer than any place in them.
pub(in crate::lock) fn keep(timing: &Timing) -> Duration {
    2 * lease(timing)
}

/// A newcomer that was refused and drew a ticket.
pub(in crate::lock) struct Waiter<'a> {
    pub key: &'a str,
    pub names: &'a Names,
    pub token: String,
    pub ticket: u64,
    /// When the ticket round ended: the place is counted from then (see `take`).
    pub since: Instant,
    pub timing: Timing,
    pub holder: Option<&'a Holder>,
    /// What it waits for: the lock, a slot of a semaphore or a reader's share, as its seam.
    pub seam: &'a dyn Seam,
    /// The line's policy it asked for (see `seam::Line`).
    pub line: Line,
    /// Where its turn is recorded (see `scripts::history`).
    pub history: History,
}
