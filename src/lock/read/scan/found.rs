//! A lock the scan found, as each master has it: what `status`'s readings would be (the lock,
//! and the semaphore at the same key), rebuilt from `list`'s one read per master.

use super::MasterScan;
use super::read::LockRead;
use crate::lock::quorum::outcome::{Inspection, MasterState};
use crate::lock::quorum::slot_verdict::SlotsInspection;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::revoke::revocation_in;
use crate::lock::scripts::slots::Slots;
use crate::lock::wire::node::NodeError;

/// A lock named by some key under the prefix, as each master has it.
#[derive(Clone, Debug)]
pub struct FoundLock {
    pub key: String,
    /// By master index: what the read found, or why there is no read.
    pub reads: Vec<Result<LockRead, NodeError>>,
}

impl FoundLock {
    /// What each master has of the lock, as `inspect` tells it to `status`, for
    /// [`crate::lock::judge`] and [`crate::lock::line`]. No fencing counter: the scan does not read
    /// its value (see the module header). The order register it reads.
    pub fn inspections(&self, masters: &[MasterScan]) -> Vec<Inspection> {
        self.reads
            .iter()
            .zip(masters)
            .map(|(read, scan)| {
                let (state, queue, waiting, order, revocation) = match read {
                    Err(error) => (
                        MasterState::Unreachable(error.clone()),
                        Vec::new(),
                        0,
                        None,
                        None,
                    ),
                    Ok(read) => (
                        read.state(),
                        read.queue.waiters.clone(),
                        usize::try_from(read.queue.len).unwrap_or(usize::MAX),
                        read.order,
                        revocation_in(
                            read.token.as_deref().map(str::as_bytes),
                            read.holder_record.as_deref().map(str::as_bytes),
                        ),
                    ),
                };
                Inspection {
                    master: scan.master.clone(),
                    state,
                    fence: None,
                    fence_problem: None,
                    queue,
                    waiting,
                    order,
                    policy: read.as_ref().ok().and_then(|read| read.policy.clone()),
                    revocation,
                }
            })
            .collect()
    }
}

impl FoundLock {
    /// What each master has of the semaphore at this key (`--limit`), as `inspect_slots` tells
    /// it to `status`, for [`crate::lock::judge_slots`]: the first slots each master lists
    /// (`ScanOptions::max_waiters` of them), the queue's length, and whether the key is also
    /// in use as a lock there.
    pub fn slots_inspections(&self, masters: &[MasterScan]) -> Vec<SlotsInspection> {
        self.reads
            .iter()
            .zip(masters)
            .map(|(read, scan)| SlotsInspection {
                master: scan.master.clone(),
                state: match read {
                    Err(error) => Err(error.clone()),
                    Ok(read) => Ok(Slots {
                        limit: read.slots.as_ref().and_then(|s| s.limit.clone()),
                        is_lock: read.token.is_some(),
                        waiting: usize::try_from(read.queue.len).unwrap_or(usize::MAX),
                        slots: read
                            .slots
                            .as_ref()
                            .map(|s| s.slots.clone())
                            .unwrap_or_default(),
                    }),
                },
            })
            .collect()
    }
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
