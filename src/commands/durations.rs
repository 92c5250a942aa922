//! How durations are shown: whole milliseconds in JSON, a rounded TTL in text. One place, so
//! that `status`, its semaphore view and `list` say a time the same way.

use std::time::Duration;

/// Milliseconds, for JSON (saturating: no duration redlock handles comes near the limit).
pub(super) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A TTL for display, in one style: whole seconds from a second up (`28s`, `2m 5s`),
/// milliseconds below (`987ms`).
pub(super) fn round(d: Duration) -> humantime::FormattedDuration {
    let rounded = if d >= Duration::from_secs(1) {
        Duration::from_secs(d.as_secs())
    } else {
        Duration::from_millis(ms(d))
    };
    humantime::format_duration(rounded)
}
