//! How failures read: one line that says what went wrong and what to do.

use std::fmt::Write;
use std::time::Duration;

use crate::config::LockSettings;
use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::{
    AttemptFailure, Cause, Conflict, FenceError, Holder, Lock, MasterFailure, NodeError, Redlock,
    Superseded,
};
use crate::plural::counted;

/// The failure when too few masters answered: `what` failed, and why, master by master, each
/// group of masters with the same cause followed by what to do about it. Exit 78 when any of
/// them needs a configuration fix (a refused password, a missing permission, a replica, TLS),
/// else 69.
pub fn masters_failed(what: &str, failures: &[MasterFailure]) -> Failure {
    let code = if failures.iter().any(|f| f.cause().is_configuration()) {
        exit::CONFIG
    } else {
        exit::UNAVAILABLE
    };
    Failure::new(code, format!("{what}: {}", explain(failures)))
}

/// `M1 timed out, M2 cannot connect: ...: check that it runs ...; M3 error reply: WRONGPASS ...:
/// authentication failed: ...`.
pub fn explain(failures: &[MasterFailure]) -> String {
    let mut causes: Vec<Cause> = Vec::new();
    for failure in failures {
        let cause = failure.cause();
        if !causes.contains(&cause) {
            causes.push(cause);
        }
    }
    causes
        .iter()
        .map(|cause| {
            let masters: Vec<String> = failures
                .iter()
                .filter(|f| f.cause() == *cause)
                .map(ToString::to_string)
                .collect();
            format!("{}: {}", masters.join(", "), cause.advice())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// How the failing masters failed, for a headline: "are unreachable" when none of them
/// answered, "answered with errors" when each did (a key of another type, out of memory, a
/// refused password), both for a mix.
pub fn how_failed<'a>(errors: impl IntoIterator<Item = &'a NodeError>) -> &'static str {
    let (mut silent, mut answered) = (false, false);
    for error in errors {
        if error.cause() == Cause::Unreachable {
            silent = true;
        } else {
            answered = true;
        }
    }
    match (silent, answered) {
        (false, true) => "answered with errors",
        (true, true) => "are unreachable or answered with errors",
        _ => "are unreachable",
    }
}

/// One master's failure on a line of its own: `unreachable: timed out` when it did not answer,
/// else the error it answered with (`error reply: WRONGTYPE ...`).
pub fn master_failed(error: &NodeError) -> String {
    if error.cause() == Cause::Unreachable {
        format!("unreachable: {error}")
    } else {
        error.to_string()
    }
}

/// One warning line for masters that refused for a configuration reason while the quorum was
/// still reached: the lock holds, with less fault tolerance than the user thinks.
pub fn warn_degraded(key: &str, refusals: &[MasterFailure]) {
    if refusals.is_empty() {
        return;
    }
    log::warn!(
        "warning: lock {key:?} was taken without {} of the masters, which refused: {}",
        refusals.len(),
        explain(refusals)
    );
}

/// The masters' failures, each with its error, for progress lines.
pub fn list(failures: &[MasterFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// "the only slot" (`--limit 1`) / "all 3 slots".
pub fn all_slots(limit: u32) -> String {
    if limit == 1 {
        "the only slot".to_string()
    } else {
        format!("all {limit} slots")
    }
}

/// "1 waiter is" / "3 waiters are".
pub fn waiting(waiters: usize) -> String {
    if waiters == 1 {
        "1 waiter is".to_string()
    } else {
        format!("{waiters} waiters are")
    }
}

/// What a refusal by a revoked key says (`release --force`; see the lock's `revoke`).
pub const REVOKED: &str = "was revoked by `redlock release --force` and stays closed until the \
     revoked holder stops and says so (`redlock status` says who)";

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
    // Trying once is the default, and what --wait 0 and --no-wait ask for: the advice says
    // what happened before how to wait, so that it does not read as "use the --wait you gave".
    let advice = if settings.wait.is_zero() {
        "; tried once without waiting: to wait for it, pass --wait DURATION (e.g. --wait 1m) \
         or --wait forever"
            .to_string()
    } else {
        format!(
            "; gave up after waiting {}",
            humantime::format_duration(settings.wait)
        )
    };
    let taken = |message: String| {
        Failure::new(
            settings.conflict_exit_code,
            if quiet { String::new() } else { message },
        )
    };
    match failure {
        AttemptFailure::Held {
            holder,
            expires_in,
            free,
            shared,
            revoked,
            waiters,
            place,
        } => {
            let waiters = &others(*waiters, *place);
            let who = match holder {
                _ if *free && *waiters > 0 => format!(
                    "is free, but {} queued for it first (first come, first served)",
                    waiting(*waiters)
                ),
                _ if *shared => "is held by readers (--shared)".to_string(),
                // The record there is whoever forced, not a holder: `status` says who.
                _ if *revoked => REVOKED.to_string(),
                Some(holder) => format!("is held by {}", holder.describe()),
                None => "is held by another client".to_string(),
            };
            let mut expiry = expires_in
                .map(|t| match revoked {
                    true => format!(", at most {}", whole_seconds(t)),
                    false => format!(", expires in {} unless renewed", whole_seconds(t)),
                })
                .unwrap_or_default();
            if !*free && *waiters > 0 {
                let _ = write!(expiry, ", and {} queued for it", waiting(*waiters));
            }
            taken(format!("lock {key:?} {who}{expiry}{advice}"))
        }
        AttemptFailure::Full {
            limit,
            holders,
            frees_in,
            waiters,
            place,
        } => {
            let waiters = &others(*waiters, *place);
            let mut expiry = frees_in
                .map(|t| format!("; one frees in {} unless renewed", whole_seconds(t)))
                .unwrap_or_default();
            if *waiters > 0 {
                let _ = write!(expiry, ", and {} queued for one", waiting(*waiters));
            }
            taken(format!(
                "{} of semaphore {key:?} {} taken{}{expiry}{advice}",
                all_slots(*limit),
                if *limit == 1 { "is" } else { "are" },
                slot_holders(holders)
            ))
        }
        AttemptFailure::Unreachable { needed, failures } => masters_failed(
            &format!(
                "cannot take {} (need {})",
                held(key, settings),
                counted(*needed, "master")
            ),
            failures,
        ),
        AttemptFailure::TooSlow { elapsed } => Failure::new(
            exit::UNAVAILABLE,
            format!(
                "{} masters granted {} but only after {elapsed:.0?}, leaving no validity of the \
                 {} TTL (need {}); raise --ttl or check the network",
                if settings.limit.is_some() {
                    "enough"
                } else {
                    "a majority of"
                },
                held(key, settings),
                humantime::format_duration(settings.timing.ttl),
                counted(quorum, "master")
            ),
        ),
    }
}

/// The waiters other than us: a failure counts us among the waiters once we had a place in
/// line (`place`), and we gave it up when we gave up.
fn others(waiters: usize, place: Option<usize>) -> usize {
    waiters.saturating_sub(usize::from(place.is_some()))
}

/// `lock "k"`, or `a slot of semaphore "k"` with --limit.
fn held(key: &str, settings: &LockSettings) -> String {
    match settings.limit {
        None => format!("lock {key:?}"),
        Some(_) => format!("a slot of semaphore {key:?}"),
    }
}

/// What a token holds, for `extend` and `release`: `lock "k"`, or `the slot of semaphore "k"`,
/// and the masters it needs: `a majority of masters`, or `4 masters`.
pub fn token_holds(key: &str, lock: &Lock, client: &Redlock) -> (String, String) {
    let needs = match lock.kind().limit() {
        None => "a majority of masters".to_string(),
        Some(limit) => counted(client.slot_quorum(limit), "master"),
    };
    (lock.kind().holding(key), needs)
}

/// ` by ci-3 (pid 4412, ...) for 2m and 1 other`: who holds a semaphore's slots, as far as the
/// refusing masters named them.
pub fn slot_holders(holders: &[(String, Option<Holder>)]) -> String {
    let named: Vec<String> = holders
        .iter()
        .filter_map(|(_, holder)| holder.as_ref().map(Holder::describe))
        .collect();
    let others = holders.len() - named.len().min(1);
    match (named.first(), others) {
        (None, _) => String::new(),
        (Some(first), 0) => format!(" by {first}"),
        (Some(first), 1) => format!(" by {first} and 1 other"),
        (Some(first), n) => format!(" by {first} and {n} others"),
    }
}

/// A key used as a lock and as a semaphore, or as semaphores of two limits: exit 64, since
/// waiting would not help and only a change of command can.
pub fn conflict(key: &str, conflict: &Conflict) -> Failure {
    Failure::usage(match conflict {
        Conflict::IsLock => format!(
            "{key:?} is in use as a lock (without --limit): a key cannot be a lock and a \
             semaphore at once; use another key for the semaphore"
        ),
        Conflict::IsShared => format!(
            "{key:?} is in use as a shared lock (--shared): a key cannot be a shared lock and \
             a semaphore at once; use another key for the semaphore"
        ),
        Conflict::IsSemaphore { limit } => format!(
            "lock {key:?} is in use as a semaphore{}: a key cannot be a lock and a semaphore at \
             once; use another key for the lock, or take a slot with the same --limit",
            limit
                .as_ref()
                .map(|l| format!(" (--limit {})", escape::visible(l)))
                .unwrap_or_default()
        ),
        Conflict::Policy { theirs } if theirs == crate::lock::SUPERSEDE_POLICY => format!(
            "lock {key:?} has a superseding line (its waiters use --supersede): every waiter of \
             a key must agree; add --supersede, or use another key"
        ),
        Conflict::Policy { theirs } => format!(
            "lock {key:?} has a first-come, first-served line (policy {}): a waiter with \
             --supersede would evict waiters that did not ask for it; drop --supersede, or use \
             another key",
            escape::quoted(theirs)
        ),
        Conflict::Limit { ours, theirs } => format!(
            "semaphore {key:?} is held with --limit {theirs}, not {ours}: every holder of a key \
             must use the same limit; use --limit {theirs}, or another key"
        ),
    })
}

/// Why no fencing token was granted (the lock has been released by then).
pub fn fence_failure(key: &str, error: FenceError) -> Failure {
    let (code, message) = match error {
        FenceError::Unreachable { failures } => {
            let how = how_failed(failures.iter().map(|f| &f.error));
            let failure = masters_failed(
                &format!(
                    "took lock {key:?} but too many masters {how} when asked for its fencing \
                     token (the lock was released)"
                ),
                &failures,
            );
            (failure.code, failure.message)
        }
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
        FenceError::Shared => (exit::USAGE, crate::config::shared_fence(key)),
        FenceError::NotExclusive { limit } => (
            exit::USAGE,
            format!(
                "--fence needs a lock, and {key:?} is held as a slot of a semaphore (--limit \
                 {limit}): up to {limit} holders run at once, so a resource cannot refuse the \
                 older tokens; drop --fence, or use a lock (no --limit)"
            ),
        ),
    };
    Failure::new(code, message)
}

/// The line of a waiter that a newer one superseded (`--supersede`): who did (host, pid,
/// order, note), and the `code` it exits with; `outdated` when that one was waiting first
/// with a higher order (`--order`).
/// `ours` is this waiter's own `--order`: one without an order ranks below every waiter with
/// one, whenever it arrived, and the line says so rather than call an earlier arrival newer.
pub fn superseded(
    key: &str,
    superseded: &Superseded,
    ours: Option<u64>,
    outdated: bool,
    code: i32,
) -> String {
    let mark = &superseded.mark;
    let who = mark
        .by
        .as_ref()
        .map_or_else(|| "a waiter that left no record".to_string(), evictor);
    let theirs = mark.by.as_ref().and_then(|by| by.order);
    if let (None, Some(theirs)) = (ours, theirs) {
        let when = if superseded.was_there_first() {
            "already waiting"
        } else {
            "come since"
        };
        return format!(
            "superseded on lock {key:?} by a waiter with --order {theirs}, {when} ({who}): a \
             waiter without --order ranks below every waiter with one, so this run leaves the \
             line and skips its command (exit {code}, see --superseded-exit-code)"
        );
    }
    if outdated {
        let theirs = mark.by.as_ref().and_then(|by| by.order).unwrap_or_default();
        return format!(
            "outdated on lock {key:?}: order {theirs} was already waiting ({who}), so this run \
             skips its command (exit {code}, see --outdated-exit-code)"
        );
    }
    format!(
        "superseded on lock {key:?} by a newer waiter, {who}: this run leaves the line and \
         skips its command (exit {code}, see --superseded-exit-code)"
    )
}

/// The line of a superseding waiter whose place was gone and that no mark named: not
/// superseded, as far as anyone knows, so it says to run it again (exit 82, its own code, so
/// that CI does not take it for a newer deploy).
pub fn lost_place(key: &str) -> String {
    format!(
        "lost its place in line for lock {key:?} on more masters than it can spare (it was \
         stopped or cut off from them, or they restarted without it), and no newer waiter is \
         known to have superseded it; a --supersede waiter does not join again (one may have \
         superseded it meanwhile), so this run skips its command: run it again (exit {})",
        exit::LOST_PLACE
    )
}

/// `ci-7 (pid 4412, order 103, for "https://ci.example/job/9")`: who a mark names, escaped.
fn evictor(by: &Holder) -> String {
    let order = by
        .order
        .map(|order| format!(", order {order}"))
        .unwrap_or_default();
    let note = by
        .note
        .as_deref()
        .map(|note| format!(", for {}", escape::quoted(note)))
        .unwrap_or_default();
    format!(
        "{} (pid {}{order}{note})",
        escape::visible(&by.host),
        by.pid
    )
}
