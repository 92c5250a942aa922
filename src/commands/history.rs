//! `redlock history`: a lock's last turns, newest first, as every master recorded them and
//! `lock::read::history` merged them. Renders; the merge judges.
//!
//! One JSON object a line with `--json` (docs/protocol.md, "History"):
//!
//! ```json
//! {"key": "deploy", "token": "…", "kind": "lock", "end": "released", "exit_code": 0,
//!  "signal": null, "started_ms": 1763700000000, "ended_ms": 1763700012000,
//!  "held_ms": 12000, "ttl_ms": 30000, "holder": {…}, "by": null, "masters": 3}
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::cli::{GlobalArgs, HistoryArgs};
use crate::config;
use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::{HistoryTurn, Holder, KeyHistory, Kind, MasterFailure, TurnEnd};
use crate::plural::counted;

use super::durations::round;
use super::{open_client, output, wording};

pub fn history(global: &GlobalArgs, args: HistoryArgs) -> Result<i32, Failure> {
    config::validate_key(&args.key)?;
    let context = config::context(global)?;
    let node_timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = open_client(&context)?;
    let read = client.history(&args.key, args.limit as usize, node_timeout);
    if read.answered() < client.quorum() {
        let failures: Vec<MasterFailure> = read
            .masters
            .iter()
            .filter_map(|(master, error)| {
                error.as_ref().map(|error| MasterFailure {
                    master: master.to_string(),
                    error: error.clone(),
                })
            })
            .collect();
        let how = wording::how_failed(failures.iter().map(|f| &f.error));
        return Err(wording::masters_failed(
            &format!(
                "cannot read the history of lock {:?}: too many masters {how}",
                args.key
            ),
            &failures,
        ));
    }
    let now = unix_ms(SystemTime::now());
    let since = args
        .since
        .map(|since| now.saturating_sub(since.as_millis() as u64));
    let turns: Vec<&HistoryTurn> = read
        .turns
        .iter()
        .filter(|turn| since.is_none_or(|since| latest(turn) >= since))
        .collect();
    let text = if args.json {
        turns
            .iter()
            .map(|turn| format!("{}\n", escape::json(&to_json(&args.key, turn))))
            .collect()
    } else {
        to_text(&args.key, &read, &turns)
    };
    output::print(&text)?;
    Ok(exit::OK)
}

/// The later of a turn's start and end: what `--since` compares.
fn latest(turn: &HistoryTurn) -> u64 {
    turn.ended_ms.max(turn.started_ms).unwrap_or(0)
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn to_text(key: &str, read: &KeyHistory, turns: &[&HistoryTurn]) -> String {
    let total = read.masters.len();
    let answered = read.answered();
    let from = if answered < total {
        format!(" ({answered} of {} answered)", counted(total, "master"))
    } else {
        String::new()
    };
    if turns.is_empty() {
        return format!("lock {key:?}: no history{from}\n");
    }
    let mut out = format!(
        "lock {key:?}: {}, newest first{from}\n",
        counted(turns.len(), "turn")
    );
    for turn in turns {
        let when = turn
            .started_ms
            .or(turn.ended_ms)
            .map_or_else(|| "?".to_string(), timestamp);
        let held = match (&turn.end, turn.held_for()) {
            (end, _) if !end.held() => "never ran".to_string(),
            (_, Some(held)) => format!("held {}", round(held)),
            (TurnEnd::Holding, None) => "holding".to_string(),
            (_, None) => "held ?".to_string(),
        };
        let who = turn
            .holder
            .as_ref()
            .map_or_else(|| "another client".to_string(), Holder::identify);
        out.push_str(&format!(
            "  {when}  {held:<12}  {:<24}  {who}\n",
            how_it_ended(&turn.end)
        ));
    }
    if read.more {
        out.push_str("  (older turns not shown: --limit shows more)\n");
    }
    out
}

/// The words of an end, as the text says it.
pub(super) fn how_it_ended(end: &TurnEnd) -> String {
    let by = |by: &Option<Holder>| {
        by.as_ref().map_or_else(String::new, |h| {
            let why = h
                .note
                .as_deref()
                .map(|note| format!(": {}", escape::quoted(note)))
                .unwrap_or_default();
            format!(
                " by {}@{}{why}",
                escape::visible(&h.user),
                escape::visible(&h.host)
            )
        })
    };
    match end {
        TurnEnd::Exited(code) => format!("released, exit {code}"),
        TurnEnd::Signalled(signal) => format!("released, signal {signal}"),
        TurnEnd::Released => "released".to_string(),
        TurnEnd::Lost => "lost (could not renew)".to_string(),
        TurnEnd::Revoked { by: who } => format!("revoked{}", by(who)),
        TurnEnd::Expired => "expired (stopped renewing)".to_string(),
        TurnEnd::Holding => "holding now".to_string(),
        TurnEnd::Superseded { by: who } => format!("superseded{}", by(who)),
        TurnEnd::Left(how) => how.clone(),
        TurnEnd::Outdated(Some(order)) => format!("outdated (order {order} took it)"),
        TurnEnd::Outdated(None) => "outdated".to_string(),
    }
}

/// `2026-12-02 06:30:01Z`: UTC, to the second.
fn timestamp(ms: u64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(ms);
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .replacen('T', " ", 1)
}

pub(super) fn to_json(key: &str, turn: &HistoryTurn) -> Value {
    let (exit_code, signal) = match turn.end {
        TurnEnd::Exited(code) => (Some(code), None),
        TurnEnd::Signalled(signal) => (None, Some(signal)),
        _ => (None, None),
    };
    let by = match &turn.end {
        TurnEnd::Revoked { by } | TurnEnd::Superseded { by } => by.as_ref().map(Holder::to_json),
        _ => None,
    };
    let kind = Kind::of_token(&turn.token).name();
    json!({
        "key": key,
        "token": turn.token,
        "kind": kind,
        "end": turn.end.word(),
        "exit_code": exit_code,
        "signal": signal,
        "started_ms": turn.started_ms,
        "ended_ms": turn.ended_ms,
        "held_ms": turn.held_for().map(|d| d.as_millis() as u64),
        "ttl_ms": turn.ttl_ms,
        "holder": turn.holder.as_ref().map(Holder::to_json),
        "by": by,
        "outdated_by": match turn.end {
            TurnEnd::Outdated(order) => order,
            _ => None,
        },
        "masters": turn.masters,
    })
}
