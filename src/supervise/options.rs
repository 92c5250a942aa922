//! The timing of one supervised run: renewal, the stop on lock loss, the watchdog.

use std::time::Duration;

/// Timing of renewal and of the stop on lock loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Extend the lock this often (TTL/3).
    pub renew_every: Duration,
    /// Time between SIGTERM and SIGKILL when the lock is lost.
    pub kill_after: Duration,
    /// How long before the validity ends the child must be dead: room for the signal to be
    /// delivered and the processes to die (TTL/25, between 5 ms and 1 s).
    pub stop_margin: Duration,
    /// Stop the child once it has run this long (`--max-duration`).
    pub max_duration: Option<Duration>,
    /// Ping systemd's watchdog this often while the lock is kept (half of `WATCHDOG_USEC`).
    pub watchdog_every: Option<Duration>,
}

impl Options {
    /// The default grace between SIGTERM and SIGKILL: 5 s, or TTL/4 for short TTLs, so that
    /// the whole stop still fits inside the validity.
    pub fn default_kill_after(ttl: Duration) -> Duration {
        (ttl / 4).min(Duration::from_secs(5))
    }

    /// The longest `--kill-after` a TTL allows: the stop must start after the first renewal
    /// had a chance, and end inside the validity.
    pub fn max_kill_after(ttl: Duration) -> Duration {
        ttl / 2
    }

    pub fn new(ttl: Duration, kill_after: Duration) -> Options {
        Options {
            renew_every: ttl / 3,
            kill_after,
            // Generous: it only matters once the lock is being lost, and it must absorb a late
            // wake-up of this thread on a loaded machine.
            stop_margin: (ttl / 25).clamp(Duration::from_millis(5), Duration::from_secs(1)),
            max_duration: None,
            watchdog_every: None,
        }
    }

    pub fn with_max_duration(self, max_duration: Option<Duration>) -> Options {
        Options {
            max_duration,
            ..self
        }
    }
}
