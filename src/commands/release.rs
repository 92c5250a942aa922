//! `redlock release`: give back a lock taken with `acquire`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cli::{GlobalArgs, MetricsArgs, TokenArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{Cause, Lock, Redlock, Released, Revocation};
use crate::metrics::{Observations, Outcome};
use crate::plural::counted;

use super::reentrance::NESTED_PREFIX;
use super::{bounded, open_client, wording};

pub fn release(
    global: &GlobalArgs,
    args: TokenArgs,
    metrics_args: MetricsArgs,
) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let settings = config::release_settings(&args, &context.defaults)?;
    let metrics_file = config::metrics_file(&metrics_args, &context.defaults)?;
    context.warn();
    let key = &settings.key;
    if settings.token.starts_with(NESTED_PREFIX) {
        log::info!("lock {key:?} was taken by an enclosing holder: left for it to release");
        return Ok(exit::OK);
    }
    let client = open_client(&context)?;
    let lock = Lock::from_token(key, &settings.token, settings.timing);
    let (what, needed) = wording::token_holds(key, &lock, &client);
    // How long it was held: from the holder record `acquire` wrote, read before it goes.
    let since = metrics_file
        .as_ref()
        .and_then(|_| taken_at(&client, &lock, settings.timing.node_timeout));
    let released = client.release(&lock);
    let mut seen = Observations::of(key, lock.kind().is_reader());
    match &released {
        Released::Yes => {
            seen.held = since.and_then(|since| SystemTime::now().duration_since(since).ok());
            seen.success_at = Some(SystemTime::now());
        }
        // Taken away by `release --force`: counted as `run` counts it, held until the force.
        Released::Acknowledged { by, .. } => {
            seen.held = by
                .as_ref()
                .and_then(|by| held_until_revoked(by, lock.token()));
            seen.outcomes.push(Outcome::Revoked);
        }
        Released::NotHeld => seen.outcomes.push(Outcome::Lost),
        Released::Unknown { .. } => {}
    }
    // No signal handlers here: a signal ends `release` by its default action.
    bounded::record_metrics(None, metrics_file.as_deref(), &seen);
    match released {
        Released::Yes => {
            log::info!(event = "released", key = key.as_str(), outcome = "released"; "released {key:?}");
            Ok(exit::OK)
        }
        // Done as a release should be: the revocation kept everyone else out until now, and
        // this release opened what it kept closed for this token. So exit 0, but say it.
        Released::Acknowledged { by, on, .. } => {
            let who = match by {
                Some(by) => by.describe(),
                None => "its record does not say by whom".to_string(),
            };
            log::warn!(
                event = "released", key = key.as_str(), outcome = "revoked";
                "{what} was revoked by `redlock release --force`: {who}; released: this release \
                 acknowledged the revocation on {}, which frees what it held",
                counted(on, "master")
            );
            Ok(exit::OK)
        }
        Released::NotHeld => Err(Failure::new(
            exit::LOCK_LOST,
            format!(
                "{what} is not held by this token (it expired or was released, or someone else \
                 holds it now): nothing was deleted"
            ),
        )),
        Released::Unknown { failures } => {
            let mut failure = wording::masters_failed(
                &format!("cannot confirm the release of {what} on {needed}"),
                &failures,
            );
            if failures.iter().all(|f| f.cause() == Cause::Unreachable) {
                // Only then is it certainly a lock of ours, with its TTL, on those masters.
                failure
                    .message
                    .push_str("; where it is still held, it expires by its TTL");
            }
            Err(failure)
        }
    }
}

/// How long the holder of `token` held before `revocation` took it away, from the holder
/// record it names (`None` without one).
fn held_until_revoked(revocation: &Revocation, token: &str) -> Option<Duration> {
    let holder = revocation
        .revoked
        .iter()
        .find(|revoked| revoked.token == token)?
        .holder
        .as_ref()?;
    Duration::from_millis(revocation.by.since_ms)
        .checked_sub(Duration::from_millis(holder.since_ms))
}

/// When the lock, share or slot held with `lock`'s token was taken, from its holder record as
/// the key's state shows it (`None` when it does not hold the key, or left no record: it was
/// not taken by redlock's `acquire`).
fn taken_at(client: &Redlock, lock: &Lock, node_timeout: Duration) -> Option<SystemTime> {
    let state = client.observe(lock.key(), node_timeout);
    let since_ms = state.holder(lock.token())?.holder.as_ref()?.since_ms;
    Some(UNIX_EPOCH + Duration::from_millis(since_ms))
}
