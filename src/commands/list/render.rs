//! How `list` prints: text for people, one JSON object for scripts (its shape is part of the
//! interface, documented in README.md, "Every lock at once: `list`").

use std::fmt::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::lock::{Holder, InLine, MasterScan, MasterState, ScanEnd, Verdict};

use super::problems::{self, Problem};
use super::view::LockView;

/// `[1] redis://r1:6379` for master `i`.
fn master_tag(i: usize) -> String {
    format!("[{}]", i + 1)
}

pub fn text(
    masters: &[MasterScan],
    locks: &[LockView],
    problems: Option<&[Problem]>,
    pattern: Option<&str>,
) -> String {
    let mut out = String::new();
    let servers: Vec<String> = masters
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{} {}", master_tag(i), m.master))
        .collect();
    let _ = writeln!(out, "masters: {}", servers.join("  "));
    if locks.is_empty() {
        match pattern {
            Some(p) => {
                let _ = writeln!(out, "no locks held matching {p:?}");
            }
            None => out.push_str("no locks held\n"),
        }
    }
    for lock in locks {
        lock_text(&mut out, lock, masters.len());
    }
    if let Some(problems) = problems {
        out.push('\n');
        match problems.len() {
            0 => out.push_str("no problems found\n"),
            1 => out.push_str("1 problem:\n"),
            n => {
                let _ = writeln!(out, "{n} problems:");
            }
        }
        for problem in problems {
            let _ = writeln!(
                out,
                "  {} on {} {}: {}\n    {}\n    what to do: {}",
                problem.kind.name(),
                master_tag(problem.master),
                masters[problem.master].master,
                problems::quote(&problem.name),
                problem.detail,
                problem.action
            );
        }
    }
    out
}

fn lock_text(out: &mut String, lock: &LockView, total: usize) {
    let key = &lock.key;
    let on = |masters: &[usize]| {
        let tags: Vec<String> = masters.iter().map(|i| master_tag(*i)).collect();
        format!("{} of {total} masters ({})", masters.len(), tags.join(" "))
    };
    match &lock.verdict {
        Verdict::Held {
            holder, expires_in, ..
        } => {
            let who = holder.as_ref().map_or_else(
                || "another client (no holder record)".to_string(),
                Holder::describe,
            );
            let expiry = expires_in
                .map(|t| format!(", expires in {}", problems::rounded(t)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "lock {key:?} is held by {who}{expiry}, on {}",
                on(&lock.holding)
            );
        }
        Verdict::Free => {
            let _ = writeln!(out, "lock {key:?} is free");
        }
        Verdict::Split | Verdict::Unknown => {
            let word = if lock.verdict == Verdict::Split {
                "split (no majority holds it or is free)"
            } else {
                "unknown (too many masters did not answer)"
            };
            let each: Vec<String> = lock
                .states
                .iter()
                .enumerate()
                .map(|(i, state)| {
                    let what = match state {
                        MasterState::Free => "free".to_string(),
                        MasterState::Held { token, holder, .. } => {
                            let by = holder
                                .as_ref()
                                .map(|h| format!(" by {}", h.describe()))
                                .unwrap_or_default();
                            format!("token {}{by}", abbreviated(token))
                        }
                        MasterState::Unreachable(error) => format!("unreachable ({error})"),
                    };
                    format!("{} {what}", master_tag(i))
                })
                .collect();
            let _ = writeln!(out, "lock {key:?} is {word}: {}", each.join(", "));
        }
    }
    if !lock.queue.is_empty() {
        let _ = writeln!(out, "  {} waiting:", lock.queue.len());
        for (position, waiter) in lock.queue.iter().enumerate() {
            let _ = writeln!(out, "    {}. {}", position + 1, waiter_text(waiter, total));
        }
    }
    let more = lock.waiting.saturating_sub(lock.queue.len());
    if more > 0 {
        let _ = writeln!(
            out,
            "  … and {more} more place(s) on some master, lapsed or past the first {}",
            super::MAX_WAITERS
        );
    }
}

fn waiter_text(waiter: &InLine, total: usize) -> String {
    let who = waiter.holder.as_ref().map_or_else(
        || format!("waiter {}", abbreviated(&waiter.token)),
        // "host (pid, user, "command") for 1m 2s": the same words as a holder.
        |h| h.describe().replacen(") for ", ") waiting for ", 1),
    );
    format!(
        "{who} (ticket {}; in line on {} of {total} masters)",
        waiter.ticket, waiter.masters
    )
}

/// The first 8 characters of a token, with an ellipsis when cut.
fn abbreviated(token: &str) -> String {
    if token.chars().count() <= 8 {
        return token.to_string();
    }
    let mut short: String = token.chars().take(8).collect();
    short.push('…');
    short
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub fn json(masters: &[MasterScan], locks: &[LockView], problems: Option<&[Problem]>) -> Value {
    let server = |i: usize| masters[i].master.to_string();
    let scans: Vec<Value> = masters
        .iter()
        .map(|m| {
            let (scanned, error) = match &m.end {
                ScanEnd::Complete => ("complete", None),
                ScanEnd::OutOfTime => ("out_of_time", None),
                ScanEnd::TooManyKeys => ("too_many_keys", None),
                ScanEnd::Failed(error) => ("failed", Some(error.to_string())),
            };
            json!({"server": m.master.to_string(), "scanned": scanned, "keys": m.keys,
                   "error": error})
        })
        .collect();
    let locks: Vec<Value> = locks
        .iter()
        .map(|lock| {
            let (verdict, token, holder, expires_in) = match &lock.verdict {
                Verdict::Held {
                    token,
                    holder,
                    expires_in,
                    ..
                } => ("held", Some(token.as_str()), holder.as_ref(), *expires_in),
                Verdict::Free => ("free", None, None, None),
                Verdict::Split => ("split", None, None, None),
                Verdict::Unknown => ("unknown", None, None, None),
            };
            let per_master: Vec<Value> = lock
                .states
                .iter()
                .enumerate()
                .map(|(i, state)| match state {
                    MasterState::Free => json!({"server": server(i), "reachable": true,
                        "held": false, "token": null, "ttl_ms": null, "error": null}),
                    MasterState::Held { token, ttl, .. } => json!({"server": server(i),
                        "reachable": true, "held": true, "token": token,
                        "ttl_ms": ttl.map(ms), "error": null}),
                    MasterState::Unreachable(error) => json!({"server": server(i),
                        "reachable": false, "held": null, "token": null, "ttl_ms": null,
                        "error": error.to_string()}),
                })
                .collect();
            let queue = super::super::status::queue_json(&lock.queue);
            json!({
                "key": lock.key,
                "verdict": verdict,
                "token": token,
                "holder": holder.map(Holder::to_json),
                "since_ms": holder.map(|h| h.since_ms),
                "expires_in_ms": expires_in.map(ms),
                "held_on": lock.holding.iter().map(|i| server(*i)).collect::<Vec<_>>(),
                "masters": per_master,
                "waiting": lock.waiting,
                "queue": queue,
            })
        })
        .collect();
    let problems = problems.map(|problems| {
        problems
            .iter()
            .map(|p| {
                json!({
                    "kind": p.kind.name(),
                    "server": server(p.master),
                    "lock": p.lock,
                    "redis_key": p.name,
                    "detail": p.detail,
                    "action": p.action,
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "masters": scans,
        "complete": masters.iter().all(MasterScan::complete),
        "locks": locks,
        "problems": problems,
    })
}
