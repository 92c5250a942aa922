//! Reading the locks a scan found, a batch at a time, for `list`: every lock on every master
//! (a verdict needs all of them), pipelined, by the scan's deadline. The caller reads a batch,
//! reports it and drops it before the next, so memory holds one batch of reads, never all.
//!
//! Overlapping batches (the next one read while the slowest master finishes the current one)
//! was measured and bought nothing: the masters' own work is what the time is made of.

use std::future::Future;
use std::time::Instant;

use futures_util::future::join_all;

use super::reading::Reading;
use super::{FoundLock, Scan, StrayKey, StrayName, Ttl, read};
use crate::lock::quorum::round::Masters;
use crate::lock::scripts::keys;
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// Reads the locks `keys` (a batch of [`Scan::locks`]) on every master at once.
pub(crate) async fn read_locks(masters: &Masters, scan: &Scan, keys: &[String]) -> Vec<FoundLock> {
    // Once per lock, not per master: a key with a `}` but no hash tag costs a search.
    let names: Vec<keys::Names> = keys.iter().map(|key| keys::Names::of(key)).collect();
    let per_master = join_all(masters.nodes.iter().map(|node| {
        join_all(keys.iter().zip(&names).map(|(key, names)| {
            in_time(
                scan.read_deadline,
                node,
                read::read_lock(node, key, names, Reading::scan(scan.max_waiters)),
            )
        }))
    }))
    .await;
    let mut found: Vec<FoundLock> = keys
        .iter()
        .map(|key| FoundLock {
            key: key.clone(),
            reads: Vec::with_capacity(masters.nodes.len()),
        })
        .collect();
    for reads in per_master {
        for (lock, read) in found.iter_mut().zip(reads) {
            lock.reads.push(read);
        }
    }
    found
}

/// Reads the TTL of each of `strays` (from [`Scan::strays`]) on its master.
pub(crate) async fn read_strays(
    masters: &Masters,
    scan: &Scan,
    strays: &[StrayName],
) -> Vec<StrayKey> {
    join_all(strays.iter().map(|stray| async {
        let node = &masters.nodes[stray.master];
        StrayKey {
            master: stray.master,
            name: String::from_utf8_lossy(&stray.name).into_owned(),
            ttl: in_time(scan.read_deadline, node, stray_ttl(node, &stray.name)).await,
        }
    }))
    .await
}

/// `read`, or a timeout of `node` once `deadline` passes.
async fn in_time<T>(
    deadline: Instant,
    node: &Endpoint,
    read: impl Future<Output = Result<T, NodeError>>,
) -> Result<T, NodeError> {
    tokio::time::timeout_at(deadline.into(), read)
        .await
        .unwrap_or_else(|_| Err(node.timed_out()))
}

/// The TTL of a key that no script of ours reads.
async fn stray_ttl(node: &Endpoint, name: &[u8]) -> Result<Ttl, NodeError> {
    let routed_by = String::from_utf8_lossy(name);
    match node.command(&routed_by, &[b"PTTL", name]).await? {
        Reply::Int(ms) => Ok(Ttl::from_pttl(ms)),
        other => Err(NodeError::BadReply(format!("unexpected reply {other}"))),
    }
}
