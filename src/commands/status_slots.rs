//! `redlock status` of a semaphore (`--limit`): its limit and quorum, who holds its slots, and
//! each master's slots.
//!
//! The JSON shape is part of the interface (documented in docs/semaphore.md):
//!
//! ```json
//! {"key": "backup", "kind": "semaphore", "verdict": "held", "limit": 2, "quorum": 4,
//!  "holders": [{"token": "sem2-…", "masters": 5, "expires_in_ms": 28000, "holder": {…},
//!               "revoked": null}],
//!  "revoked": [{"token": "sem2-…", "masters": 5, "expires_in_ms": 9000, "holder": {…},
//!               "revoked": {"by": {…}, "reason": "…", "at_ms": …, "until_ms": …, …}}],
//!  "waiting": 3,
//!  "masters": [{"server": "redis://r1:6379", "reachable": true, "limit": 2, "lock": false,
//!               "slots": [{"token": "sem2-…", "ttl_ms": 28100, "holder": {…},
//!                          "revoked": false}],
//!               "error": null}, …]}
//! ```

use std::fmt::Write;

use serde_json::{Value, json};

use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::{
    Holder, MasterFailure, SemaphoreState, SemaphoreVerdict, Slot, SlotHolder, SlotsInspection,
};
use crate::plural::counted;

use super::durations::{ms, round};
use super::{status_revoked, wording};

/// The report of a semaphore and its exit code: as for a lock, 0 when someone holds a slot,
/// 1 when nobody does, 2 when split, 69 (a failure) when too many masters are unreachable.
pub fn report(
    key: &str,
    verdict: &SemaphoreVerdict,
    masters: &[SlotsInspection],
    json: bool,
) -> (String, Result<i32, Failure>) {
    let text = if json {
        format!("{}\n", escape::json(&to_json(key, verdict, masters)))
    } else {
        to_text(key, verdict, masters)
    };
    let code = match verdict.state {
        SemaphoreState::Held => Ok(exit::OK),
        SemaphoreState::Free => Ok(exit::STATUS_FREE),
        SemaphoreState::Split => Ok(exit::STATUS_SPLIT),
        SemaphoreState::Unknown => {
            let failures: Vec<MasterFailure> = masters
                .iter()
                .filter_map(|m| {
                    let error = m.state.as_ref().err()?;
                    Some(MasterFailure {
                        master: m.master.to_string(),
                        error: error.clone(),
                    })
                })
                .collect();
            let how = wording::how_failed(failures.iter().map(|f| &f.error));
            Err(wording::masters_failed(
                &format!("cannot tell who holds semaphore {key:?}: too many masters {how}"),
                &failures,
            ))
        }
    };
    (text, code)
}

/// How many characters of a slot's token a line shows (an ellipsis counted): semaphore
/// tokens start with a fixed `sem<limit>-` prefix.
const SLOT_TOKEN_SHOWN: usize = 13;

fn state_name(state: SemaphoreState) -> &'static str {
    match state {
        SemaphoreState::Held => "held",
        SemaphoreState::Free => "free",
        SemaphoreState::Split => "split",
        SemaphoreState::Unknown => "unknown",
    }
}

fn slot_json(slot: &Slot) -> Value {
    json!({
        "token": slot.token,
        "ttl_ms": ms(slot.expires_in),
        "holder": slot.holder.as_ref().map(Holder::to_json),
        "revoked": slot.revocation.is_some(),
    })
}

/// A holder of a slot, or a revoked slot (`"revoked"`: see `status_revoked::json`).
fn holder_json(h: &SlotHolder) -> Value {
    json!({
        "token": h.token,
        "masters": h.masters,
        "expires_in_ms": ms(h.expires_in),
        "holder": h.holder.as_ref().map(Holder::to_json),
        "revoked": h.revocation.as_ref().map(status_revoked::json),
    })
}

/// The semaphore in JSON (the shape in the header), also each semaphore of `list --json`.
pub(super) fn to_json(key: &str, verdict: &SemaphoreVerdict, masters: &[SlotsInspection]) -> Value {
    let holders: Vec<Value> = verdict.holders.iter().map(holder_json).collect();
    let revoked: Vec<Value> = verdict.revoked.iter().map(holder_json).collect();
    let masters: Vec<Value> = masters
        .iter()
        .map(|m| match &m.state {
            Ok(slots) => json!({
                "server": m.master.to_string(), "reachable": true,
                "limit": slots.limit.as_deref().and_then(|l| l.parse::<u32>().ok()),
                "lock": slots.is_lock,
                "slots": slots.slots.iter().map(slot_json).collect::<Vec<_>>(),
                "error": null,
            }),
            Err(error) => json!({
                "server": m.master.to_string(), "reachable": error.answered(), "limit": null,
                "lock": null, "slots": null, "error": error.to_string(),
            }),
        })
        .collect();
    json!({
        "key": key,
        "kind": "semaphore",
        "verdict": state_name(verdict.state),
        "limit": verdict.limit,
        "quorum": verdict.quorum,
        "holders": holders,
        "revoked": revoked,
        "waiting": verdict.waiting,
        "masters": masters,
    })
}

fn to_text(key: &str, verdict: &SemaphoreVerdict, masters: &[SlotsInspection]) -> String {
    let mut out = summary(&format!("{key:?}"), verdict, masters);
    out.push_str(&per_master(masters));
    out
}

/// The verdict's line (`shown`: the key, quoted), then one line per holder and per revoked
/// slot: `status`'s report without the masters' lines, also `list`'s of a semaphore.
pub(super) fn summary(
    shown: &str,
    verdict: &SemaphoreVerdict,
    masters: &[SlotsInspection],
) -> String {
    let total = masters.len();
    let SemaphoreVerdict {
        limit,
        quorum,
        holders,
        revoked,
        waiting,
        state,
    } = verdict;
    let head = format!(
        "semaphore {shown} (limit {limit}, a slot needs {quorum} of {})",
        counted(total, "master")
    );
    let held = match revoked.len() {
        0 => format!(
            "{} of {} held",
            holders.len(),
            counted(*limit as usize, "slot")
        ),
        n => format!(
            "{} of {} held, {n} revoked",
            holders.len() + n,
            counted(*limit as usize, "slot")
        ),
    };
    let mut out = match state {
        SemaphoreState::Held if *waiting > 0 => {
            format!("{head}: {held}, {waiting} waiting in line\n")
        }
        SemaphoreState::Held => format!("{head}: {held}\n"),
        SemaphoreState::Free => format!("{head}: no slot held\n"),
        SemaphoreState::Split => format!(
            "{head} is split: slots on some masters, none on {quorum} (contenders racing, or \
             slots expiring)\n"
        ),
        SemaphoreState::Unknown => {
            let failed: Vec<_> = masters
                .iter()
                .filter_map(|m| m.state.as_ref().err())
                .collect();
            format!(
                "{head} is unknown: too many masters {} ({} of {total})\n",
                wording::how_failed(failed.iter().copied()),
                failed.len()
            )
        }
    };
    for holder in holders {
        let who = holder
            .holder
            .as_ref()
            .map_or_else(|| "another client".to_string(), Holder::describe);
        let _ = writeln!(
            out,
            "  {who}, expires in {} unless renewed ({} of {})",
            round(holder.expires_in),
            holder.masters,
            counted(total, "master")
        );
    }
    for slot in revoked {
        let who = slot
            .holder
            .as_ref()
            .map_or_else(|| "another client".to_string(), Holder::describe);
        let by = slot
            .revocation
            .as_ref()
            .map_or_else(|| "revoked".to_string(), status_revoked::describe);
        let _ = writeln!(
            out,
            "  {who}: {by}; its slot stays taken for {} at most ({} of {})",
            round(slot.expires_in),
            slot.masters,
            counted(total, "master")
        );
    }
    out
}

/// One line per master: its slots, each with its time left.
pub(super) fn per_master(masters: &[SlotsInspection]) -> String {
    let mut out = String::new();
    let width = masters
        .iter()
        .map(|m| m.master.to_string().len())
        .max()
        .unwrap_or(0);
    for SlotsInspection { master, state } in masters {
        let line = match state {
            Ok(slots) if slots.is_lock => "in use as a lock".to_string(),
            Ok(slots) if slots.slots.is_empty() => "no slot".to_string(),
            Ok(slots) => {
                let list: Vec<String> = slots
                    .slots
                    .iter()
                    .map(|s| {
                        let token = escape::cut(&s.token, SLOT_TOKEN_SHOWN);
                        let revoked = if s.revocation.is_some() {
                            " (revoked)"
                        } else {
                            ""
                        };
                        format!("{token}{revoked} ttl {}", round(s.expires_in))
                    })
                    .collect();
                format!(
                    "{}: {}",
                    counted(slots.slots.len(), "slot"),
                    list.join(", ")
                )
            }
            Err(error) => wording::master_failed(error),
        };
        let _ = writeln!(out, "  {:width$}  {line}", master.to_string());
    }
    out
}
