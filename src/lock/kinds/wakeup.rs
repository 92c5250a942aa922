//! Why a waiter's turn starts, and which timer a failed turn sets (see `queue`, "Waiting").
//!
//! Fault-free, every turn after the first is started by a notice: each change that lets a
//! waiter take the lock (or a slot) is announced by the master where it happens (see
//! `queue_lua::FUNCTIONS`). The timers are the fallback for what no notice covers, and
//! each turn says which of them started it, so a lost wake-up shows (`-v`, and the metrics'
//! `redlock_wakeups_total{cause}`):
//! - [`Wakeup::Heartbeat`] is the timer of a waiter that expects a notice: one that is not
//!   first keeps its place, one that is first waits for a holder's release (capped by the
//!   holder's TTL). A heartbeat that finds the lock free is a lost notice.
//! - [`Wakeup::Backoff`] is the short timer of a waiter that no notice will reach: the lock is
//!   held by a client outside the queue (no holder record: it announces nothing), or the turn
//!   failed for want of masters (unreachable, too slow).

use std::fmt;
use std::time::Duration;

use crate::lock::quorum::outcome::AttemptFailure;

/// What started a waiter's turn in the fair queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wakeup {
    /// The first turn, which placed the waiter in the queue.
    Joined,
    /// A master announced a change that lets this waiter take the lock (or a slot).
    Notice,
    /// The fallback timer of a waiter that expected a notice.
    Heartbeat,
    /// The short retry of a waiter that no notice will reach.
    Backoff,
}

impl Wakeup {
    /// Every cause, in the order the metrics file lists them.
    pub const ALL: [Wakeup; 4] = [
        Wakeup::Joined,
        Wakeup::Notice,
        Wakeup::Heartbeat,
        Wakeup::Backoff,
    ];

    /// The cause as logs and metrics name it.
    pub fn label(self) -> &'static str {
        match self {
            Wakeup::Joined => "joined",
            Wakeup::Notice => "notice",
            Wakeup::Heartbeat => "heartbeat",
            Wakeup::Backoff => "backoff",
        }
    }
}

impl fmt::Display for Wakeup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What a failed turn found, as far as the next timer goes.
pub(in crate::lock) struct Found<'a> {
    pub failure: &'a AttemptFailure,
    /// Some master named the waiter first (for a slot: in a position the slots leave room for).
    pub first: bool,
    /// Some master refused because the lock is held by a token without a holder record: a
    /// client outside the queue.
    pub outsider: bool,
}

/// The timer after a failed turn, and the cause it gives the next turn. `keep_alive`: the
/// (jittered) heartbeat of a waiter that is not first; `heartbeat`: the longest a first waiter
/// waits for a holder's release; `backoff`: the current retry delay.
pub(in crate::lock) fn timer(
    found: &Found<'_>,
    keep_alive: Duration,
    heartbeat: Duration,
    backoff: Duration,
) -> (Duration, Wakeup) {
    if !found.first {
        return (keep_alive, Wakeup::Heartbeat);
    }
    if found.outsider {
        return (backoff, Wakeup::Backoff);
    }
    // Held until its TTL runs out, unless released first, and then a notice comes.
    let held_for = match found.failure {
        AttemptFailure::Held { expires_in, .. } => *expires_in,
        AttemptFailure::Full { frees_in, .. } => *frees_in,
        _ => None,
    };
    match held_for.map(|ttl| ttl.min(heartbeat)) {
        Some(wait) if wait > backoff => (wait, Wakeup::Heartbeat),
        _ => (backoff, Wakeup::Backoff),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP: Duration = Duration::from_millis(900);
    const BEAT: Duration = Duration::from_secs(1);
    const BACK: Duration = Duration::from_millis(20);

    fn held(expires_in: Option<Duration>) -> AttemptFailure {
        AttemptFailure::Held {
            holder: None,
            expires_in,
            free: false,
            shared: false,
            revoked: false,
            waiters: 1,
            place: Some(1),
        }
    }

    fn timer_for(failure: &AttemptFailure, first: bool, outsider: bool) -> (Duration, Wakeup) {
        let found = Found {
            failure,
            first,
            outsider,
        };
        timer(&found, KEEP, BEAT, BACK)
    }

    #[test]
    fn a_waiter_that_is_not_first_keeps_its_place_and_expects_a_notice() {
        let failure = held(Some(Duration::from_secs(5)));
        assert_eq!(timer_for(&failure, false, false), (KEEP, Wakeup::Heartbeat));
        // Also behind a client outside the queue: the waiters ahead poll, not this one.
        assert_eq!(timer_for(&failure, false, true), (KEEP, Wakeup::Heartbeat));
    }

    #[test]
    fn the_first_waiter_waits_for_the_release_at_most_a_heartbeat() {
        let long = held(Some(Duration::from_secs(5)));
        assert_eq!(timer_for(&long, true, false), (BEAT, Wakeup::Heartbeat));
        let short = held(Some(Duration::from_millis(300)));
        let (wait, cause) = timer_for(&short, true, false);
        assert_eq!(
            (wait, cause),
            (Duration::from_millis(300), Wakeup::Heartbeat)
        );
        // About to expire: that is polling, not waiting for a notice.
        let expiring = held(Some(Duration::from_millis(5)));
        assert_eq!(timer_for(&expiring, true, false), (BACK, Wakeup::Backoff));
        let full = AttemptFailure::Full {
            limit: 2,
            holders: Vec::new(),
            frees_in: Some(Duration::from_secs(9)),
            waiters: 3,
            place: Some(1),
        };
        assert_eq!(timer_for(&full, true, false), (BEAT, Wakeup::Heartbeat));
    }

    #[test]
    fn nothing_announces_a_client_outside_the_queue_or_a_master_coming_back() {
        let held = held(Some(Duration::from_secs(5)));
        assert_eq!(timer_for(&held, true, true), (BACK, Wakeup::Backoff));
        let unreachable = AttemptFailure::Unreachable {
            needed: 3,
            failures: Vec::new(),
        };
        assert_eq!(
            timer_for(&unreachable, true, false),
            (BACK, Wakeup::Backoff)
        );
    }

    #[test]
    fn labels_are_the_metric_causes() {
        let labels: Vec<&str> = Wakeup::ALL.iter().map(|w| w.label()).collect();
        assert_eq!(labels, ["joined", "notice", "heartbeat", "backoff"]);
        assert_eq!(Wakeup::Notice.to_string(), "notice");
    }
}
