//! Keeping the lock alive while the child runs.
//!
//! A background thread extends the lock every TTL/3, measured from the start of the last
//! successful extension. An extension that no majority confirmed is retried quickly (transient
//! faults: a master restarting, a slow network) until the validity runs out; one that a majority
//! *refused* means the lock is gone, and is reported at once instead of being retried until the
//! TTL: the child is stopped as early as possible. The thread never deletes the lock.
//!
//! The supervisor does not rely on this thread to stop the child in time: it keeps its own
//! deadline from the last validity it was told about, so a stuck renewal cannot let the child
//! run past the validity.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Event;
use crate::lock::{ExtendError, Lock, MasterFailure, Redlock, Revocation};

/// What the renewal thread reports.
#[derive(Debug)]
pub enum Renewal {
    /// Extended; valid until this instant.
    Extended(Instant),
    /// This extension did not reach a majority; it will be retried while validity remains.
    Unconfirmed(Vec<MasterFailure>),
    /// The lock is gone: refused by a majority, or the validity ran out before any extension
    /// succeeded.
    Lost(LossReason),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LossReason {
    /// A majority of masters no longer hold our token (expired, evicted, or restarted empty).
    Refused,
    /// `release --force` revoked it: who, from which host, why (see `lock::Revocation`).
    Revoked(Box<Revocation>),
    /// No extension reached a majority before the validity ended.
    Expired,
    /// redlock itself did not run (stopped, or not scheduled) for `stalled`, past the moment
    /// the stop had to begin: what validity was left could no longer hold a renewal and a stop
    /// with the full `kill_after` grace. No master needs to have been asked.
    Stalled {
        stalled: Duration,
        kill_after: Duration,
    },
}

impl std::fmt::Display for LossReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LossReason::Refused => f.write_str("a majority of masters no longer hold it"),
            LossReason::Revoked(revocation) => write!(
                f,
                "it was revoked by `redlock release --force` ({})",
                revocation.describe()
            ),
            LossReason::Expired => f.write_str("no renewal reached a majority of masters in time"),
            LossReason::Stalled {
                stalled,
                kill_after,
            } => write!(
                f,
                "redlock did not run for {} (stopped, or starved of CPU), which left too little \
                 validity to renew the lock and still stop the command within --kill-after {}",
                humantime::format_duration(whole_ms(*stalled)),
                humantime::format_duration(whole_ms(*kill_after))
            ),
        }
    }
}

/// `d` in whole milliseconds, for messages.
fn whole_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The running renewal thread; stopping it is a flag and a wake-up, never a wait.
pub struct Renewer {
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Renewer {
    /// Renews `lock` now, then every `every` after each successful renewal.
    pub fn start(
        client: Arc<Redlock>,
        mut lock: Lock,
        every: Duration,
        events: Sender<Event>,
    ) -> std::io::Result<Renewer> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stop_flag = Arc::clone(&stop);
        let retry = retry_delay(lock.timing().ttl);
        std::thread::Builder::new()
            .name("redlock-renew".into())
            .spawn(move || {
                // Started when the first renewal is due (see the supervisor): renew at once.
                let mut next = Instant::now();
                while sleep_until(&stop_flag, next) {
                    let start = Instant::now();
                    let report = match client.extend(&mut lock) {
                        Ok(()) => {
                            next = start + every;
                            Renewal::Extended(lock.validity_end())
                        }
                        Err(ExtendError::Gone) => Renewal::Lost(LossReason::Refused),
                        Err(ExtendError::Revoked(revocation)) => {
                            Renewal::Lost(LossReason::Revoked(revocation))
                        }
                        Err(ExtendError::Unconfirmed { .. }) if lock.validity().is_zero() => {
                            Renewal::Lost(LossReason::Expired)
                        }
                        Err(ExtendError::Unconfirmed { failures }) => {
                            next = Instant::now() + retry;
                            Renewal::Unconfirmed(failures)
                        }
                    };
                    let lost = matches!(report, Renewal::Lost(_));
                    if events.send(Event::Renewal(report)).is_err() || lost {
                        return;
                    }
                }
            })?;
        Ok(Renewer { stop })
    }

    /// Asks the thread to stop; it does at its next wake-up (an extension already in flight
    /// finishes first, and is harmless: extending never re-creates a released key).
    pub fn stop(&self) {
        let (flag, wake) = &*self.stop;
        *flag.lock().expect("renewer flag poisoned") = true;
        wake.notify_all();
    }
}

/// Sleeps until `when` unless stopped first; returns false when stopped.
fn sleep_until(stop: &(Mutex<bool>, Condvar), when: Instant) -> bool {
    let (flag, wake) = stop;
    let mut stopped = flag.lock().expect("renewer flag poisoned");
    loop {
        if *stopped {
            return false;
        }
        let now = Instant::now();
        if now >= when {
            return true;
        }
        stopped = wake
            .wait_timeout(stopped, when - now)
            .expect("renewer flag poisoned")
            .0;
    }
}

/// How soon a failed extension is retried: TTL/30, between 10 ms and 1 s, so that several
/// retries fit before the child has to be stopped.
fn retry_delay(ttl: Duration) -> Duration {
    (ttl / 30).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
