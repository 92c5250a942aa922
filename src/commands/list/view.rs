//! What `list` shows of each lock found: the verdict from every master's state (as `status`
//! judges it), the masters that hold it, and its queue merged across masters. Pure functions
//! of a scan.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::lock::{FoundLock, MasterState, Scan, Verdict, judge};

/// One lock, as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct LockView {
    pub key: String,
    pub verdict: Verdict,
    /// Each master's state of the lock key, by master index.
    pub states: Vec<MasterState>,
    /// The masters that hold the verdict's token (held) or any token (otherwise).
    pub holding: Vec<usize>,
    /// The longest queue any master has.
    pub queued: u64,
    /// The first waiters, by ticket.
    pub waiters: Vec<WaiterView>,
    /// The master's clock, from the first master that answered (ms since the epoch).
    pub now_ms: Option<u64>,
}

/// One queued waiter, as the masters have it.
#[derive(Clone, Debug, PartialEq)]
pub struct WaiterView {
    pub id: String,
    pub ticket: u64,
    pub record: Option<WaiterRecord>,
    /// Masters where it is queued.
    pub masters: usize,
    /// Masters where its lease has not lapsed by that master's clock.
    pub live: usize,
}

/// Who a waiter is, from its record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaiterRecord {
    pub host: String,
    pub pid: Option<u64>,
    pub user: String,
    pub command: String,
    /// When it started waiting, in ms since the epoch.
    pub since_ms: Option<u64>,
}

impl WaiterRecord {
    /// Reads a waiter's record: a holder-like JSON object. Missing fields stay empty; a record
    /// that is not a JSON object is none.
    pub fn parse(text: &str) -> Option<WaiterRecord> {
        let value: Value = serde_json::from_str(text).ok()?;
        let object = value.as_object()?;
        let text = |name: &str| {
            object
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Some(WaiterRecord {
            host: text("host"),
            pid: object.get("pid").and_then(Value::as_u64),
            user: text("user"),
            command: text("command"),
            since_ms: ["since_ms", "since"]
                .iter()
                .find_map(|name| object.get(*name).and_then(Value::as_u64)),
        })
    }
}

/// The locks worth listing: held, split or unknown, or with waiters.
pub fn views(scan: &Scan) -> Vec<LockView> {
    scan.locks
        .iter()
        .map(view)
        .filter(|v| v.verdict != Verdict::Free || v.queued > 0)
        .collect()
}

fn view(lock: &FoundLock) -> LockView {
    let states = lock.states();
    let verdict = judge(&states);
    let holding = states
        .iter()
        .enumerate()
        .filter(|(_, state)| match (state, &verdict) {
            (MasterState::Held { token, .. }, Verdict::Held { token: held, .. }) => token == held,
            (MasterState::Held { .. }, _) => true,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect();
    let mut waiters: BTreeMap<&str, WaiterView> = BTreeMap::new();
    let mut queued = 0;
    let mut now_ms = None;
    for read in lock.reads.iter().flatten() {
        now_ms = now_ms.or(Some(read.now_ms));
        queued = queued.max(read.queue.len);
        for waiter in &read.queue.waiters {
            let view = waiters.entry(&waiter.id).or_insert_with(|| WaiterView {
                id: waiter.id.clone(),
                ticket: waiter.ticket,
                record: None,
                masters: 0,
                live: 0,
            });
            view.masters += 1;
            if waiter.lease_ms.is_some_and(|lease| lease > read.now_ms) {
                view.live += 1;
            }
            if view.record.is_none() {
                view.record = waiter.record.as_deref().and_then(WaiterRecord::parse);
            }
        }
    }
    let mut waiters: Vec<WaiterView> = waiters.into_values().collect();
    waiters.sort_by(|a, b| (a.ticket, &a.id).cmp(&(b.ticket, &b.id)));
    LockView {
        key: lock.key.clone(),
        verdict,
        states,
        holding,
        queued,
        waiters,
        now_ms,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::lock::{LockRead, NodeError, QueueRead, Ttl, Waiter};

    pub fn read(token: Option<&str>) -> LockRead {
        LockRead {
            now_ms: 1_000_000,
            token: token.map(str::to_string),
            ttl: if token.is_some() {
                Ttl::Left(Duration::from_secs(20))
            } else {
                Ttl::Missing
            },
            holder_record: None,
            holder_ttl: Ttl::Missing,
            fence: None,
            queue: QueueRead::default(),
        }
    }

    fn waiter(id: &str, ticket: u64, lease_ms: u64) -> Waiter {
        Waiter {
            id: id.into(),
            ticket,
            lease_ms: Some(lease_ms),
            record: Some(format!(
                r#"{{"host":"h","pid":7,"user":"u","command":"job {id}","since_ms":5}}"#
            )),
        }
    }

    #[test]
    fn held_locks_name_their_masters_and_free_ones_are_left_out() {
        let lock = FoundLock {
            key: "k".into(),
            reads: vec![
                Ok(read(Some("a"))),
                Err(NodeError::Timeout),
                Ok(read(Some("a"))),
            ],
        };
        let free = FoundLock {
            key: "f".into(),
            reads: vec![Ok(read(None)), Ok(read(None)), Ok(read(Some("x")))],
        };
        let scan = Scan {
            masters: Vec::new(),
            locks: vec![lock, free],
            strays: Vec::new(),
        };
        let views = views(&scan);
        assert_eq!(views.len(), 1);
        assert!(matches!(views[0].verdict, Verdict::Held { masters: 2, .. }));
        assert_eq!(views[0].holding, [0, 2]);
    }

    #[test]
    fn waiters_are_merged_across_masters_in_ticket_order() {
        let mut one = read(Some("a"));
        one.queue.len = 2;
        one.queue.waiters = vec![waiter("w2", 8, 2_000_000), waiter("w1", 7, 2_000_000)];
        let mut two = read(Some("a"));
        two.queue.len = 1;
        // Lapsed here by this master's clock.
        two.queue.waiters = vec![waiter("w1", 7, 999_999)];
        let scan = Scan {
            masters: Vec::new(),
            locks: vec![FoundLock {
                key: "k".into(),
                reads: vec![Ok(one), Ok(two), Ok(read(None))],
            }],
            strays: Vec::new(),
        };
        let view = &views(&scan)[0];
        assert_eq!(view.queued, 2);
        let ids: Vec<(&str, usize, usize)> = view
            .waiters
            .iter()
            .map(|w| (w.id.as_str(), w.masters, w.live))
            .collect();
        assert_eq!(ids, [("w1", 2, 1), ("w2", 1, 1)]);
        let record = view.waiters[0].record.as_ref().unwrap();
        assert_eq!(record.command, "job w1");
        assert_eq!(record.since_ms, Some(5));
    }

    #[test]
    fn waiter_records_are_read_leniently() {
        let record = WaiterRecord::parse(r#"{"host":"h","since":12}"#).unwrap();
        assert_eq!(record.host, "h");
        assert_eq!(record.since_ms, Some(12));
        assert_eq!(record.pid, None);
        assert_eq!(WaiterRecord::parse("[1]"), None);
        assert_eq!(WaiterRecord::parse("nope"), None);
    }
}
