//! How a run's lines name what it holds: `lock "k"`, or a semaphore's slot (`--limit`), so
//! that a stop says what was lost. A `--limit` run revoked by `release --force` lost its slot
//! of a semaphore; calling it a lock sends the reader to look for a lock that is not there.
//! A reader's share (`--shared`) is a share of the lock, and is said as the lock.

use super::StopReason;
use crate::lock::{Kind, Lock};

/// What a supervised run holds, as its lines name it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held<'a> {
    key: &'a str,
    /// `None`: no lock of our own (re-entrance: the enclosing redlock's lines name it).
    kind: Option<Kind>,
}

impl<'a> Held<'a> {
    pub(super) fn of(lock: Option<&'a Lock>) -> Held<'a> {
        Held {
            key: lock.map_or("", Lock::key),
            kind: lock.map(Lock::kind),
        }
    }

    /// The key, for the log's fields; empty without a lock of our own.
    pub(super) fn key(&self) -> &'a str {
        self.key
    }

    /// What a line begins with: `lock "k": `, `semaphore "k": `, or nothing without a lock.
    pub(super) fn context(&self) -> String {
        match self.kind {
            None => String::new(),
            Some(kind) => format!("{} {:?}: ", kind.noun(), self.key),
        }
    }

    /// `lost the lock`, or `lost its slot`: what a lock lost means for this run.
    pub(super) fn lost(&self) -> &'static str {
        self.kind.map_or("lost the lock", Kind::lost)
    }

    /// Why the command is stopped, as this run's lines say it.
    pub(super) fn stop(&self, reason: &StopReason) -> String {
        match reason {
            StopReason::LockLost(why) => format!("{}: {why}", self.lost()),
            StopReason::MaxDuration(_) => reason.to_string(),
        }
    }
}
