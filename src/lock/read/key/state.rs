//! What a key holds, judged once from one read of it ([`KeyRead`]), as `status` judges it: the
//! lock first; a semaphore's slots when no lock is held; the readers when readers hold it.
//! The holders found, whatever their kind, are one list ([`Seen::Held`]), so that a caller
//! compares or tests them alike; and a key that a forced release closed is [`Seen::Revoked`],
//! whatever its kind: the lock's marker on a quorum, or a semaphore whose only counted slots
//! are revoked ones (judged `Held` with no holder by `slot_verdict`, which would otherwise read
//! as held by nobody). Beside it, the key's line (its fair queue), policy, order register and
//! fencing counter, as the same read found them.
//!
//! Judged here for `status --watch` (see `watch`) and re-entrance (`KeyState::holds`).

use std::time::Duration;

use super::KeyRead;
use crate::lock::quorum::outcome::{Inspection, MasterState};
use crate::lock::quorum::reader_verdict::judge_readers;
use crate::lock::quorum::slot_verdict::{
    SemaphoreState, SemaphoreVerdict, SlotHolder, judge_slots,
};
use crate::lock::quorum::verdict::{InLine, Verdict, judge, line};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::queue_lua::SHARED_MARKER;
use crate::lock::scripts::revoke::{REVOKED_MARKER, Revocation};
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// How a holder holds the key: as `status` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldAs {
    /// The lock (the writer, with `--shared` about).
    Lock,
    /// A reader's share (`--shared`).
    Shared,
    /// One slot of a semaphore of this limit (`--limit`).
    Semaphore { limit: u32 },
}

/// One holder, as the quorum judges it (a share or a slot on enough masters).
#[derive(Clone, Debug, PartialEq)]
pub struct HolderSeen {
    pub token: String,
    pub held_as: HeldAs,
    /// Its record, if it left one (another Redlock client does not).
    pub holder: Option<Holder>,
    /// On how many masters it holds.
    pub masters: usize,
    /// How long it holds unless renewed, as the read found it (`None`: a key without a TTL).
    pub expires_in: Option<Duration>,
}

/// The key's state at one read: the quorum's verdict, as `status` computes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    Free,
    /// Held by these (one for the lock; the readers; the semaphore's slot holders).
    Held(Vec<HolderSeen>),
    /// The masters answered, and no quorum holds it or is free.
    Split,
    /// Too many masters did not answer to tell.
    Unknown,
    /// Closed by `release --force` on a quorum, until the revoked holders stop or their TTL
    /// ends: nobody holds it, nobody can take it (a semaphore: only revoked slots count, so
    /// nobody holds one; a free slot can still be taken). One record: a semaphore's, whose
    /// slots each keep their own, gathered.
    Revoked(Revocation),
}

/// What a key holds, from one read of every master.
#[derive(Clone, Debug)]
pub struct KeyState {
    pub seen: Seen,
    /// Every master, with why it did not answer (`None`: it answered). A semaphore's: as its
    /// slots were read.
    pub masters: Vec<(Master, Option<NodeError>)>,
    /// The live waiters of the fair queue, in order.
    pub line: Vec<InLine>,
    /// The line's policy, where a master stores one (`--supersede`).
    pub policy: Option<String>,
    /// The highest order that took the lock (`--order`), where one did.
    pub order: Option<u64>,
    /// The fencing counter, where a grant was ever made.
    pub fence: Option<u64>,
}

impl KeyState {
    /// Whether `token` holds the key (a lock, a share or a slot, on its quorum).
    pub fn holds(&self, token: &str) -> bool {
        matches!(&self.seen, Seen::Held(holders) if holders.iter().any(|h| h.token == token))
    }
}

impl KeyRead {
    /// What the key holds, judged as `status` judges it.
    pub fn state(&self) -> KeyState {
        let locks = self.inspections();
        let (seen, masters) = judged(self, &locks);
        KeyState {
            seen,
            masters,
            line: line(&locks),
            policy: locks.iter().find_map(|m| m.policy.clone()),
            order: locks.iter().filter_map(|m| m.order).max(),
            fence: locks.iter().filter_map(|m| m.fence).max(),
        }
    }
}

/// The judgement, and the masters' answers it stands on.
fn judged(read: &KeyRead, locks: &[Inspection]) -> (Seen, Vec<(Master, Option<NodeError>)>) {
    let states: Vec<MasterState> = locks.iter().map(|m| m.state.clone()).collect();
    let seen = match judge(&states) {
        Verdict::Held { token, .. } if token == SHARED_MARKER => {
            let readers = judge_readers(&read.readers());
            if readers.is_empty() {
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
            }
        }
        // The revocation's marker on a quorum: closed, held by nobody.
        Verdict::Held { token, .. } if token == REVOKED_MARKER => locks
            .iter()
            .find_map(|m| m.revocation.clone())
            .map_or(Seen::Unknown, Seen::Revoked),
        Verdict::Held {
            token,
            holder,
            expires_in,
            masters: holding,
        } => Seen::Held(vec![HolderSeen {
            token,
            held_as: HeldAs::Lock,
            holder,
            masters: holding,
            expires_in,
        }]),
        not_held => {
            // Not held as a lock: it may be a semaphore (`--limit`).
            let slots = read.slots();
            let states: Vec<_> = slots.iter().map(|m| m.state.clone()).collect();
            if let Some(semaphore) = judge_slots(&states) {
                let masters = slots
                    .iter()
                    .map(|m| (m.master.clone(), m.state.as_ref().err().cloned()))
                    .collect();
                return (semaphore_seen(semaphore), masters);
            }
            match not_held {
                Verdict::Free => Seen::Free,
                Verdict::Split => Seen::Split,
                _ => Seen::Unknown,
            }
        }
    };
    (seen, reachability(locks))
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

fn reachability(locks: &[Inspection]) -> Vec<(Master, Option<NodeError>)> {
    locks
        .iter()
        .map(|m| match &m.state {
            MasterState::Unreachable(error) => (m.master.clone(), Some(error.clone())),
            _ => (m.master.clone(), None),
        })
        .collect()
}
