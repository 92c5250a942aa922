//! What READ tells of each key, for every part of a lock it reads: its time to live (PTTL),
//! its type (TYPE), and the error reading a part gave (`status`'s read only).

use std::time::Duration;

use crate::lock::wire::resp::Reply;

/// A key's time to live, as PTTL tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// No such key (-2).
    Missing,
    /// The key never expires (-1).
    Forever,
    Left(Duration),
}

impl Ttl {
    pub fn from_pttl(ms: i64) -> Ttl {
        match ms {
            -1 => Ttl::Forever,
            ms if ms >= 0 => Ttl::Left(Duration::from_millis(ms as u64)),
            _ => Ttl::Missing,
        }
    }

    pub fn exists(self) -> bool {
        self != Ttl::Missing
    }

    /// The time left, for a key that expires.
    pub fn left(self) -> Option<Duration> {
        match self {
            Ttl::Left(left) => Some(left),
            _ => None,
        }
    }
}

/// PTTL's answer; `None` for anything that is not a number.
pub(super) fn pttl(reply: &Reply) -> Option<Ttl> {
    match reply {
        Reply::Int(ms) => Some(Ttl::from_pttl(*ms)),
        _ => None,
    }
}

/// The error a part of the read gave, where it gave one (`status`'s read, see
/// `read::Reading`).
pub(super) fn refused(reply: Option<&Reply>) -> Option<String> {
    match reply {
        Some(Reply::Error(error)) => Some(error.clone()),
        _ => None,
    }
}

/// TYPE's answer where it is not `wanted` (nor `none`: missing, nor empty: the ACL refused
/// TYPE, so not known): a key written by something else.
pub(super) fn unlike(kind: Option<&Reply>, wanted: &str) -> Option<String> {
    kind.and_then(Reply::text)
        .filter(|kind| kind != wanted && kind != "none" && !kind.is_empty())
}
