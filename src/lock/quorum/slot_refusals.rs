//! What the refusals of one round of slot attempts mean: a conflict to report (the key in use
//! as a lock, or taken with another limit), or a full semaphore, with who holds it, when the
//! first slot frees, and the ticket to queue with when enough masters drew one.

use std::time::Duration;

use super::outcome::{AttemptFailure, Conflict};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::slots::SlotRefusal;

/// The conflict the refusals name, if any: a key in use as a lock, or another limit.
pub(in crate::lock) fn conflict(limit: u32, refusals: &[SlotRefusal]) -> Option<Conflict> {
    refusals.iter().find_map(|refusal| match refusal {
        SlotRefusal::IsLock => Some(Conflict::IsLock),
        SlotRefusal::IsShared => Some(Conflict::IsShared),
        SlotRefusal::Limit(theirs) => Some(Conflict::Limit {
            ours: limit,
            theirs: theirs.clone(),
        }),
        SlotRefusal::Full { .. } => None,
    })
}

/// The failure for an attempt that too many masters refused for want of a free slot: who holds
/// the slots (each holder once), the soonest a slot frees up, the queue; and the ticket, the
/// highest drawn, when at least `tickets_needed` masters drew one (see `queue`).
pub(in crate::lock) fn full(
    limit: u32,
    refusals: Vec<SlotRefusal>,
    granted: Vec<u64>,
    tickets_needed: usize,
) -> (AttemptFailure, Option<u64>) {
    let mut named: Vec<(String, Option<Holder>)> = Vec::new();
    let mut soonest: Option<Duration> = None;
    let mut waiting = 0;
    let mut tickets = granted;
    for refusal in refusals {
        let SlotRefusal::Full {
            holders,
            frees_in,
            extra,
            waiters,
        } = refusal
        else {
            continue;
        };
        if let Some(frees_in) = frees_in {
            soonest = Some(soonest.map_or(frees_in, |s| s.min(frees_in)));
        }
        waiting = waiting.max(waiters);
        tickets.extend(extra);
        for (token, holder) in holders {
            match named.iter_mut().find(|(t, _)| *t == token) {
                Some((_, known)) => *known = known.take().or(holder),
                None => named.push((token, holder)),
            }
        }
    }
    let failure = AttemptFailure::Full {
        limit,
        holders: named,
        frees_in: soonest,
        waiters: waiting,
        place: None,
    };
    let ticket = (tickets.len() >= tickets_needed)
        .then(|| tickets.iter().max().copied())
        .flatten();
    (failure, ticket)
}
