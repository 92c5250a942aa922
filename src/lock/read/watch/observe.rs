//! One read of a key, judged as `status` judges it: the lock first; a semaphore's slots when
//! no lock is held; the readers when readers hold it. The holders found, whatever their kind,
//! are one list (see `changes`), so that the watch compares them alike, and a key that a
//! forced release closed is `Seen::Revoked`, whatever its kind: the lock's marker on a quorum,
//! or a semaphore whose only counted slots are revoked ones (judged `Held` with no holder by
//! `slot_verdict`, which a watch would say as `released`).

use std::time::{Duration, Instant};

use super::changes::{HeldAs, HolderSeen, Observation, Seen};
use crate::lock::quorum::outcome::{Inspection, MasterState};
use crate::lock::quorum::reader_verdict::judge_readers;
use crate::lock::quorum::round::Masters;
use crate::lock::quorum::slot_verdict::{
    SemaphoreState, SemaphoreVerdict, SlotHolder, judge_slots,
};
use crate::lock::quorum::verdict::{Verdict, judge, line};
use crate::lock::read::key::read_key;
use crate::lock::scripts::queue_lua::SHARED_MARKER;
use crate::lock::scripts::revoke::{REVOKED_MARKER, Revocation};

/// How many of the first waiters in line the watch listens for: each wake channel costs a
/// connection per master, and a release wakes the first (for readers, the readers at the head
/// together; for a semaphore, as many as slots came free). A hand-off to a waiter further back
/// is seen by the fallback read.
pub(super) const WAITERS_LISTENED: usize = 2;

/// What one read found: the observation, and the tokens of the first waiters in line (whose
/// wake channels announce the next hand-off).
pub(super) struct Read {
    pub observation: Observation,
    pub next_waiters: Vec<String>,
}

/// Reads `key` on every master, as `status` does (one round), waiting at most one node timeout.
pub(super) async fn observe(masters: &Masters, key: &str, node_timeout: Duration) -> Read {
    let at = Instant::now();
    let read = read_key(masters, key, node_timeout).await;
    let locks = read.inspections();
    let next_waiters = line(&locks)
        .into_iter()
        .take(WAITERS_LISTENED)
        .map(|waiter| waiter.token)
        .collect();
    let states: Vec<MasterState> = locks.iter().map(|m| m.state.clone()).collect();
    let verdict = judge(&states);
    let observation = match verdict {
        Verdict::Held { token, .. } if token == SHARED_MARKER => {
            let readers = judge_readers(&read.readers());
            let seen = if readers.is_empty() {
                // The marker on a majority, but no reader's share on one: readers coming or
                // going, as a split.
                Seen::Split
            } else {
                Seen::Held(
                    readers
                        .into_iter()
                        .map(|reader| HolderSeen {
                            token: reader.token,
                            held_as: HeldAs::Shared,
                            holder: reader.holder,
                            masters: reader.masters,
                            expires_in: Some(reader.expires_in),
                        })
                        .collect(),
                )
            };
            Observation {
                seen,
                masters: reachability(&locks),
                at,
                done: at,
            }
        }
        // The revocation's marker on a quorum: closed, held by nobody (see `changes`).
        Verdict::Held { token, .. } if token == REVOKED_MARKER => Observation {
            seen: locks
                .iter()
                .find_map(|m| m.revocation.clone())
                .map_or(Seen::Unknown, Seen::Revoked),
            masters: reachability(&locks),
            at,
            done: at,
        },
        Verdict::Held {
            token,
            holder,
            expires_in,
            masters: holding,
        } => Observation {
            seen: Seen::Held(vec![HolderSeen {
                token,
                held_as: HeldAs::Lock,
                holder,
                masters: holding,
                expires_in,
            }]),
            masters: reachability(&locks),
            at,
            done: at,
        },
        not_held => {
            // Not held as a lock: it may be a semaphore (`--limit`).
            let slots = read.slots();
            let states: Vec<_> = slots.iter().map(|m| m.state.clone()).collect();
            match judge_slots(&states) {
                Some(semaphore) => Observation {
                    seen: semaphore_seen(semaphore),
                    masters: slots
                        .iter()
                        .map(|m| (m.master.clone(), m.state.as_ref().err().cloned()))
                        .collect(),
                    at,
                    done: at,
                },
                None => Observation {
                    seen: match not_held {
                        Verdict::Free => Seen::Free,
                        Verdict::Split => Seen::Split,
                        _ => Seen::Unknown,
                    },
                    masters: reachability(&locks),
                    at,
                    done: at,
                },
            }
        }
    };
    Read {
        observation: Observation {
            done: Instant::now(),
            ..observation
        },
        next_waiters,
    }
}

fn semaphore_seen(semaphore: SemaphoreVerdict) -> Seen {
    let limit = semaphore.limit;
    match semaphore.state {
        // Only revoked slots count (a force took every slot, and no newcomer came): revoked,
        // as a lock or readers closed by a force are, with whom it revoked.
        SemaphoreState::Held if semaphore.holders.is_empty() => {
            revoked_slots(semaphore.revoked).map_or(Seen::Held(Vec::new()), Seen::Revoked)
        }
        SemaphoreState::Held => Seen::Held(
            semaphore
                .holders
                .into_iter()
                .map(|slot| HolderSeen {
                    token: slot.token,
                    held_as: HeldAs::Semaphore { limit },
                    holder: slot.holder,
                    masters: slot.masters,
                    expires_in: Some(slot.expires_in),
                })
                .collect(),
        ),
        SemaphoreState::Free => Seen::Free,
        SemaphoreState::Split => Seen::Split,
        SemaphoreState::Unknown => Seen::Unknown,
    }
}

/// The revocation of a semaphore's revoked slots, as one record, as the lock's and the
/// readers' is: each slot's own record names its one token (see `scripts::slots`), so the
/// tokens are gathered under the first record's who and why, open by the latest `until_ms`.
/// `None` where no slot shows a record.
fn revoked_slots(slots: Vec<SlotHolder>) -> Option<Revocation> {
    let mut records = slots.into_iter().filter_map(|slot| slot.revocation);
    let mut all = records.next()?;
    for record in records {
        all.until_ms = all.until_ms.max(record.until_ms);
        all.revoked.extend(record.revoked);
    }
    Some(all)
}

fn reachability(
    locks: &[Inspection],
) -> Vec<(
    crate::lock::wire::master::Master,
    Option<crate::lock::wire::node::NodeError>,
)> {
    locks
        .iter()
        .map(|m| match &m.state {
            MasterState::Unreachable(error) => (m.master.clone(), Some(error.clone())),
            _ => (m.master.clone(), None),
        })
        .collect()
}
