//! What one master says, typed: the vocabulary the scripts decode their replies into, and the
//! layers above count and report. A reply says nothing of the other masters; judging them
//! together is the quorum's (`quorum`).

use std::time::Duration;

use super::holder::Holder;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// One master's answer to one request, as far as the quorum is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    /// The master did what was asked: set the key, extended it, or deleted it.
    Yes,
    /// The master answered but refused: the key is someone else's, or no longer ours.
    No,
    /// The master answered with an error, or the connection to it failed.
    Error,
}

/// A key used in a way that does not match how its holders use it: never waited for, since
/// waiting would not make it right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// A semaphore slot was asked for, but the key is in use as a lock.
    IsLock,
    /// A semaphore slot was asked for, but readers hold the key as a shared lock (`--shared`).
    IsShared,
    /// The lock was asked for, but the key is in use as a semaphore (of this limit, if known).
    IsSemaphore { limit: Option<String> },
    /// A slot of a semaphore of `ours` was asked for, but its holders agreed on `theirs`.
    Limit { ours: u32, theirs: String },
    /// A waiter asked for the line's other policy (`--supersede`, or first come, first
    /// served): `theirs` is the line's, as a master said it (`supersede`, `fifo`).
    Policy { theirs: String },
}

/// The state of a lock key on one master.
#[derive(Clone, Debug, PartialEq)]
pub enum MasterState {
    Free,
    Held {
        token: String,
        /// Remaining time to live; `None` if the key has no TTL (set by something else).
        ttl: Option<Duration>,
        holder: Option<Holder>,
    },
    Unreachable(NodeError),
}

/// One waiter as a master shows it to `status` and `list` (see READ, `scripts::scan`).
#[derive(Clone, Debug, PartialEq)]
pub struct QueuedWaiter {
    pub token: String,
    pub ticket: u64,
    /// How long its place lasts without a heartbeat (`None`: lapsed, awaiting removal).
    pub lapses_in: Option<Duration>,
    /// Who it is, with `since_ms` = when it started waiting.
    pub holder: Option<Holder>,
}

/// Decodes READ's queue part: {token, ticket, lease, record}* and the master's time.
pub(in crate::lock) fn queued_waiters(
    flat: Option<&Reply>,
    now_ms: Option<u64>,
) -> Vec<QueuedWaiter> {
    let Some(Reply::Array(flat)) = flat else {
        return Vec::new();
    };
    let text = |reply: &Reply| {
        reply
            .bulk()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    flat.chunks(4)
        .filter_map(|w| {
            let token = text(w.first()?)?;
            let ticket = text(w.get(1)?)?.parse::<f64>().ok()? as u64;
            let lease = w.get(2).and_then(text).and_then(|l| l.parse::<f64>().ok());
            let lapses_in = match (lease, now_ms) {
                (Some(lease), Some(now)) if lease as u64 > now => {
                    Some(Duration::from_millis(lease as u64 - now))
                }
                _ => None,
            };
            let holder = w.get(3).and_then(Reply::bulk).and_then(Holder::from_json);
            Some(QueuedWaiter {
                token,
                ticket,
                lapses_in,
                holder,
            })
        })
        .collect()
}
/// Who evicted a waiter, as its mark says: the evictor's ticket and waiting record.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The evictor's ticket (`None`: a mark that is not redlock's).
    pub ticket: Option<u64>,
    /// The evictor's waiting record (host, pid, order, note), where it left one.
    pub by: Option<Holder>,
}

impl Mark {
    /// Reads a mark's text: `<ticket> <record>`.
    pub(in crate::lock) fn parse(text: &[u8]) -> Mark {
        let space = text.iter().position(|&b| b == b' ');
        let (ticket, record) = match space {
            Some(at) => (&text[..at], &text[at + 1..]),
            None => (text, &[][..]),
        };
        Mark {
            ticket: std::str::from_utf8(ticket)
                .ok()
                .and_then(|t| t.parse().ok()),
            by: Holder::from_json(record),
        }
    }
}

/// The mark of a `{'superseded', mark}` answer; `None` for any other answer.
pub(in crate::lock) fn mark(reply: &Reply) -> Option<Mark> {
    match reply {
        Reply::Array(fields) if fields.first().and_then(Reply::bulk) == Some(b"superseded") => {
            Some(Mark::parse(
                fields.get(1).and_then(Reply::bulk).unwrap_or_default(),
            ))
        }
        _ => None,
    }
}

/// The line's policy of a `{'policy', theirs}` answer; `None` for any other answer.
pub(in crate::lock) fn policy_in_use(reply: &Reply) -> Option<String> {
    match reply {
        Reply::Array(fields) if fields.first().and_then(Reply::bulk) == Some(b"policy") => Some(
            fields
                .get(1)
                .and_then(Reply::text)
                .unwrap_or_else(|| "unknown".to_string()),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn a_mark_names_the_evictor() {
        let record = r#"{"host":"ci-7","pid":42,"user":"ci","command":"deploy","since_ms":1,"note":null,"order":103,"token":"t"}"#;
        let reply = Reply::Array(vec![bulk("superseded"), bulk(&format!("17 {record}"))]);
        let mark = mark(&reply).expect("a mark");
        assert_eq!(mark.ticket, Some(17));
        let by = mark.by.expect("a record");
        assert_eq!(
            (by.host.as_str(), by.pid, by.order),
            ("ci-7", 42, Some(103))
        );
        // Written by something else: no record, still a mark.
        let foreign = Mark::parse(b"junk");
        assert_eq!((foreign.ticket, foreign.by), (None, None));
        assert!(super::mark(&bulk("superseded")).is_none());
    }

    #[test]
    fn a_policy_refusal_names_the_lines_policy() {
        let reply = Reply::Array(vec![bulk("policy"), bulk("fifo")]);
        assert_eq!(policy_in_use(&reply).as_deref(), Some("fifo"));
        assert!(policy_in_use(&Reply::Array(vec![bulk("superseded")])).is_none());
    }
}
