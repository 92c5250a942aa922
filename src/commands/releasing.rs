//! Releasing the lock at the end of a command, and saying what the release found.

use std::time::Duration;

use crate::lock::{Ending, Lock, Redlock, Released};

use super::wording::explain;

/// Says what a release found, when it is worth saying; returns it (a `run` whose lock was
/// revoked learns it here if its command ended before a renewal could tell).
pub fn report_release(client: &Redlock, lock: &Lock) -> Released {
    report_end(client, lock, &Ending::Released)
}

/// [`report_release`] of a turn that ended as `ending` says (the key's history records it).
pub fn report_end(client: &Redlock, lock: &Lock, ending: &Ending) -> Released {
    let released = client.release_after(lock, ending);
    say_release(lock.key(), lock.timing().ttl, &released);
    released
}

/// Says what the release of lock `key` (of `ttl`) found, when it is worth saying.
pub fn say_release(key: &str, ttl: Duration, released: &Released) {
    match released {
        Released::Yes => log::info!(
            event = "released", key = key, outcome = "released";
            "released {key:?}"
        ),
        // The command is dead, and the revoked holder says so: the key opens (see `revoke`).
        Released::Acknowledged { .. } => log::info!(
            event = "released", key = key, outcome = "revoked";
            "released {key:?}: its revocation by `redlock release --force` is acknowledged"
        ),
        Released::NotHeld => log::info!(
            "lock {key:?} was no longer held at release (it had expired or been taken over)"
        ),
        Released::Unknown { failures } => log::error!(
            "could not confirm the release of lock {key:?} on a majority of masters ({}); where \
             it is still held, it expires by itself within {}",
            explain(failures),
            humantime::format_duration(ttl)
        ),
    }
}

/// `--hold-min`: instead of deleting the lock, lets it expire `remaining` from now, so that the
/// same job started elsewhere meanwhile still finds it taken. Returns the release, where it
/// came to one.
pub fn hold_until(
    client: &Redlock,
    lock: &Lock,
    remaining: Duration,
    ending: &Ending,
) -> Option<Released> {
    let held = client.expire_in(lock, remaining);
    if held {
        log::info!(
            "keeping lock {:?} for {} more (--hold-min)",
            lock.key(),
            humantime::format_duration(Duration::from_millis(remaining.as_millis() as u64))
        );
        None
    } else {
        // The lock is gone already (revoked, say), or its masters are unreachable: nothing
        // left to keep.
        Some(report_end(client, lock, ending))
    }
}
