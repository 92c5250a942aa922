//! Reading one key's every part on one master, in one script (READ, see `scripts::scan`): the
//! lock key, its holder record, its fencing counter, its queue, its readers, its semaphore's
//! slots, and the master's clock. How far it reads, and whether it reads the counter's value
//! (which the scan must not, see `scan`), is a [`Reading`] (`reading`): `list`'s, or `status`'s.

use std::time::Duration;

pub use super::fields::Ttl;
use super::fields::{pttl, refused, unlike};
use super::reading::Reading;
use super::slots::{SlotsRead, slots_read};
use crate::lock::quorum::outcome::MasterState;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::lock::counter;
use crate::lock::scripts::replies::{QueuedWaiter, queued_waiters};
use crate::lock::scripts::shared::{Share, shares_of};
use crate::lock::scripts::{READ, keys};
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// One lock's keys on one master.
#[derive(Clone, Debug, PartialEq)]
pub struct LockRead {
    /// The master's clock (`TIME`), in milliseconds since the Unix epoch.
    pub now_ms: u64,
    /// The token in the lock key, if the key is there.
    pub token: Option<String>,
    pub ttl: Ttl,
    /// The holder record as stored (JSON naming its token), whichever token it names.
    pub holder_record: Option<String>,
    pub holder_ttl: Ttl,
    /// The fencing counter, if there is one.
    pub fence: Option<FenceRead>,
    pub queue: QueueRead,
    /// The readers of a shared lock (`--shared`).
    pub readers: ReadersRead,
    /// The order register (`--order`): the highest order that took the lock here.
    pub order: Option<u64>,
    /// The line's policy (`--supersede`), where one is stored.
    pub policy: Option<String>,
    /// The semaphore at this key (`--limit`), where any of its keys exists.
    pub slots: Option<SlotsRead>,
    /// The history's newest events here, as stored (see `scripts::history`; `read::history`
    /// merges them).
    pub history: Vec<Vec<u8>>,
}

/// A shared lock's readers on one master (see `shared`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadersRead {
    /// Live shares, by the master's clock.
    pub live: u64,
    /// The readers key and their records' key, where they exist.
    pub ttl: Option<Ttl>,
    pub holders_ttl: Option<Ttl>,
    /// The first live shares (as many as waiters are read).
    pub shares: Vec<Share>,
    /// The type of the readers key and of their records' key where it is not the one redlock
    /// writes (a sorted set, a hash): written by something else.
    pub wrong_type: Option<String>,
    pub holders_wrong_type: Option<String>,
    /// Shares scored past any TTL redlock gives: not redlock's (see `scripts`).
    pub foreign: u64,
    /// The master's error reading them (`status`'s read only: a key of another type; the scan
    /// reads such a key as missing).
    pub refused: Option<String>,
}

/// A fencing counter, read without touching it (its value aside, see `value`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceRead {
    pub ttl: Ttl,
    /// How long since anything read or wrote it (`OBJECT IDLETIME`); `None` where the master
    /// does not track it (an LFU eviction policy).
    pub idle: Option<Duration>,
    /// What it is where it is not a number redlock can read (another type, or text), as the
    /// master's `TYPE` and `OBJECT ENCODING` tell it.
    pub malformed: Option<Malformed>,
    /// Its value where the read took it (always for `status`; for `list` only where it is
    /// stored as text, to judge it): the number, or why there is none (GET's error, or text
    /// that is not a number). `status` shows the error as the counter's problem.
    pub value: Option<Result<u64, String>>,
}

/// Why a fencing counter stored as text has no value.
pub const TEXT_COUNTER: &str = "it holds text that is not a number";

/// A fencing counter that is not a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A key of another type (`TYPE`'s answer).
    Type(String),
    /// A string that is not a whole number.
    Text,
}

/// A lock's queue on one master (see `queue` for the layout).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueRead {
    /// Waiters in the queue.
    pub len: u64,
    pub ttl: Option<Ttl>,
    pub lease_ttl: Option<Ttl>,
    pub waiters_ttl: Option<Ttl>,
    pub tickets_ttl: Option<Ttl>,
    /// The first waiters by ticket (decoded as for `status`).
    pub waiters: Vec<QueuedWaiter>,
    /// Waiters whose lease lapsed (at or before the master's time): (id, lease end in ms).
    pub lapsed: Vec<(String, u64)>,
}

impl LockRead {
    /// This master's state of the lock key: the holder record counts only for the token now in
    /// the key (see `holder`).
    pub fn state(&self) -> MasterState {
        match &self.token {
            None => MasterState::Free,
            Some(token) => MasterState::Held {
                token: token.clone(),
                ttl: self.ttl.left(),
                holder: self
                    .holder_record
                    .as_deref()
                    .and_then(|r| Holder::from_record(r.as_bytes(), token.as_bytes())),
            },
        }
    }
}

/// Runs the read script for lock `key` on `node`.
pub(super) async fn read_lock(
    node: &Endpoint,
    key: &str,
    names: &keys::Names,
    reading: Reading,
) -> Result<LockRead, NodeError> {
    let layout = names.keys(key);
    decoded(READ.run(node, &layout, &reading.args()).await)
}

/// READ's answer, decoded.
pub(in crate::lock) fn decoded(answer: Result<Reply, NodeError>) -> Result<LockRead, NodeError> {
    let reply = answer?;
    decode(&reply).ok_or_else(|| NodeError::BadReply(format!("unexpected reply {reply}")))
}

fn decode(reply: &Reply) -> Option<LockRead> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    let [
        seconds,
        micros,
        token,
        ttl,
        holder,
        holder_ttl,
        fence,
        queue_len,
        queue_ttl,
        lease_ttl,
        waiters_ttl,
        tickets_ttl,
        waiters @ Reply::Array(_),
        Reply::Array(lapsed),
        rest @ ..,
    ] = fields.as_slice()
    else {
        return None;
    };
    let now_ms = number(seconds)? * 1000 + number(micros)? / 1000;
    let fence = match fence {
        Reply::Array(parts) => match parts.as_slice() {
            [Reply::Int(ttl), Reply::Int(idle), kind @ ..] => Some(FenceRead {
                ttl: Ttl::from_pttl(*ttl),
                idle: u64::try_from(*idle).ok().map(Duration::from_secs),
                value: match kind {
                    [_, _, Reply::Error(error)] => Some(Err(error.clone())),
                    [_, _, value] => Some(counter(value).ok_or_else(|| TEXT_COUNTER.to_string())),
                    _ => None,
                },
                malformed: match kind {
                    // '' where the ACL refused TYPE or OBJECT: not known, so not a finding.
                    [kind, _, rest @ ..] => match (kind.text()?.as_str(), rest) {
                        ("", _) => None,
                        // Stored as a number (`int`), or its encoding not known: no value read.
                        ("string", []) => None,
                        // Judged by its value, as `--fence` reads it: the encoding of a number
                        // is the server's choice (Valkey 9 keeps a script's SET as `embstr`).
                        // (A GET the ACL refused reads as nil: 0, no finding.)
                        ("string", [value]) => counter(value).is_none().then_some(Malformed::Text),
                        ("string", _) => return None,
                        (other, _) => Some(Malformed::Type(other.to_string())),
                    },
                    _ => None,
                },
            }),
            _ => return None,
        },
        _ => None,
    };
    let len = match queue_len {
        Reply::Int(n) => u64::try_from(*n).ok()?,
        _ => return None,
    };
    let present = |reply: &Reply| Some(pttl(reply)?).filter(|t| t.exists());
    let queue = QueueRead {
        len,
        ttl: present(queue_ttl),
        lease_ttl: present(lease_ttl),
        waiters_ttl: present(waiters_ttl),
        tickets_ttl: present(tickets_ttl),
        waiters: queued_waiters(Some(waiters), Some(now_ms)),
        lapsed: lapsed
            .chunks(2)
            .map(|pair| match pair {
                [id, lease] => Some((id.text()?, score(lease)?)),
                _ => None,
            })
            .collect::<Option<_>>()?,
    };
    let (readers, order, policy, slots, history) = match rest {
        [] => (&[][..], None, None, None, None),
        [readers, after @ ..] => (
            std::slice::from_ref(readers),
            after.first(),
            after.get(1),
            after.get(2),
            after.get(3),
        ),
    };
    let history = match history {
        Some(Reply::Array(entries)) => entries
            .iter()
            .filter_map(|entry| entry.bulk().map(<[u8]>::to_vec))
            .collect(),
        _ => Vec::new(),
    };
    let slots = match slots {
        None | Some(Reply::Nil) => None,
        Some(slots) => Some(slots_read(slots)?),
    };
    let policy = policy.and_then(Reply::text);
    let order = order
        .and_then(Reply::text)
        .and_then(|text| text.parse().ok());
    let readers = match readers {
        [] => ReadersRead::default(),
        [Reply::Array(readers)] => match readers.as_slice() {
            [Reply::Int(live), ttl, holders_ttl, shares @ ..] => {
                let (flat, kinds): (&[Reply], &[Reply]) = match shares {
                    [] => (&[], &[]),
                    [Reply::Array(flat), kinds @ ..] => (flat, kinds),
                    _ => return None,
                };
                ReadersRead {
                    live: u64::try_from(*live).ok()?,
                    ttl: present(ttl),
                    holders_ttl: present(holders_ttl),
                    shares: shares_of(flat),
                    wrong_type: unlike(kinds.first(), "zset"),
                    holders_wrong_type: unlike(kinds.get(1), "hash"),
                    foreign: match kinds.get(2) {
                        Some(Reply::Int(n)) => u64::try_from(*n).unwrap_or(0),
                        _ => 0,
                    },
                    refused: refused(kinds.get(3)),
                }
            }
            _ => return None,
        },
        _ => return None,
    };
    Some(LockRead {
        now_ms,
        token: token.text(),
        ttl: pttl(ttl)?,
        holder_record: holder.text(),
        holder_ttl: pttl(holder_ttl)?,
        fence,
        queue,
        readers,
        order,
        policy,
        slots,
        history,
    })
}

/// A decimal in a bulk string (TIME's fields).
fn number(reply: &Reply) -> Option<u64> {
    reply.text()?.trim().parse().ok()
}

/// A sorted-set score (a double, as text) as a whole number.
fn score(reply: &Reply) -> Option<u64> {
    let value: f64 = reply.text()?.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value as u64)
}

/// READ's answer for a key with nothing there, its fields to change (for the tests of what
/// reads it: here, and `read::key`).
#[cfg(test)]
pub(in crate::lock) fn empty_lock() -> Vec<Reply> {
    vec![
        Reply::Bulk(b"1700000000".to_vec()),
        Reply::Bulk(b"250999".to_vec()),
        Reply::Nil,
        Reply::Int(-2),
        Reply::Nil,
        Reply::Int(-2),
        Reply::Nil,
        Reply::Int(0),
        Reply::Int(-2),
        Reply::Int(-2),
        Reply::Int(-2),
        Reply::Int(-2),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn decodes_the_readers_of_a_shared_lock() {
        let mut fields = empty_lock();
        fields[2] = bulk("__redlock:shared");
        fields.push(Reply::Array(vec![
            Reply::Int(3),
            Reply::Int(2500),
            Reply::Int(-1),
        ]));
        let read = decode(&Reply::Array(fields)).unwrap();
        assert_eq!(
            read.readers,
            ReadersRead {
                live: 3,
                ttl: Some(Ttl::Left(Duration::from_millis(2500))),
                holders_ttl: Some(Ttl::Forever),
                shares: Vec::new(),
                ..ReadersRead::default()
            }
        );
        assert_eq!(
            read.state(),
            crate::lock::MasterState::Held {
                token: "__redlock:shared".into(),
                ttl: None,
                holder: None,
            }
        );
    }

    #[test]
    fn decodes_a_free_lock() {
        let read = decode(&Reply::Array(empty_lock())).unwrap();
        assert_eq!(read.now_ms, 1_700_000_000_250);
        assert_eq!(read.token, None);
        assert_eq!(read.ttl, Ttl::Missing);
        assert_eq!(read.fence, None);
        assert_eq!(read.queue, QueueRead::default());
    }

    #[test]
    fn decodes_a_held_lock_with_a_queue_and_a_counter() {
        let mut fields = empty_lock();
        fields[2] = bulk("tok");
        fields[3] = Reply::Int(5000);
        fields[4] = bulk("{\"token\":\"tok\"}");
        fields[5] = Reply::Int(5000);
        fields[6] = Reply::Array(vec![Reply::Int(-1), Reply::Int(86_400)]);
        fields[7] = Reply::Int(2);
        fields[8] = Reply::Int(9000);
        fields[9] = Reply::Int(-1);
        let record = r#"{"host":"h","pid":7,"user":"u","command":"c","since_ms":1}"#;
        fields[12] = Reply::Array(vec![
            bulk("w1"),
            bulk("7"),
            bulk("1700000009000"),
            bulk(record),
            bulk("w2"),
            bulk("8"),
            Reply::Nil,
            Reply::Nil,
        ]);
        fields[13] = Reply::Array(vec![bulk("w0"), bulk("1699999999000")]);
        let read = decode(&Reply::Array(fields)).unwrap();
        assert_eq!(read.token.as_deref(), Some("tok"));
        assert_eq!(read.ttl, Ttl::Left(Duration::from_secs(5)));
        assert_eq!(
            read.fence,
            Some(FenceRead {
                ttl: Ttl::Forever,
                idle: Some(Duration::from_secs(86_400)),
                malformed: None,
                value: None,
            })
        );
        assert_eq!(read.queue.len, 2);
        assert_eq!(read.queue.ttl, Some(Ttl::Left(Duration::from_secs(9))));
        assert_eq!(read.queue.lease_ttl, Some(Ttl::Forever));
        assert_eq!(read.queue.waiters_ttl, None);
        let first = &read.queue.waiters[0];
        assert_eq!((first.token.as_str(), first.ticket), ("w1", 7));
        // By the master's clock, 250 ms past the second.
        assert_eq!(first.lapses_in, Some(Duration::from_millis(8_750)));
        assert_eq!(first.holder.as_ref().map(|h| h.pid), Some(7));
        assert_eq!(read.queue.waiters[1].lapses_in, None);
        assert_eq!(read.queue.waiters[1].holder, None);
        assert_eq!(read.queue.lapsed, [("w0".to_string(), 1_699_999_999_000)]);
    }

    #[test]
    fn an_idle_time_the_master_does_not_track_is_unknown() {
        let mut fields = empty_lock();
        fields[6] = Reply::Array(vec![Reply::Int(-1), Reply::Int(-1)]);
        let read = decode(&Reply::Array(fields)).unwrap();
        assert_eq!(read.fence.unwrap().idle, None);
    }

    #[test]
    fn anything_else_is_refused() {
        assert_eq!(decode(&Reply::Int(1)), None);
        let mut short = empty_lock();
        short.pop();
        assert_eq!(decode(&Reply::Array(short)), None);
        let mut odd = empty_lock();
        odd[0] = bulk("soon");
        assert_eq!(decode(&Reply::Array(odd)), None);
    }

    #[test]
    fn pttl_values() {
        assert_eq!(Ttl::from_pttl(-2), Ttl::Missing);
        assert_eq!(Ttl::from_pttl(-1), Ttl::Forever);
        assert_eq!(Ttl::from_pttl(0), Ttl::Left(Duration::ZERO));
        assert_eq!(Ttl::Forever.left(), None);
        assert!(!Ttl::Missing.exists());
    }
}
