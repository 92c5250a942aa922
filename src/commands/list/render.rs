//! How `list` prints, a lock at a time: text for people, one JSON object for scripts (its
//! shape is part of the interface, documented in docs/operators.md, "Every lock at once: `list`"),
//! streamed: the document's start, each lock as it is read, then the end, byte for byte what
//! serializing the whole object at once would give (compact, keys sorted), so that memory
//! never holds more than one batch of locks.
//!
//! Everything a master holds (keys, tokens, holder records, errors) is escaped on the way
//! out (see `crate::escape`).

use std::fmt::Write;

use serde_json::{Value, json};

use crate::escape;
use crate::lock::{
    Holder, InLine, KeyState, MasterScan, MasterState, ScanEnd, SemaphoreSeen, SemaphoreState,
    Verdict,
};
use crate::plural::{counted, noun_for};

use super::super::durations::ms;
use super::super::status_slots;
use super::problems::{self, Findings};

/// `[1] redis://r1:6379` for master `i`.
fn master_tag(i: usize) -> String {
    format!("[{}]", i + 1)
}

/// The report being printed: what was printed so far decides what comes next.
pub struct Report<'a> {
    json: bool,
    masters: &'a [MasterScan],
    pattern: Option<&'a str>,
    /// Locks printed so far.
    listed: usize,
}

impl<'a> Report<'a> {
    pub fn new(json: bool, masters: &'a [MasterScan], pattern: Option<&'a str>) -> Report<'a> {
        Report {
            json,
            masters,
            pattern,
            listed: 0,
        }
    }

    /// What comes before the first lock.
    pub fn start(&self) -> String {
        if self.json {
            let complete = self.masters.iter().all(MasterScan::complete);
            return format!("{{\"complete\":{complete},\"locks\":[");
        }
        let servers: Vec<String> = self
            .masters
            .iter()
            .enumerate()
            .map(|(i, m)| format!("{} {}", master_tag(i), m.master))
            .collect();
        format!("masters: {}\n", servers.join("  "))
    }

    /// Appends key `key` to `out`: a semaphore as `status` tells one, anything else as a lock.
    pub fn key(&mut self, out: &mut String, key: &str, state: &KeyState) {
        match &state.semaphore {
            Some(semaphore) => self.semaphore(out, key, semaphore, &state.line),
            None => self.lock(out, key, state),
        }
    }

    /// Appends lock `key` to `out`.
    fn lock(&mut self, out: &mut String, key: &str, lock: &KeyState) {
        if self.json {
            if self.listed > 0 {
                out.push(',');
            }
            out.push_str(&escape::json(&lock_json(self.masters, key, lock)));
        } else {
            lock_text(out, key, lock, self.masters.len());
        }
        self.listed += 1;
    }

    /// Appends `semaphore` to `out`: in text, `status`'s lines without the masters' (those
    /// too where it is split or unknown), then its waiters (`queue`); in JSON, `status
    /// --json`'s object with the queue.
    fn semaphore(
        &mut self,
        out: &mut String,
        key: &str,
        SemaphoreSeen { verdict, masters }: &SemaphoreSeen,
        queue: &[InLine],
    ) {
        if self.json {
            if self.listed > 0 {
                out.push(',');
            }
            let mut value = status_slots::to_json(key, verdict, masters);
            value["queue"] = Value::Array(super::super::status::queue_json(queue));
            out.push_str(&escape::json(&value));
        } else {
            out.push_str(&status_slots::summary(
                &escape::quoted(key),
                verdict,
                masters,
            ));
            if matches!(
                verdict.state,
                SemaphoreState::Split | SemaphoreState::Unknown
            ) {
                out.push_str(&status_slots::per_master(masters));
            }
            queue_text(out, queue, verdict.waiting, masters.len());
        }
        self.listed += 1;
    }

    /// What comes after the last lock: the problems, with `--problems`.
    pub fn end(&self, findings: Option<&Findings>) -> String {
        if self.json {
            let masters = escape::json(&scans_json(self.masters));
            let problems = escape::json(&findings.map(|f| problems_json(self.masters, f)));
            let found = escape::json(&findings.map(|f| f.count));
            return format!(
                "],\"masters\":{masters},\"problems\":{problems},\"problems_found\":{found}}}\n"
            );
        }
        let mut out = String::new();
        if self.listed == 0 {
            match self.pattern {
                Some(p) => {
                    let _ = writeln!(out, "no locks held matching {p:?}");
                }
                None => out.push_str("no locks held\n"),
            }
        }
        if let Some(findings) = findings {
            problems_text(&mut out, self.masters, findings);
        }
        out
    }
}

fn problems_text(out: &mut String, masters: &[MasterScan], findings: &Findings) {
    out.push('\n');
    match findings.count {
        0 => out.push_str("no problems found\n"),
        n if n > findings.kept.len() => {
            let _ = writeln!(
                out,
                "{}, the first {} shown (fix them and run again for the rest):",
                counted(n, "problem"),
                findings.kept.len()
            );
        }
        n => {
            let _ = writeln!(out, "{}:", counted(n, "problem"));
        }
    }
    for problem in &findings.kept {
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

fn lock_text(out: &mut String, key: &str, lock: &KeyState, total: usize) {
    // A master named the key: escaped.
    let key = escape::quoted(key);
    let on = |masters: &[usize]| {
        let tags: Vec<String> = masters.iter().map(|i| master_tag(*i)).collect();
        format!(
            "{} of {} ({})",
            masters.len(),
            counted(total, "master"),
            tags.join(" ")
        )
    };
    match &lock.verdict {
        Verdict::Held {
            holder, expires_in, ..
        } => {
            let who = match (&lock.revocation, &lock.readers, holder) {
                (Some(revocation), _, _) => super::super::status_revoked::describe(revocation),
                (None, Some(readers), _) => {
                    super::super::status_shared::who(&readers.listed, readers.count)
                }
                (None, None, Some(holder)) => holder.describe(),
                (None, None, None) => "another client (no holder record)".to_string(),
            };
            let expiry = expires_in
                .filter(|_| lock.revocation.is_none())
                .map(|t| format!(", expires in {}", problems::rounded(t)))
                .unwrap_or_default();
            let held = if lock.revocation.is_some() {
                ""
            } else {
                "held by "
            };
            let _ = writeln!(
                out,
                "lock {key} is {held}{who}{expiry}, on {}",
                on(&lock.holding)
            );
        }
        Verdict::Free => {
            let _ = writeln!(out, "lock {key} is free");
        }
        Verdict::Split | Verdict::Unknown => {
            let word = if lock.verdict == Verdict::Split {
                "split (no majority holds it or is free)"
            } else {
                "unknown (too many masters did not answer)"
            };
            let each: Vec<String> = lock
                .masters
                .iter()
                .enumerate()
                .map(|(i, master)| {
                    let what = match &master.state {
                        MasterState::Free => "free".to_string(),
                        MasterState::Held { token, holder, .. } => {
                            let by = holder
                                .as_ref()
                                .map(|h| format!(" by {}", h.describe()))
                                .unwrap_or_default();
                            format!("token {}{by}", escape::cut(token, TOKEN_SHOWN))
                        }
                        MasterState::Unreachable(error) if error.answered() => {
                            format!("failed ({error})")
                        }
                        MasterState::Unreachable(error) => format!("unreachable ({error})"),
                    };
                    format!("{} {what}", master_tag(i))
                })
                .collect();
            let _ = writeln!(out, "lock {key} is {word}: {}", each.join(", "));
        }
    }
    if let Some(readers) = &lock.readers {
        let mut shown = String::new();
        super::super::status_shared::text(&mut shown, &readers.listed, readers.count, total);
        for line in shown.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(order) = lock.order {
        let _ = writeln!(out, "  highest order that took it: {order}");
    }
    if lock.policy.is_some() {
        let _ = writeln!(
            out,
            "  its line supersedes (--supersede): a newer waiter evicts the older ones"
        );
    }
    queue_text(out, &lock.line, lock.waiting, total);
}

/// The live waiters in the order they are served, and how many more places some master has
/// (`waiting`: the longest queue).
fn queue_text(out: &mut String, queue: &[InLine], waiting: usize, total: usize) {
    if !queue.is_empty() {
        let _ = writeln!(out, "  {} waiting:", queue.len());
        for (position, waiter) in queue.iter().enumerate() {
            let _ = writeln!(out, "    {}. {}", position + 1, waiter_text(waiter, total));
        }
    }
    let more = waiting.saturating_sub(queue.len());
    if more > 0 {
        let _ = writeln!(
            out,
            "  … and {more} more {} on some master, lapsed or past the first {}",
            noun_for(more, "place"),
            super::MAX_WAITERS
        );
    }
}

fn waiter_text(waiter: &InLine, total: usize) -> String {
    let who = waiter.holder.as_ref().map_or_else(
        || format!("waiter {}", escape::cut(&waiter.token, TOKEN_SHOWN)),
        // "host (pid, user, "command") for 1m 2s": the same words as a holder. The age is
        // the last `) for ` (a command or a note may hold those words too).
        |h| {
            let mut line = h.describe();
            if let Some(at) = line.rfind(") for ") {
                line.replace_range(at..at + ") for ".len(), ") waiting for ");
            }
            line
        },
    );
    format!(
        "{who} (ticket {}; in line on {} of {})",
        waiter.ticket,
        waiter.masters,
        counted(total, "master")
    )
}

/// How many characters of a token a line shows (an ellipsis counted).
const TOKEN_SHOWN: usize = super::super::status::TOKEN_SHOWN;

/// `masters` in JSON: how the scan of each went.
fn scans_json(masters: &[MasterScan]) -> Vec<Value> {
    masters
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
        .collect()
}

/// One element of `locks` in JSON.
fn lock_json(masters: &[MasterScan], key: &str, lock: &KeyState) -> Value {
    let server = |i: usize| masters[i].master.to_string();
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
        .masters
        .iter()
        .enumerate()
        .map(|(i, master)| match &master.state {
            MasterState::Free => json!({"server": server(i), "reachable": true,
                "held": false, "token": null, "ttl_ms": null, "error": null}),
            MasterState::Held { token, ttl, .. } => json!({"server": server(i),
                "reachable": true, "held": true, "token": token,
                "ttl_ms": ttl.map(ms), "error": null}),
            MasterState::Unreachable(error) => json!({"server": server(i),
                "reachable": error.answered(), "held": null, "token": null, "ttl_ms": null,
                "error": error.to_string()}),
        })
        .collect();
    json!({
        "key": key,
        "kind": "lock",
        "shared": lock.readers.is_some(),
        "readers": lock.readers.as_ref().map(|r| super::super::status_shared::json(&r.listed)),
        "reader_count": lock.readers.as_ref().map(|r| r.count),
        "readers_shown": lock.readers.as_ref().map(|r| r.listed.len()),
        "revoked": lock.revocation.as_ref().map(super::super::status_revoked::json),
        "verdict": verdict,
        // The readers' marker is nobody's token: readers are listed by their own.
        "token": token.filter(|_| lock.readers.is_none()),
        "holder": holder.map(Holder::to_json),
        "since_ms": holder.map(|h| h.since_ms),
        "expires_in_ms": expires_in.map(ms),
        "held_on": lock.holding.iter().map(|i| server(*i)).collect::<Vec<_>>(),
        "masters": per_master,
        "waiting": lock.waiting,
        "queue": super::super::status::queue_json(&lock.line),
        "order": lock.order,
        "policy": lock.policy,
        "last_turn": lock.last_turn.as_ref().map(|turn| super::super::history::to_json(key, turn)),
    })
}

/// The kept findings in JSON.
fn problems_json(masters: &[MasterScan], findings: &Findings) -> Vec<Value> {
    findings
        .kept
        .iter()
        .map(|p| {
            json!({
                "kind": p.kind.name(),
                "server": masters[p.master].master.to_string(),
                "lock": p.lock,
                "redis_key": p.name,
                "detail": p.detail,
                "action": p.action,
            })
        })
        .collect()
}
