//! Who holds a semaphore's slots, judged by a pure function from every master's slots (read
//! in one round by `kinds::semaphore`), like the lock's `verdict`.

use std::time::Duration;

use super::tally::slot_quorum;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::revoke::Revocation;
use crate::lock::scripts::slots::Slots;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// What one master has of a semaphore.
#[derive(Clone, Debug)]
pub struct SlotsInspection {
    pub master: Master,
    pub state: Result<Slots, NodeError>,
}

/// A semaphore's state across all masters.
#[derive(Clone, Debug, PartialEq)]
pub struct SemaphoreVerdict {
    /// The limit its holders agreed on.
    pub limit: u32,
    /// The masters a holder needs.
    pub quorum: usize,
    /// The tokens that hold a slot on a quorum, most masters first.
    pub holders: Vec<SlotHolder>,
    /// The slots revoked by `release --force` (each with its `revocation`), still counted
    /// until their holder stops and says so, or their time ends: those whose own slot is
    /// left on fewer masters than a quorum (they cannot renew), most masters first.
    pub revoked: Vec<SlotHolder>,
    /// How many wait in the key's fair queue (the most any master counts).
    pub waiting: usize,
    pub state: SemaphoreState,
}

/// One holder of a slot.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotHolder {
    pub token: String,
    pub holder: Option<Holder>,
    /// How many masters hold its slot.
    pub masters: usize,
    /// The shortest remaining time among them: after that, fewer than a quorum may hold it
    /// (a revoked slot: the longest, after which no master counts it).
    pub expires_in: Duration,
    /// Who revoked it, where it was revoked (see `revoke`).
    pub revocation: Option<Revocation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemaphoreState {
    /// At least one holder holds a slot on a quorum, or a revoked slot is still counted.
    Held,
    /// No slot anywhere, and too few masters are unreachable to hide a holder.
    Free,
    /// Slots, but none on a quorum (contenders racing, or slots expiring one by one).
    Split,
    /// Too many masters are unreachable to tell.
    Unknown,
}

/// Judges the states of all masters; `None` when no master shows a semaphore at this key
/// (no live slot and no limit), so that the caller can look for a lock instead.
pub fn judge_slots(states: &[Result<Slots, NodeError>]) -> Option<SemaphoreVerdict> {
    let reachable: Vec<&Slots> = states.iter().filter_map(|s| s.as_ref().ok()).collect();
    let unreachable = states.len() - reachable.len();
    // The limit most masters report (they agree unless holders disagreed).
    let mut limits: Vec<u32> = reachable
        .iter()
        .filter_map(|s| s.limit.as_deref()?.parse().ok())
        .collect();
    limits.sort_unstable();
    let limit = limits
        .iter()
        .max_by_key(|l| limits.iter().filter(|m| m == l).count())
        .copied()?;
    let quorum = slot_quorum(states.len(), limit);
    // Each token once: on how many masters its own slot is or its revoked one, on how many
    // its revoked one, and the longest time left among them.
    let mut found: Vec<(SlotHolder, usize, Duration)> = Vec::new();
    for slot in reachable.iter().flat_map(|s| &s.slots) {
        let revoked = usize::from(slot.revocation.is_some());
        match found.iter_mut().find(|(h, ..)| h.token == slot.token) {
            Some((known, revoked_on, longest)) => {
                known.masters += 1;
                *revoked_on += revoked;
                known.expires_in = known.expires_in.min(slot.expires_in);
                *longest = (*longest).max(slot.expires_in);
                known.holder = known.holder.take().or_else(|| slot.holder.clone());
                known.revocation = known.revocation.take().or_else(|| slot.revocation.clone());
            }
            None => found.push((
                SlotHolder {
                    token: slot.token.clone(),
                    holder: slot.holder.clone(),
                    masters: 1,
                    expires_in: slot.expires_in,
                    revocation: slot.revocation.clone(),
                },
                revoked,
                slot.expires_in,
            )),
        }
    }
    let most = found.iter().map(|(h, ..)| h.masters).max().unwrap_or(0);
    let (mut holders, mut revoked) = (Vec::new(), Vec::new());
    for (holder, revoked_on, longest) in found {
        if holder.masters - revoked_on >= quorum {
            holders.push(SlotHolder {
                revocation: None,
                ..holder
            });
        } else if revoked_on > 0 {
            // Counted somewhere until the last of them goes.
            revoked.push(SlotHolder {
                expires_in: longest,
                ..holder
            });
        }
    }
    for list in [&mut holders, &mut revoked] {
        list.sort_by(|a, b| b.masters.cmp(&a.masters).then(a.token.cmp(&b.token)));
    }
    let state = if !holders.is_empty() || !revoked.is_empty() {
        SemaphoreState::Held
    } else if most + unreachable >= quorum && unreachable > 0 {
        SemaphoreState::Unknown
    } else if most == 0 {
        SemaphoreState::Free
    } else {
        SemaphoreState::Split
    };
    Some(SemaphoreVerdict {
        limit,
        quorum,
        holders,
        revoked,
        waiting: reachable.iter().map(|s| s.waiting).max().unwrap_or(0),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::scripts::slots::Slot;

    fn slots(limit: &str, tokens: &[(&str, u64)]) -> Result<Slots, NodeError> {
        Ok(Slots {
            limit: Some(limit.into()),
            is_lock: false,
            waiting: 0,
            slots: tokens
                .iter()
                .map(|(token, ms)| Slot {
                    token: (*token).into(),
                    expires_in: Duration::from_millis(*ms),
                    holder: None,
                    revocation: None,
                })
                .collect(),
        })
    }

    fn down() -> Result<Slots, NodeError> {
        Err(NodeError::Timeout)
    }

    #[test]
    fn holders_on_a_quorum_hold_until_their_shortest_slot() {
        // N = 5, L = 2: q = 4.
        let ab = &[("a", 900), ("b", 500)][..];
        let states = [
            slots("2", ab),
            slots("2", ab),
            slots("2", &[("a", 800), ("c", 100)]),
            slots("2", ab),
            down(),
        ];
        let verdict = judge_slots(&states).expect("a semaphore");
        assert_eq!((verdict.limit, verdict.quorum), (2, 4));
        assert_eq!(verdict.state, SemaphoreState::Held);
        let held = held(&verdict);
        assert_eq!(held, [("a", 4, 800)]);
    }

    /// Each holder the verdict names: its token, on how many masters, and for how long (ms).
    fn held(verdict: &SemaphoreVerdict) -> Vec<(&str, usize, u64)> {
        verdict
            .holders
            .iter()
            .map(|h| (h.token.as_str(), h.masters, h.expires_in.as_millis() as u64))
            .collect()
    }

    #[test]
    fn free_split_unknown_and_no_semaphore_at_all() {
        let none = || {
            Ok(Slots {
                limit: None,
                is_lock: false,
                waiting: 0,
                slots: vec![],
            })
        };
        assert_eq!(judge_slots(&[none(), none(), none()]), None);
        let free = [slots("2", &[]), none(), none()];
        assert_eq!(judge_slots(&free).unwrap().state, SemaphoreState::Free);
        // N = 3, L = 2: q = 3; one slot each on two masters is no holder.
        let split = [slots("2", &[("a", 5)]), slots("2", &[("b", 5)]), none()];
        assert_eq!(judge_slots(&split).unwrap().state, SemaphoreState::Split);
        let unknown = [slots("2", &[("a", 5)]), slots("2", &[("a", 5)]), down()];
        assert_eq!(
            judge_slots(&unknown).unwrap().state,
            SemaphoreState::Unknown
        );
    }

    #[test]
    fn a_revoked_slot_is_counted_apart_until_it_goes() {
        // N = 3, L = 2: q = 3. "a" revoked on two masters (its own slot left on one: it
        // cannot renew), "b" on all three, "c" holds.
        let revocation = crate::lock::scripts::revoke::Revocation {
            by: Holder::this_process(&[]),
            revoked: vec![],
            until_ms: None,
        };
        let revoked = |token: &str, ms: u64| Slot {
            token: token.into(),
            expires_in: Duration::from_millis(ms),
            holder: None,
            revocation: Some(revocation.clone()),
        };
        let mut first = slots("2", &[("a", 100), ("c", 700)]).unwrap();
        first.slots.push(revoked("b", 50));
        let mut second = slots("2", &[("c", 800)]).unwrap();
        second.slots.extend([revoked("a", 900), revoked("b", 40)]);
        let mut third = slots("2", &[("c", 900)]).unwrap();
        third.slots.extend([revoked("a", 300), revoked("b", 60)]);
        let verdict = judge_slots(&[Ok(first), Ok(second), Ok(third)]).expect("a semaphore");
        assert_eq!(verdict.state, SemaphoreState::Held);
        let held = held(&verdict);
        assert_eq!(held, [("c", 3, 700)]);
        assert!(verdict.holders[0].revocation.is_none());
        let gone: Vec<(&str, usize)> = verdict
            .revoked
            .iter()
            .map(|h| (h.token.as_str(), h.masters))
            .collect();
        assert_eq!(gone, [("a", 3), ("b", 3)]);
        // Kept until the longest revoked slot (after its own, shorter one on the first).
        assert_eq!(verdict.revoked[0].expires_in, Duration::from_millis(900));
        assert!(verdict.revoked.iter().all(|h| h.revocation.is_some()));
    }
}
