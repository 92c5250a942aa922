//! `redlock status --watch`: a line each time the holder of a key changes, until a signal.
//!
//! The watching is the lock's (`Redlock::watch`: what drives a read, and why no change is
//! missed or said twice, is argued there); this file words each change, in text or as one
//! JSON object a line, and ends the watch on a signal (exit 0) or when nobody reads any more
//! (`| head -1`: exit 0, quietly, as soon as the reader is gone, not at the next line).
//!
//! A text line: the time (UTC, RFC 3339), the event padded to 8 columns, what happened:
//!
//! ```text
//! 2026-11-28T17:10:02Z current  lock "svc" is held by web-1 (pid 4412, user app, "./worker") for 3m 12s (3 of 3 masters)
//! 2026-11-28T17:12:40Z released lock "svc" by web-1 (pid 4412, user app, "./worker") for 5m 50s
//! 2026-11-28T17:12:40Z taken    lock "svc" by web-2 (pid 977, user app, "./worker") for 0s (3 of 3 masters)
//! ```
//!
//! A JSON line (documented in docs/status.md): the event, what it is about, and the state
//! after it, so that the last line read is all a dashboard needs:
//!
//! ```json
//! {"event": "taken", "key": "svc", "at_ms": 1764349960000,
//!  "token": "…", "kind": "lock", "limit": null, "holder": {…}, "master": null, "error": null,
//!  "verdict": "held", "holders": [{"token": "…", "kind": "lock", "limit": null, "masters": 3,
//!                                  "expires_in_ms": 29000, "holder": {…}}],
//!  "masters": 3, "unreachable": 0}
//! ```
//!
//! Revoked (a forced release, `release --force`) is one more [`Change`], worded beside
//! `released`.

use std::ops::ControlFlow;
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::{Change, Holder, HolderSeen, Observation, Redlock, Seen};
use crate::plural::counted;

use super::acquiring::listen_for_signals;
use super::durations::{ms, round};
use super::{output, status_revoked, wording};

/// Watches `key` on `client` (see the module header); 0 when a signal or a closed output
/// ends it.
pub fn watch(
    client: &Redlock,
    key: &str,
    node_timeout: std::time::Duration,
    json: bool,
) -> Result<i32, Failure> {
    let signals = listen_for_signals()?;
    // Nobody reads any more: end as a signal would, without waiting for the next line.
    let cancel = signals.cancel.clone();
    crate::stdio::when_stdout_is_gone(move || cancel.cancel()).map_err(|e| {
        Failure::os(format!(
            "cannot start a thread to watch standard output: {e}"
        ))
    })?;
    let mut failed = None;
    client.watch(key, node_timeout, &signals.cancel, |change, now| {
        let line = if json {
            format!("{}\n", escape::json(&to_json(key, change, now)))
        } else {
            to_text(key, change, now)
        };
        match output::print_unless_closed(&line) {
            Ok(true) => ControlFlow::Continue(()),
            // Nobody reads any more: the reader has what it wanted.
            Ok(false) => ControlFlow::Break(()),
            Err(failure) => {
                failed = Some(failure);
                ControlFlow::Break(())
            }
        }
    });
    match failed {
        Some(failure) => Err(failure),
        None => Ok(exit::OK),
    }
}

/// The event's name, as both forms show it.
pub fn event_name(change: &Change) -> &'static str {
    match change {
        Change::Current => "current",
        Change::Taken(_) => "taken",
        Change::Released(_) => "released",
        Change::Expired(_) => "expired",
        Change::Lost(_) => "lost",
        Change::Revoked(..) => "revoked",
        Change::Split => "split",
        Change::Unknown => "unknown",
        Change::Down { .. } => "down",
        Change::Up { .. } => "up",
    }
}

fn to_text(key: &str, change: &Change, now: &Observation) -> String {
    let total = now.masters.len();
    let what = match change {
        Change::Current | Change::Split | Change::Unknown => state(key, now),
        Change::Taken(h) => format!("lock {key:?} by {}{}", who(h), held_on(h, total)),
        Change::Released(h) => format!("lock {key:?} by {}{}", who(h), how(h)),
        Change::Expired(h) => format!(
            "lock {key:?} by {}{}: its TTL ran out, nobody released it",
            who(h),
            how(h)
        ),
        Change::Lost(h) => format!(
            "lock {key:?} by {}{}: no longer held on enough of the {}",
            who(h),
            how(h),
            counted(total, "master")
        ),
        Change::Revoked(h, revocation) => format!(
            "lock {key:?} by {}{}: {}",
            who(h),
            how(h),
            status_revoked::describe(revocation)
        ),
        Change::Down { master, error } => {
            format!("master {master}: {}", wording::master_failed(error))
        }
        Change::Up { master } => format!("master {master} answers again"),
    };
    let at = humantime::format_rfc3339_seconds(SystemTime::now());
    format!("{at} {:8} {what}\n", event_name(change))
}

/// The state a read found, as a line: what `current`, `split` and `unknown` say.
fn state(key: &str, now: &Observation) -> String {
    let total = now.masters.len();
    match &now.seen {
        Seen::Free => format!("lock {key:?} is free"),
        Seen::Held(holders) => {
            let all: Vec<String> = holders
                .iter()
                .map(|h| format!("{}{}", who(h), held_on(h, total)))
                .collect();
            format!("lock {key:?} is held by {}", all.join("; "))
        }
        Seen::Split => format!(
            "lock {key:?} is split: no quorum of the {} holds it or is free (contenders \
             racing, or a master restarted)",
            counted(total, "master")
        ),
        Seen::Revoked(revocation) => {
            format!("lock {key:?} is {}", status_revoked::describe(revocation))
        }
        Seen::Unknown => {
            let failed: Vec<_> = now.masters.iter().filter_map(|(_, e)| e.as_ref()).collect();
            format!(
                "lock {key:?} is unknown: too many masters {} ({} of {total}); watching on",
                wording::how_failed(failed.iter().copied()),
                failed.len()
            )
        }
    }
}

/// How many characters of a token a line shows for a holder without a record (an ellipsis
/// counted): as `status` shows a reader's or a slot's, whose tokens start with a prefix.
const TOKEN_SHOWN: usize = 13;

/// Who holds, as `status` names a holder.
fn who(seen: &HolderSeen) -> String {
    seen.holder.as_ref().map_or_else(
        || {
            format!(
                "another client (token {})",
                escape::cut(&seen.token, TOKEN_SHOWN)
            )
        },
        Holder::describe,
    )
}

/// How it holds, when not as the lock: ` (--shared)`, ` (a slot of --limit 2)`.
fn how(seen: &HolderSeen) -> String {
    match seen.kind.held_as() {
        Some(flag) => format!(" ({flag})"),
        None => String::new(),
    }
}

/// How it holds, where, and for how long unless renewed:
/// ` (--shared, 3 of 3 masters, expires in 28s unless renewed)`.
fn held_on(seen: &HolderSeen, total: usize) -> String {
    let flag = seen
        .kind
        .held_as()
        .map(|flag| format!("{flag}, "))
        .unwrap_or_default();
    let expiry = seen
        .expires_in
        .map(|t| format!(", expires in {} unless renewed", round(t)))
        .unwrap_or_default();
    format!(
        " ({flag}{} of {}{expiry})",
        seen.masters,
        counted(total, "master")
    )
}

fn to_json(key: &str, change: &Change, now: &Observation) -> Value {
    let about = match change {
        Change::Taken(h)
        | Change::Released(h)
        | Change::Expired(h)
        | Change::Lost(h)
        | Change::Revoked(h, _) => Some(h),
        _ => None,
    };
    let revoked = match &now.seen {
        Seen::Revoked(revocation) => Some(status_revoked::json(revocation)),
        _ => None,
    };
    let (master, error) = match change {
        Change::Down { master, error } => (Some(master), Some(error.to_string())),
        Change::Up { master } => (Some(master), None),
        _ => (None, None),
    };
    let (verdict, holders): (&str, &[HolderSeen]) = match &now.seen {
        Seen::Free => ("free", &[]),
        Seen::Held(holders) => ("held", holders),
        Seen::Split => ("split", &[]),
        Seen::Unknown => ("unknown", &[]),
        Seen::Revoked(_) => ("revoked", &[]),
    };
    let holders: Vec<Value> = holders
        .iter()
        .map(|h| {
            let (kind, limit) = (h.kind.name(), h.kind.limit());
            json!({
                "token": h.token, "kind": kind, "limit": limit, "masters": h.masters,
                "expires_in_ms": h.expires_in.map(ms),
                "holder": h.holder.as_ref().map(Holder::to_json),
            })
        })
        .collect();
    let at_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, ms);
    let (kind, limit) = about.map_or((None, None), |h| {
        let (kind, limit) = (h.kind.name(), h.kind.limit());
        (Some(kind), limit)
    });
    json!({
        "event": event_name(change),
        "key": key,
        "at_ms": at_ms,
        "token": about.map(|h| &h.token),
        "kind": kind,
        "limit": limit,
        "holder": about.and_then(|h| h.holder.as_ref()).map(Holder::to_json),
        "master": master,
        "error": error,
        "verdict": verdict,
        "holders": holders,
        "revoked": revoked,
        "masters": now.masters.len(),
        "unreachable": now.masters.iter().filter(|(_, e)| e.is_some()).count(),
    })
}
