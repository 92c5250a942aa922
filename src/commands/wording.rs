//! How failures read: one line that says what went wrong and what to do.

use std::time::Duration;

use crate::config::LockSettings;
use crate::exit::{self, Failure};
use crate::lock::{AttemptFailure, FenceError, MasterFailure};

/// What to check when masters fail: the cause is in each master's error (refused, timed out,
/// wrong password, a TLS port spoken to in plain text).
pub const UNREACHABLE_ADVICE: &str =
    "check that they run and are reachable, and that the server URLs and credentials are right";

pub fn list(failures: &[MasterFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn whole_seconds(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_secs(d.as_secs().max(1)))
}

pub fn describe_failure(
    key: &str,
    failure: &AttemptFailure,
    settings: &LockSettings,
    quorum: usize,
    quiet: bool,
) -> Failure {
    match failure {
        AttemptFailure::Held { holder, expires_in } => {
            let who = match holder {
                Some(holder) => format!("is held by {}", holder.describe()),
                None => "is held by another client".to_string(),
            };
            let expiry = expires_in
                .map(|t| format!(", expires in {} unless renewed", whole_seconds(t)))
                .unwrap_or_default();
            let advice = if settings.wait.is_zero() {
                "; use --wait DURATION to wait for it".to_string()
            } else {
                format!(
                    "; gave up after waiting {}",
                    humantime::format_duration(settings.wait)
                )
            };
            let message = if quiet {
                String::new()
            } else {
                format!("lock {key:?} {who}{expiry}{advice}")
            };
            Failure::new(settings.conflict_exit_code, message)
        }
        AttemptFailure::Unreachable { needed, failures } => Failure::new(
            exit::UNAVAILABLE,
            format!(
                "cannot reach a majority of masters for lock {key:?} (need {needed}): {}; {UNREACHABLE_ADVICE}",
                list(failures)
            ),
        ),
        AttemptFailure::TooSlow { elapsed } => Failure::new(
            exit::UNAVAILABLE,
            format!(
                "a majority granted lock {key:?} but only after {elapsed:.0?}, leaving no validity \
                 of the {} TTL (need {quorum} masters); raise --ttl or check the network",
                humantime::format_duration(settings.timing.ttl)
            ),
        ),
    }
}

/// Why no fencing token was granted (the lock has been released by then).
pub fn fence_failure(key: &str, error: FenceError) -> Failure {
    let (code, message) = match error {
        FenceError::Unreachable { failures } => (
            exit::UNAVAILABLE,
            format!(
                "took lock {key:?} but cannot reach a majority of masters for its fencing \
                 token: {}; the lock was released",
                list(&failures)
            ),
        ),
        FenceError::Expired => (
            exit::LOCK_LOST,
            format!("lock {key:?} expired before its fencing token was granted; raise --ttl"),
        ),
        FenceError::Contended => (
            exit::UNAVAILABLE,
            format!(
                "the fencing counter of lock {key:?} kept changing under us: is another \
                 client writing {}? The lock was released",
                crate::lock::keys::fence(key)
            ),
        ),
        FenceError::Corrupt {
            master,
            key: counter,
        } => (
            exit::UNAVAILABLE,
            format!(
                "{master} holds something that is not a number at {counter}; fix or delete \
                 that key. The lock was released"
            ),
        ),
    };
    Failure::new(code, message)
}
