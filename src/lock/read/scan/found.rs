//! A lock the scan found, as each master has it: the records every judge of a key reads (the
//! lock, the semaphore at the same key, its readers), made from `list`'s one read per master
//! by the code that makes them from `status`'s (see `read::key`).

use super::MasterScan;
use super::read::LockRead;
use crate::lock::quorum::outcome::Inspection;
use crate::lock::quorum::reader_verdict::ReadersInspection;
use crate::lock::quorum::slot_verdict::SlotsInspection;
use crate::lock::read::key::KeyRead;
use crate::lock::wire::node::NodeError;

/// A lock named by some key under the prefix, as each master has it.
#[derive(Clone, Debug)]
pub struct FoundLock {
    pub key: String,
    /// By master index: what the read found, or why there is no read.
    pub reads: Vec<Result<LockRead, NodeError>>,
}

impl FoundLock {
    /// The reads, each with its master, as `status` has its own.
    pub fn read(&self, masters: &[MasterScan]) -> KeyRead {
        KeyRead {
            masters: masters
                .iter()
                .map(|scan| scan.master.clone())
                .zip(self.reads.iter().cloned())
                .collect(),
        }
    }

    /// What each master has of the lock (see [`KeyRead::inspections`]). No fencing counter
    /// where it is a number: the scan does not read its value (see the module header of
    /// `scan`). The order register it reads.
    pub fn inspections(&self, masters: &[MasterScan]) -> Vec<Inspection> {
        self.read(masters).inspections()
    }

    /// What each master has of the semaphore at this key (see [`KeyRead::slots`]): the first
    /// slots each master lists (`ScanOptions::max_waiters` of them).
    pub fn slots_inspections(&self, masters: &[MasterScan]) -> Vec<SlotsInspection> {
        self.read(masters).slots()
    }

    /// What each master has of the key's readers (see [`KeyRead::readers`]): the first shares
    /// each master lists (`ScanOptions::max_waiters` of them).
    pub fn readers_inspections(&self, masters: &[MasterScan]) -> Vec<ReadersInspection> {
        self.read(masters).readers()
    }
}
