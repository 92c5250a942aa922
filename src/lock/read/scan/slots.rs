//! A semaphore's keys (`--limit`) as READ gives them on one master: its limit, how
//! many slots are live, the first of them (revoked ones among them, under their renamed
//! member, see `scripts::slots`), and what `list --problems` checks (each key's TTL and type).

use super::fields::{Ttl, pttl, refused, unlike};
use crate::lock::scripts::slots::{Slot, slots_of};
use crate::lock::wire::resp::Reply;

/// A semaphore on one master.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlotsRead {
    /// The limit, as stored (`None`: no limit key).
    pub limit: Option<String>,
    /// Live slots by the master's clock, revoked ones included (a ZCOUNT: all of them).
    pub live: u64,
    /// The slots key, the limit key and the slot records' key, where each exists.
    pub ttl: Option<Ttl>,
    pub limit_ttl: Option<Ttl>,
    pub holders_ttl: Option<Ttl>,
    /// The first live slots by expiry (as many as waiters are read).
    pub slots: Vec<Slot>,
    /// The type of the slots key and of their records' key where it is not the one redlock
    /// writes (a sorted set, a hash): written by something else.
    pub wrong_type: Option<String>,
    pub holders_wrong_type: Option<String>,
    /// Slots scored past any TTL redlock gives: not redlock's (see `scripts`).
    pub foreign: u64,
    /// The master's error reading them (`status`'s read only: a key of another type; the scan
    /// reads such a key as missing).
    pub refused: Option<String>,
}

/// Decodes READ's slots part; `None` for anything that is not one.
pub(super) fn slots_read(reply: &Reply) -> Option<SlotsRead> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    let [
        limit,
        Reply::Int(live),
        ttl,
        limit_ttl,
        holders_ttl,
        Reply::Array(taken),
        kinds @ ..,
    ] = fields.as_slice()
    else {
        return None;
    };
    let present = |reply: &Reply| Some(pttl(reply)?).filter(|t| t.exists());
    Some(SlotsRead {
        limit: limit.text(),
        live: u64::try_from(*live).ok()?,
        ttl: present(ttl),
        limit_ttl: present(limit_ttl),
        holders_ttl: present(holders_ttl),
        slots: slots_of(taken),
        wrong_type: unlike(kinds.first(), "zset"),
        holders_wrong_type: unlike(kinds.get(1), "hash"),
        foreign: match kinds.get(2) {
            Some(Reply::Int(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        refused: refused(kinds.get(3)),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn decodes_live_and_revoked_slots() {
        let record =
            r#"{"host":"h","pid":7,"user":"u","command":"c","since_ms":1,"token":"sem2-a"}"#;
        let reply = Reply::Array(vec![
            bulk("2"),
            Reply::Int(2),
            Reply::Int(9000),
            Reply::Int(9000),
            Reply::Int(-1),
            Reply::Array(vec![
                bulk("sem2-a"),
                Reply::Int(5000),
                bulk(record),
                bulk("__redlock:revoked:sem2-b"),
                Reply::Int(9000),
                Reply::Nil,
            ]),
            bulk("zset"),
            bulk("string"),
            Reply::Int(1),
        ]);
        let read = slots_read(&reply).unwrap();
        assert_eq!(read.limit.as_deref(), Some("2"));
        assert_eq!(read.live, 2);
        assert_eq!(read.holders_ttl, Some(Ttl::Forever));
        assert_eq!(read.slots.len(), 2);
        assert_eq!(read.slots[0].holder.as_ref().map(|h| h.pid), Some(7));
        assert_eq!(read.slots[0].expires_in, Duration::from_secs(5));
        // The revoked one is its holder's token; with no record, no revocation to show.
        assert_eq!(read.slots[1].token, "sem2-b");
        assert_eq!(
            (read.wrong_type, read.holders_wrong_type.as_deref()),
            (None, Some("string"))
        );
        assert_eq!(read.foreign, 1);
        assert_eq!(slots_read(&Reply::Int(0)), None);
    }
}
