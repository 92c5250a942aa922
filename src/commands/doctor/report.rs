//! What the doctor measured and found, as plain data: a master's report (a cluster's, with its
//! shards), and the findings the checks draw from it. The checks (`checks`, `cluster`) read
//! these; neither needs the other's types.

use std::collections::HashMap;
use std::time::Duration;

use crate::lock::NodeError;

/// What one master told us.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub server: String,
    /// Why it could not be asked, if it could not.
    pub unreachable: Option<String>,
    /// It was reached, and answered INFO with an error reply (`unreachable` says which): a
    /// master that answers is not unreachable.
    pub answered: bool,
    pub rtt: Duration,
    /// `INFO` fields (server, replication, memory, persistence sections).
    pub info: HashMap<String, String>,
    /// The text of that `INFO` answer: which server it is (`server`) is read from it.
    pub info_text: String,
    /// `CONFIG GET appendfsync`; `None` when CONFIG is disabled (managed services often do).
    pub appendfsync: Option<String>,
    /// The master's clock minus ours, from TIME, in milliseconds.
    pub clock_offset_ms: Option<i64>,
    /// Why redlock's scripts could not take and release a scratch lock, if they could not.
    pub scripts_refused: Option<NodeError>,
    /// Why PUBLISH was refused, if it was.
    pub publish_refused: Option<NodeError>,
    /// Why SUBSCRIBE was refused, if it was.
    pub subscribe_refused: Option<NodeError>,
    /// A waiter hears its release notices on the connection it keeps (RESP3), not on one of
    /// their own.
    pub notices_on_kept_connection: bool,
    /// A cluster's primary: pub/sub is sharded (SPUBLISH, SSUBSCRIBE).
    pub sharded: bool,
    /// A cluster master (`redis+cluster://`): its shards (see `cluster`).
    pub cluster: Option<ClusterReport>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Ok,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// Which check: reachable, server, role, version, eviction, persistence, duplicate, count, clock.
    pub check: &'static str,
    pub message: String,
}

pub fn finding(severity: Severity, check: &'static str, message: impl Into<String>) -> Finding {
    Finding {
        severity,
        check,
        message: message.into(),
    }
}

/// What a cluster told us.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterReport {
    /// `CLUSTER INFO` fields.
    pub info: HashMap<String, String>,
    /// Why the slot map could not be read, if it could not.
    pub map_refused: Option<String>,
    pub slots_served: usize,
    pub shards: Vec<ShardReport>,
}

/// One shard: its primary's report, its slots and replicas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShardReport {
    pub primary: String,
    pub slots: Vec<(u16, u16)>,
    pub replicas: Vec<String>,
    pub report: Report,
}

impl ShardReport {
    /// `127.0.0.1:7000 (slots 0-5460, 10000)`.
    pub fn title(&self) -> String {
        let slots: Vec<String> = self
            .slots
            .iter()
            .map(|&(first, last)| {
                if first == last {
                    first.to_string()
                } else {
                    format!("{first}-{last}")
                }
            })
            .collect();
        format!("shard {} (slots {})", self.primary, slots.join(", "))
    }
}
