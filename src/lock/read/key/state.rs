//! What a key holds, judged once from one read of it ([`KeyRead`]): the one judge that
//! `status`, `list`, `status --watch`, re-entrance and `release` render or test, so that none
//! of them judges by itself and all of them say the same of one picture.
//!
//! The judgement, in the order it decides:
//! - **the lock**: K's own verdict on a quorum ([`KeyState::verdict`]), a holder's token or a
//!   marker's (`scripts::markers`);
//! - **readers**, where K holds the readers' marker on a quorum: the shares on a majority,
//!   judged from the first each master lists, and how many the masters count;
//! - **a revocation**, where K holds the revocation's marker on a quorum, or no token holds
//!   it: the record some master shows (a force that reached a minority revoked nobody, and
//!   the holder keeps the lock);
//! - **a semaphore's slots**, where K is not held as a lock and the masters show a limit.
//!
//! The holders found, whatever their kind, are one list ([`Seen::Held`]), so that a caller
//! compares or tests them alike; and a key that a forced release closed is [`Seen::Revoked`],
//! whatever its kind: the lock's marker on a quorum, or a semaphore whose only counted slots
//! are revoked ones (judged `Held` with no holder by `slot_verdict`, which would otherwise read
//! as held by nobody). Beside it, the key's line (its fair queue), policy, order register,
//! fencing counter and last turn, as the same read found them.

use std::time::Duration;

use super::KeyRead;
use crate::lock::quorum::outcome::{Inspection, MasterState};
use crate::lock::quorum::reader_verdict::{Reader, count_readers, judge_readers};
use crate::lock::quorum::slot_verdict::{
    SemaphoreState, SemaphoreVerdict, SlotHolder, SlotsInspection, judge_slots,
};
use crate::lock::quorum::verdict::{InLine, Verdict, judge, line};
use crate::lock::read::history::Turn;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::markers::Marker;
use crate::lock::scripts::revoke::Revocation;
use crate::lock::scripts::tokens::Kind;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// One holder, as the quorum judges it (a share or a slot on enough masters).
#[derive(Clone, Debug, PartialEq)]
pub struct HolderSeen {
    pub token: String,
    /// What it holds: the lock, a reader's share, a slot.
    pub kind: Kind,
    /// Its record, if it left one (another Redlock client does not).
    pub holder: Option<Holder>,
    /// On how many masters it holds.
    pub masters: usize,
    /// How long it holds unless renewed, as the read found it (`None`: a key without a TTL).
    pub expires_in: Option<Duration>,
}

/// The key's state at one read: who holds it, whatever its kind.
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

/// The readers that hold the key (`--shared`).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadersSeen {
    /// Those with a share on a majority, most masters first (from the first shares each
    /// master lists).
    pub listed: Vec<Reader>,
    /// How many hold, as the masters count them: more than `listed` where a master has more
    /// live shares than the read lists (see `reader_verdict::count_readers`).
    pub count: usize,
}

/// The key used as a semaphore (`--limit`).
#[derive(Clone, Debug)]
pub struct SemaphoreSeen {
    pub verdict: SemaphoreVerdict,
    /// Each master's slots, in the masters' order.
    pub masters: Vec<SlotsInspection>,
}

/// What a key holds, from one read of every master.
#[derive(Clone, Debug)]
pub struct KeyState {
    pub seen: Seen,
    /// K's own verdict as a lock: a majority with a holder's token, or a marker's.
    pub verdict: Verdict,
    /// The masters (by index) that hold the verdict's token where it is held, or any token
    /// where it is not.
    pub holding: Vec<usize>,
    /// Each master's part of K, in the masters' order.
    pub masters: Vec<Inspection>,
    /// Held by readers: K holds their marker on a quorum.
    pub readers: Option<ReadersSeen>,
    /// The revocation record to show: where K holds the revocation's marker on a quorum, or
    /// no token holds it on one, the record some master shows.
    pub revocation: Option<Revocation>,
    /// The key as a semaphore, where it is one: not held as a lock, and its masters show a
    /// semaphore's limit.
    pub semaphore: Option<SemaphoreSeen>,
    /// The live waiters of the fair queue, in order.
    pub line: Vec<InLine>,
    /// The longest queue any master has (lapsed places, and places past those read,
    /// included).
    pub waiting: usize,
    /// The line's policy, where a master stores one (`--supersede`).
    pub policy: Option<String>,
    /// The highest order that took the lock (`--order`), where one did.
    pub order: Option<u64>,
    /// The fencing counter, where a grant was ever made (and the read took its value).
    pub fence: Option<u64>,
    /// The key's newest turn whose end a master recorded (see [`KeyRead::last_turn`]).
    pub last_turn: Option<Turn>,
}

impl KeyState {
    /// Whether `token` holds the key (a lock, a share or a slot, on its quorum).
    pub fn holds(&self, token: &str) -> bool {
        self.holder(token).is_some()
    }

    /// The holder that `token` is, where it holds the key.
    pub fn holder(&self, token: &str) -> Option<&HolderSeen> {
        match &self.seen {
            Seen::Held(holders) => holders.iter().find(|h| h.token == token),
            _ => None,
        }
    }

    /// Every master, with why it did not answer (`None`: it answered); a semaphore's, as its
    /// slots were read.
    pub fn reachability(&self) -> Vec<(Master, Option<NodeError>)> {
        match &self.semaphore {
            Some(semaphore) => semaphore
                .masters
                .iter()
                .map(|m| (m.master.clone(), m.state.as_ref().err().cloned()))
                .collect(),
            None => self
                .masters
                .iter()
                .map(|m| match &m.state {
                    MasterState::Unreachable(error) => (m.master.clone(), Some(error.clone())),
                    _ => (m.master.clone(), None),
                })
                .collect(),
        }
    }

    /// The masters that did not answer, with why.
    pub fn failures(&self) -> Vec<(&Master, &NodeError)> {
        self.masters
            .iter()
            .filter_map(|m| match &m.state {
                MasterState::Unreachable(error) => Some((&m.master, error)),
                _ => None,
            })
            .collect()
    }
}

impl KeyRead {
    /// What the key holds, judged once (see the header).
    pub fn state(&self) -> KeyState {
        let masters = self.inspections();
        let states: Vec<MasterState> = masters.iter().map(|m| m.state.clone()).collect();
        let verdict = judge(&states);
        let marker = match &verdict {
            Verdict::Held { token, .. } => Marker::of(token),
            _ => None,
        };
        let readers = (marker == Some(Marker::Readers)).then(|| {
            let inspections = self.readers();
            let listed = judge_readers(&inspections);
            let count = count_readers(&inspections, listed.len());
            ReadersSeen { listed, count }
        });
        let held = matches!(verdict, Verdict::Held { .. });
        let revocation = match marker {
            Some(Marker::Revoked) => masters.iter().find_map(|m| m.revocation.clone()),
            _ if held => None,
            _ => masters.iter().find_map(|m| m.revocation.clone()),
        };
        let semaphore = (!held)
            .then(|| {
                let slots = self.slots();
                let states: Vec<_> = slots.iter().map(|m| m.state.clone()).collect();
                judge_slots(&states).map(|verdict| SemaphoreSeen {
                    verdict,
                    masters: slots,
                })
            })
            .flatten();
        let seen = match &semaphore {
            Some(semaphore) => semaphore_seen(&semaphore.verdict),
            None => lock_seen(&verdict, marker, readers.as_ref(), revocation.as_ref()),
        };
        KeyState {
            seen,
            holding: holding(&states, &verdict),
            readers,
            revocation,
            semaphore,
            line: line(&masters),
            waiting: masters.iter().map(|m| m.waiting).max().unwrap_or(0),
            policy: masters.iter().find_map(|m| m.policy.clone()),
            order: masters.iter().filter_map(|m| m.order).max(),
            fence: masters.iter().filter_map(|m| m.fence).max(),
            last_turn: self.last_turn(masters.len() / 2 + 1),
            verdict,
            masters,
        }
    }
}

/// Who holds K as a lock: its holder, its readers, or nobody while it is revoked.
fn lock_seen(
    verdict: &Verdict,
    marker: Option<Marker>,
    readers: Option<&ReadersSeen>,
    revocation: Option<&Revocation>,
) -> Seen {
    match (verdict, marker) {
        // The marker on a majority, but no reader's share on one: readers coming or going, as
        // a split.
        (Verdict::Held { .. }, Some(Marker::Readers)) => match readers {
            Some(readers) if !readers.listed.is_empty() => Seen::Held(
                readers
                    .listed
                    .iter()
                    .map(|reader| HolderSeen {
                        token: reader.token.clone(),
                        kind: Kind::Reader,
                        holder: reader.holder.clone(),
                        masters: reader.masters,
                        expires_in: Some(reader.expires_in),
                    })
                    .collect(),
            ),
            _ => Seen::Split,
        },
        // The revocation's marker on a quorum: closed, held by nobody.
        (Verdict::Held { .. }, Some(Marker::Revoked)) => {
            revocation.cloned().map_or(Seen::Unknown, Seen::Revoked)
        }
        (
            Verdict::Held {
                token,
                holder,
                expires_in,
                masters,
            },
            None,
        ) => Seen::Held(vec![HolderSeen {
            token: token.clone(),
            kind: Kind::Lock,
            holder: holder.clone(),
            masters: *masters,
            expires_in: *expires_in,
        }]),
        (Verdict::Free, _) => Seen::Free,
        (Verdict::Split, _) => Seen::Split,
        _ => Seen::Unknown,
    }
}

/// The masters that hold the verdict's token where it is held, or any token where not.
fn holding(states: &[MasterState], verdict: &Verdict) -> Vec<usize> {
    states
        .iter()
        .enumerate()
        .filter(|(_, state)| match (state, verdict) {
            (MasterState::Held { token, .. }, Verdict::Held { token: held, .. }) => token == held,
            (MasterState::Held { .. }, _) => true,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

fn semaphore_seen(semaphore: &SemaphoreVerdict) -> Seen {
    let limit = semaphore.limit;
    match semaphore.state {
        // Only revoked slots count (a force took every slot, and no newcomer came): revoked,
        // as a lock or readers closed by a force are, with whom it revoked.
        SemaphoreState::Held if semaphore.holders.is_empty() => {
            revoked_slots(&semaphore.revoked).map_or(Seen::Held(Vec::new()), Seen::Revoked)
        }
        SemaphoreState::Held => Seen::Held(
            semaphore
                .holders
                .iter()
                .map(|slot| HolderSeen {
                    token: slot.token.clone(),
                    kind: Kind::Slot { limit },
                    holder: slot.holder.clone(),
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
fn revoked_slots(slots: &[SlotHolder]) -> Option<Revocation> {
    let mut records = slots.iter().filter_map(|slot| slot.revocation.clone());
    let mut all = records.next()?;
    for record in records {
        all.until_ms = all.until_ms.max(record.until_ms);
        all.revoked.extend(record.revoked);
    }
    Some(all)
}
