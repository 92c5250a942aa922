//! `redlock status`: who holds a lock, master by master, and the verdict.
//!
//! The JSON shape is part of the interface (documented in docs/status.md):
//!
//! ```json
//! {"key": "deploy", "verdict": "held", "quorum": 2, "token": "…", "expires_in_ms": 28000,
//!  "holder": {"host": "ci-3", "pid": 4412, "user": "ci", "command": "make deploy",
//!             "since_ms": 1763700000000},
//!  "fence": 41, "order": 103,
//!  "shared": false, "readers": null, "reader_count": null, "readers_shown": null,
//!  "waiting": 1,
//!  "queue": [{"position": 1, "token": "…", "ticket": 17, "waited_ms": 12000,
//!             "holder": {…}, "masters": 3}],
//!  "masters": [{"server": "redis://r1:6379", "reachable": true, "held": true, "token": "…",
//!               "ttl_ms": 28100, "holder": {…}, "error": null, "fence": 41,
//!               "fence_error": null, "order": 103}, …]}
//! ```

use std::fmt::Write;

use serde_json::{Value, json};

use crate::cli::{GlobalArgs, StatusArgs};
use crate::config;
use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::keys;
use crate::lock::{
    Holder, InLine, Inspection, KeyState, Marker, MasterFailure, MasterState, STATUS_WAITERS,
    Verdict,
};
use crate::plural::counted;

use super::durations::{ms, round};
use super::{
    history, open_client, output, status_revoked, status_shared, status_slots, status_watch,
    wording,
};

pub fn status(global: &GlobalArgs, args: StatusArgs) -> Result<i32, Failure> {
    config::validate_key(&args.key)?;
    let context = config::context(global)?;
    let node_timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = open_client(&context)?;
    if args.watch {
        return status_watch::watch(&client, &args.key, node_timeout, args.json);
    }
    // One round, judged once: the lock, the slots and the readers are parts of one read.
    let state = client.observe(&args.key, node_timeout);
    if let Some(semaphore) = &state.semaphore {
        let (text, code) =
            status_slots::report(&args.key, &semaphore.verdict, &semaphore.masters, args.json);
        if !global.quiet {
            output::print(&text)?;
        }
        return code;
    }
    let text = if args.json {
        format!(
            "{}\n",
            escape::json(&to_json(&args.key, client.quorum(), &state))
        )
    } else {
        to_text(&args.key, &state)
    };
    // -q: the exit code is the answer (as `grep -q`); failures still say why on stderr.
    if !global.quiet {
        output::print(&text)?;
    }
    match state.verdict {
        Verdict::Held { .. } => Ok(exit::OK),
        Verdict::Free => Ok(exit::STATUS_FREE),
        Verdict::Split => Ok(exit::STATUS_SPLIT),
        Verdict::Unknown => {
            let failures: Vec<MasterFailure> = state
                .failures()
                .into_iter()
                .map(|(master, error)| MasterFailure {
                    master: master.to_string(),
                    error: error.clone(),
                })
                .collect();
            let how = wording::how_failed(failures.iter().map(|f| &f.error));
            Err(wording::masters_failed(
                &format!(
                    "cannot tell who holds lock {:?}: too many masters {how}",
                    args.key
                ),
                &failures,
            ))
        }
    }
}

fn verdict_name(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Held { .. } => "held",
        Verdict::Free => "free",
        Verdict::Split => "split",
        Verdict::Unknown => "unknown",
    }
}

fn to_json(key: &str, quorum: usize, state: &KeyState) -> Value {
    let (token, holder, expires_in) = match &state.verdict {
        Verdict::Held {
            token,
            holder,
            expires_in,
            ..
        } => (Some(token.as_str()), holder.as_ref(), *expires_in),
        _ => (None, None, None),
    };
    let readers = state.readers.as_ref();
    let masters: Vec<Value> = state
        .masters
        .iter()
        .map(|inspection| {
            let mut json = master_json(inspection);
            json["fence_error"] = inspection.fence_problem.clone().into();
            json["order"] = inspection.order.into();
            json["policy"] = inspection.policy.clone().into();
            json
        })
        .collect();
    json!({
        "key": key,
        "fence": state.fence,
        "order": state.order,
        "policy": state.policy,
        "verdict": verdict_name(&state.verdict),
        "quorum": quorum,
        // The readers' marker is nobody's token: readers are listed by their own.
        "token": token.filter(|_| readers.is_none()),
        "expires_in_ms": expires_in.map(ms),
        "holder": holder.map(Holder::to_json),
        "waiting": state.waiting,
        "queue": queue_json(&state.line),
        "masters": masters,
        "shared": readers.is_some(),
        "readers": readers.map(|r| status_shared::json(&r.listed)),
        "reader_count": readers.map(|r| r.count),
        "readers_shown": readers.map(|r| r.listed.len()),
        "revoked": state.revocation.as_ref().map(status_revoked::json),
        "last_turn": state.last_turn.as_ref().map(|turn| history::to_json(key, turn)),
    })
}

/// One master's part of the JSON.
fn master_json(
    Inspection {
        master,
        state,
        fence,
        ..
    }: &Inspection,
) -> Value {
    match state {
        MasterState::Free => json!({
            "server": master.to_string(), "reachable": true, "held": false,
            "token": null, "ttl_ms": null, "holder": null, "error": null, "fence": fence,
        }),
        MasterState::Held { token, ttl, holder } => json!({
            "server": master.to_string(), "reachable": true, "held": true,
            "token": token, "ttl_ms": ttl.map(ms), "holder": holder.as_ref().map(Holder::to_json),
            "error": null, "fence": fence,
        }),
        MasterState::Unreachable(error) => json!({
            "server": master.to_string(), "reachable": error.answered(), "held": null,
            "token": null, "ttl_ms": null, "holder": null, "error": error.to_string(),
            "fence": fence,
        }),
    }
}

/// The fair queue in JSON, as `status` and `list` print it.
pub(super) fn queue_json(queue: &[InLine]) -> Vec<Value> {
    queue
        .iter()
        .enumerate()
        .map(|(i, waiter)| {
            json!({
                "position": i + 1,
                "token": waiter.token,
                "ticket": waiter.ticket,
                "waited_ms": waiter.holder.as_ref().map(|h| ms(h.held_for())),
                "holder": waiter.holder.as_ref().map(Holder::to_json),
                "masters": waiter.masters,
            })
        })
        .collect()
}

fn to_text(key: &str, state: &KeyState) -> String {
    let masters = &state.masters;
    let total = masters.len();
    let mut out = match &state.verdict {
        Verdict::Held {
            holder,
            expires_in,
            masters: holding,
            ..
        } => {
            let revoked = state.revocation.as_ref();
            let who = match (revoked, &state.readers, holder) {
                (Some(revocation), _, _) => status_revoked::describe(revocation),
                (None, Some(readers), _) => status_shared::who(&readers.listed, readers.count),
                (None, None, Some(holder)) => holder.describe(),
                (None, None, None) => "another client".to_string(),
            };
            // A revoked key says until when it stays closed; nobody renews it.
            let expiry = expires_in
                .filter(|_| revoked.is_none())
                .map(|t| format!(", expires in {} unless renewed", round(t)))
                .unwrap_or_default();
            let held = if revoked.is_some() { "" } else { "held by " };
            format!(
                "lock {key:?} is {held}{who}{expiry} ({holding} of {})\n",
                counted(total, "master")
            )
        }
        Verdict::Free => format!("lock {key:?} is free\n"),
        Verdict::Split => format!(
            "lock {key:?} is split: no majority of the {} holds it or is free (contenders \
             racing, or a master restarted)\n",
            counted(total, "master")
        ),
        Verdict::Unknown => {
            let failed = state.failures();
            format!(
                "lock {key:?} is unknown: too many masters {} ({} of {total})\n",
                wording::how_failed(failed.iter().map(|(_, error)| *error)),
                failed.len()
            )
        }
    };
    let width = masters
        .iter()
        .map(|m| m.master.to_string().len())
        .max()
        .unwrap_or(0);
    for Inspection { master, state, .. } in masters {
        let line = match state {
            MasterState::Free => "free".to_string(),
            MasterState::Held { token, ttl, .. } => {
                let ttl = ttl.map_or_else(|| "no TTL".to_string(), |t| format!("ttl {}", round(t)));
                match Marker::of(token) {
                    Some(Marker::Readers) => format!("held  {ttl}  by readers"),
                    Some(Marker::Revoked) => format!("held  {ttl}  revoked (release --force)"),
                    None => format!("held  {ttl}  token {}", escape::cut(token, TOKEN_SHOWN)),
                }
            }
            MasterState::Unreachable(error) => wording::master_failed(error),
        };
        let _ = writeln!(out, "  {:width$}  {line}", master.to_string());
    }
    if let Some(readers) = &state.readers {
        status_shared::text(&mut out, &readers.listed, readers.count, total);
    }
    let queue = &state.line;
    if !queue.is_empty() {
        let kind = match state.policy {
            Some(_) => "superseding (a newer waiter evicts the older ones)",
            None => "first come first served",
        };
        let _ = writeln!(
            out,
            "queue, {kind} ({}):",
            how_many_wait(queue.len(), state.waiting)
        );
        for (i, waiter) in queue.iter().enumerate() {
            let who = waiter.holder.as_ref().map_or_else(
                || format!("token {}", escape::cut(&waiter.token, TOKEN_SHOWN)),
                Holder::describe,
            );
            let _ = writeln!(
                out,
                "  {:>2}. {who} ({} of {})",
                i + 1,
                waiter.masters,
                counted(total, "master")
            );
        }
    }
    if let Some(fence) = state.fence {
        let _ = writeln!(
            out,
            "fencing counter: {fence} (the next --fence token is higher)"
        );
    }
    if let Some(order) = state.order {
        let _ = writeln!(
            out,
            "highest order that took the lock: {order} (a run with a lower --order is outdated)"
        );
    }
    for inspection in masters {
        if let Some(problem) = &inspection.fence_problem {
            // The counter's problem, not the lock's: the verdict above stands.
            let _ = writeln!(
                out,
                "fencing counter on {}: not a number ({}): --fence on this key fails there \
                 (the lock itself is not affected); if no resource checks its fencing tokens, \
                 delete it on that master: DEL {}",
                inspection.master,
                escape::visible(problem),
                super::list::problems::quote(&keys::fence(key)),
            );
        }
    }
    if let Some(turn) = &state.last_turn {
        out.push_str(&last_turn(key, turn));
    }
    out
}

/// The key's last turn, as one line: how it ended, how long ago, after how long, and who.
fn last_turn(key: &str, turn: &crate::lock::HistoryTurn) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let ago = turn
        .ended_ms
        .map(|at| {
            let ago = std::time::Duration::from_secs(now.saturating_sub(at) / 1000);
            format!(", {} ago", humantime::format_duration(ago))
        })
        .unwrap_or_default();
    let after = turn
        .held_for()
        .map(|held| format!(" (held {})", round(held)))
        .unwrap_or_default();
    let who = turn
        .holder
        .as_ref()
        .map(|h| format!(": {}", h.identify()))
        .unwrap_or_default();
    format!(
        "last turn: {}{ago}{after}{who} (more: redlock history --key {})\n",
        history::how_it_ended(&turn.end),
        super::list::problems::quote(key)
    )
}

/// How many characters of a token a line shows (an ellipsis counted): enough to tell tokens
/// apart, and no more of what another client may have written.
pub(super) const TOKEN_SHOWN: usize = 9;

/// `3 waiting`, or `100 shown of 100000 waiting` when some master's queue is longer than what
/// `status` reads of it: the line shows the live waiters among the first places only.
fn how_many_wait(shown: usize, queued: usize) -> String {
    if queued > STATUS_WAITERS {
        format!("{shown} shown of {queued} waiting")
    } else {
        format!("{shown} waiting")
    }
}
