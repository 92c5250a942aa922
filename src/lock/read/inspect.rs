//! What every master holds of one key, read as `status` reads it: the lock (with its queue and
//! fencing counter), a semaphore's slots, a lock's readers. Each read waits for every master,
//! up to one node timeout, and takes nothing.
//!
//! The client offers these one at a time (`Redlock::inspect` and its siblings, for `status`
//! and `list`); `watch` reads them in a loop, on the same connections.

use std::time::Duration;

use crate::lock::quorum::outcome::Inspection;
use crate::lock::quorum::reader_verdict::ReadersInspection;
use crate::lock::quorum::round::Masters;
use crate::lock::quorum::slot_verdict::SlotsInspection;
use crate::lock::scripts::calls::Script;
use crate::lock::scripts::calls::args::Nothing;
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::lock::inspected;
use crate::lock::scripts::shared::inspected_readers;
use crate::lock::scripts::slots::inspected_slots;
use crate::lock::scripts::{INSPECT, INSPECT_READERS, INSPECT_SLOTS};
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// The lock's state, its fencing counter and the first waiters of its queue, on every master.
pub(in crate::lock) async fn lock(
    masters: &Masters,
    key: &str,
    node_timeout: Duration,
) -> Vec<Inspection> {
    read(masters, key, ("inspect", &INSPECT), node_timeout)
        .await
        .into_iter()
        .map(|(master, answer)| {
            let found = inspected(Some(answer));
            Inspection {
                master: master.clone(),
                state: found.state,
                fence: found.fence,
                fence_problem: found.fence_problem,
                queue: found.queue,
                waiting: found.waiting,
                order: found.order,
                policy: found.policy,
                revocation: found.revocation,
            }
        })
        .collect()
}

/// The slots of semaphore `key` on every master. Judge them with `judge_slots`.
pub(in crate::lock) async fn slots(
    masters: &Masters,
    key: &str,
    node_timeout: Duration,
) -> Vec<SlotsInspection> {
    read(
        masters,
        key,
        ("inspect slots", &INSPECT_SLOTS),
        node_timeout,
    )
    .await
    .into_iter()
    .map(|(master, answer)| SlotsInspection {
        master: master.clone(),
        state: answer.and_then(inspected_slots),
    })
    .collect()
}

/// The readers of `key` on every master. Judge them with `judge_readers`.
pub(in crate::lock) async fn readers(
    masters: &Masters,
    key: &str,
    node_timeout: Duration,
) -> Vec<ReadersInspection> {
    let script = ("inspect readers", &INSPECT_READERS);
    read(masters, key, script, node_timeout)
        .await
        .into_iter()
        .map(|(master, answer)| ReadersInspection {
            master: master.clone(),
            state: answer.and_then(inspected_readers),
        })
        .collect()
}

/// Runs the read-only `script` (what it is called in the trace, the script) on every master.
async fn read<'a>(
    masters: &'a Masters,
    key: &str,
    (what, script): (&str, &Script<Nothing>),
    node_timeout: Duration,
) -> Vec<(&'a Master, Result<Reply, NodeError>)> {
    let names = Names::of(key);
    let layout = names.keys(key);
    masters
        .read_everywhere(what, key, script, &layout, node_timeout)
        .await
}
