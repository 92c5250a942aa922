//! What a Redis Cluster tells a client about where slots live, decoded: redirections (MOVED,
//! ASK, TRYAGAIN) and the slot map (CLUSTER SLOTS). Pure functions, unit-tested without Redis.
//!
//! Addresses are kept as the cluster writes them, `host:port` (an IPv6 host without
//! brackets), with the host filled in where the cluster leaves it out: an empty host (CLUSTER
//! SLOTS of servers that do not know their own address) or `?` (an endpoint the cluster does
//! not know, in MOVED and ASK) means "the node you asked" (see the cluster specification).

use super::super::resp::Reply;

/// How many hash slots a cluster has.
pub(crate) const SLOTS: usize = 16384;

/// What an error reply of a cluster node asks the client to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// `MOVED slot host:port`: the slot lives there now; ask there, and from now on.
    Moved { slot: u16, address: String },
    /// `ASK slot host:port`: the slot is moving there; ask there once, after ASKING.
    Ask { address: String },
    /// `TRYAGAIN ...`: the keys of the request are split between two nodes while their slot
    /// moves; ask again shortly.
    TryAgain,
}

impl Redirect {
    /// The redirection in an error reply (as `NodeError::Server` carries it: its first line),
    /// sent by the node at `asked`; `None` for any other error.
    pub(crate) fn parse(error: &str, asked: &str) -> Option<Redirect> {
        if error.starts_with("TRYAGAIN") {
            return Some(Redirect::TryAgain);
        }
        let mut words = error.split_ascii_whitespace();
        let kind = words.next()?;
        if kind != "MOVED" && kind != "ASK" {
            return None;
        }
        let slot: u16 = words.next()?.parse().ok()?;
        if usize::from(slot) >= SLOTS {
            return None;
        }
        let address = endpoint(words.next()?, asked)?;
        Some(if kind == "MOVED" {
            Redirect::Moved { slot, address }
        } else {
            Redirect::Ask { address }
        })
    }
}

/// Whether an error reply is a redirection (`MOVED` or `ASK`), followable or not: one that
/// [`Redirect::parse`] refuses (an address that does not parse, a slot out of range) must be
/// reported as a redirection that cannot be followed, not as any other error.
pub(crate) fn is_redirection(error: &str) -> bool {
    error.starts_with("MOVED ") || error.starts_with("ASK ")
}

/// `host:port` with an unknown host (empty or `?`) replaced by the host of `asked`; `None`
/// when there is no port that parses.
fn endpoint(written: &str, asked: &str) -> Option<String> {
    let (host, port) = written.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = if host.is_empty() || host == "?" {
        split(asked)?.0
    } else {
        host
    };
    Some(format!("{host}:{port}"))
}

/// `host` and `port` of an address as kept here (`host:port`, the host maybe IPv6).
pub(crate) fn split(address: &str) -> Option<(&str, u16)> {
    let (host, port) = address.rsplit_once(':')?;
    Some((
        host.trim_start_matches('[').trim_end_matches(']'),
        port.parse().ok()?,
    ))
}

/// A range of slots and who serves it, from CLUSTER SLOTS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub first: u16,
    pub last: u16,
    pub primary: Member,
    pub replicas: Vec<Member>,
}

/// A node as CLUSTER SLOTS names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub address: String,
    /// Its node ID (40 hex digits), when the server says (Redis 4.0 and later).
    pub id: Option<String>,
}

/// Decodes a CLUSTER SLOTS answer from the node at `asked`: each element is `[first, last,
/// primary, replica...]`, each node `[host, port, id?, metadata?]`. `None` when the answer
/// is not shaped like that (it is then not used at all).
pub(crate) fn parse_slots(reply: &Reply, asked: &str) -> Option<Vec<Range>> {
    let Reply::Array(ranges) = reply else {
        return None;
    };
    ranges
        .iter()
        .map(|range| {
            let Reply::Array(fields) = range else {
                return None;
            };
            let bound = |value: &Reply| match value {
                Reply::Int(n) => u16::try_from(*n).ok().filter(|&n| usize::from(n) < SLOTS),
                _ => None,
            };
            let first = bound(fields.first()?)?;
            let last = bound(fields.get(1)?)?;
            if first > last {
                return None;
            }
            let mut members = fields[2..].iter().map(|node| member(node, asked));
            let primary = members.next()??;
            let replicas = members.collect::<Option<Vec<_>>>()?;
            Some(Range {
                first,
                last,
                primary,
                replicas,
            })
        })
        .collect()
}

fn member(node: &Reply, asked: &str) -> Option<Member> {
    let Reply::Array(fields) = node else {
        return None;
    };
    let host = fields.first()?.text()?;
    let port = match fields.get(1)? {
        Reply::Int(port) => u16::try_from(*port).ok()?,
        _ => return None,
    };
    Some(Member {
        address: endpoint(&format!("{host}:{port}"), asked)?,
        id: fields.get(2).and_then(Reply::text),
    })
}

/// Slots served by some range, counted once each.
pub(crate) fn covered(ranges: &[Range]) -> usize {
    let mut seen = vec![false; SLOTS];
    for range in ranges {
        for slot in range.first..=range.last {
            seen[usize::from(slot)] = true;
        }
    }
    seen.into_iter().filter(|&served| served).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn redirections_are_read_with_their_address() {
        let parse = |text: &str| Redirect::parse(text, "10.0.0.1:7000");
        assert_eq!(
            parse("MOVED 3999 127.0.0.1:6381"),
            Some(Redirect::Moved {
                slot: 3999,
                address: "127.0.0.1:6381".into()
            })
        );
        assert_eq!(
            parse("ASK 3999 ::1:6381"),
            Some(Redirect::Ask {
                address: "::1:6381".into()
            })
        );
        // An endpoint the cluster does not know: the node that answered.
        assert_eq!(
            parse("MOVED 1 ?:7002"),
            Some(Redirect::Moved {
                slot: 1,
                address: "10.0.0.1:7002".into()
            })
        );
        assert_eq!(
            parse("TRYAGAIN Multiple keys request during rehashing of slot"),
            Some(Redirect::TryAgain)
        );
        for other in [
            "CLUSTERDOWN The cluster is down",
            "MOVED",
            "MOVED 16384 h:1",
            "MOVED x h:1",
            "MOVED 1 h",
            "MOVED 1 h:port",
            "ERR MOVED 1 h:1",
            "OOM command not allowed",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn addresses_split_into_host_and_port() {
        assert_eq!(split("127.0.0.1:7000"), Some(("127.0.0.1", 7000)));
        assert_eq!(split("::1:7000"), Some(("::1", 7000)));
        assert_eq!(split("[::1]:7000"), Some(("::1", 7000)));
        assert_eq!(split("db.example:7000"), Some(("db.example", 7000)));
        assert_eq!(split("nope"), None);
    }

    #[test]
    fn cluster_slots_answers_become_ranges() {
        let node = |host: &str, port: i64, id: &str| {
            Reply::Array(vec![
                bulk(host),
                Reply::Int(port),
                bulk(id),
                Reply::Array(vec![]),
            ])
        };
        let reply = Reply::Array(vec![
            Reply::Array(vec![
                Reply::Int(0),
                Reply::Int(5460),
                node("127.0.0.1", 7000, "a"),
                node("127.0.0.1", 7003, "d"),
            ]),
            Reply::Array(vec![
                Reply::Int(5461),
                Reply::Int(16383),
                node("", 7001, "b"),
            ]),
        ]);
        let ranges = parse_slots(&reply, "10.0.0.9:7001").expect("ranges");
        assert_eq!(ranges.len(), 2);
        assert_eq!(ranges[0].primary.address, "127.0.0.1:7000");
        assert_eq!(ranges[0].replicas[0].id.as_deref(), Some("d"));
        // An empty host: the node that was asked.
        assert_eq!(ranges[1].primary.address, "10.0.0.9:7001");
        assert_eq!(covered(&ranges), SLOTS);
        assert_eq!(covered(&ranges[..1]), 5461);
        // Old servers name a node by host and port only.
        let old = Reply::Array(vec![Reply::Array(vec![
            Reply::Int(0),
            Reply::Int(1),
            Reply::Array(vec![bulk("h"), Reply::Int(1)]),
        ])]);
        assert_eq!(parse_slots(&old, "h:1").unwrap()[0].primary.id, None);
    }

    #[test]
    fn misshapen_cluster_slots_answers_are_not_used() {
        let range = |first: i64, last: i64| {
            Reply::Array(vec![
                Reply::Int(first),
                Reply::Int(last),
                Reply::Array(vec![bulk("h"), Reply::Int(1)]),
            ])
        };
        for odd in [
            Reply::Int(1),
            Reply::Array(vec![Reply::Int(1)]),
            Reply::Array(vec![range(5, 4)]),
            Reply::Array(vec![range(0, 16384)]),
            Reply::Array(vec![Reply::Array(vec![Reply::Int(0), Reply::Int(1)])]),
            Reply::Array(vec![Reply::Array(vec![
                Reply::Int(0),
                Reply::Int(1),
                Reply::Array(vec![bulk("h"), bulk("port")]),
            ])]),
        ] {
            assert_eq!(parse_slots(&odd, "h:1"), None, "{odd:?}");
        }
    }
}
