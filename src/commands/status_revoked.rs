//! How `status` and `list` show a lock revoked by `release --force`: by whom, when, why, whom
//! it revoked, and until when the key stays closed (see the lock's `revoke`).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::escape;
use crate::lock::{Holder, Revocation};

/// `revoked by user ops on ops-1 (pid 4412) at …, reason "…", from ci-3 (pid …) for 2m; closed
/// until it stops and says so, or until 2026-11-28T17:30:32Z at the latest`.
pub(super) fn describe(revocation: &Revocation) -> String {
    let whom: Vec<String> = revocation
        .revoked
        .iter()
        .map(|revoked| match &revoked.holder {
            Some(holder) => holder.describe(),
            None => format!("token {}", escape::cut(&revoked.token, 9)),
        })
        .collect();
    let whom = if whom.is_empty() {
        String::new()
    } else {
        format!(", from {}", whom.join(", "))
    };
    let until = revocation.until_ms.map_or_else(String::new, |until| {
        format!(
            ", or until {} at the latest",
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(until))
        )
    });
    format!(
        "revoked by {}{whom}; closed until the revoked holder stops and says so{until}",
        revocation.describe()
    )
}

/// The revocation in JSON: `{"by", "reason", "at_ms", "until_ms", "revoked": [{"token",
/// "holder"}]}`.
pub(super) fn json(revocation: &Revocation) -> Value {
    let revoked: Vec<Value> = revocation
        .revoked
        .iter()
        .map(|revoked| {
            json!({
                "token": revoked.token,
                "holder": revoked.holder.as_ref().map(Holder::to_json),
            })
        })
        .collect();
    json!({
        "by": revocation.by.to_json(),
        "reason": revocation.reason(),
        "at_ms": revocation.by.since_ms,
        "until_ms": revocation.until_ms,
        "revoked": revoked,
    })
}
