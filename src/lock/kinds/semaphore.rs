//! A counting semaphore over N independent masters: at most L holders of a key at once
//! (`--limit L`). A holder holds a *slot*; everything else (the round, validity, renewal,
//! release, waiting) is the lock's.
//!
//! **The problem.** Counting holders per master and asking a majority is unsound: with N = 5
//! and L = 2, three clients can each hold a slot on 3 masters (9 slots, and 5 masters have
//! 10), so a majority admits three holders.
//!
//! **The scheme.**
//! 1. Each master keeps at most L live slots per key, each with its own expiry: the slots key
//!    is a sorted set of holder tokens scored by the master's time at which each slot expires
//!    (see `scripts::slots`). The script that takes a slot prunes the expired ones, counts,
//!    and adds ours only below L, atomically.
//! 2. A holder needs slots on q = floor(L·N/(L+1)) + 1 masters ([`slot_quorum`]), taken in one
//!    round like the lock: all masters at once, each under the per-node timeout, decided as
//!    soon as q said yes or q can no longer be reached (`Tally::with_quorum`).
//! 3. Its validity is the lock's: TTL − elapsed − drift, measured on this host's monotonic
//!    clock from the start of the round (`held`). Past it, the holder may not assume it
//!    holds the slot.
//!
//! **Why at most L hold at once.** Suppose L+1 clients each consider themselves a holder at
//! one instant. Each is within its validity, so each of its q masters still has its slot
//! live: the master added the slot after the round started and keeps it a full TTL by its own
//! clock, while the holder stops TTL − drift after the round started (the drift allowance
//! covers clocks that run at slightly different rates). That makes (L+1)·q live slots at that
//! instant, and (L+1)·q > (L+1)·L·N/(L+1) = L·N; but N masters hold at most L·N live slots
//! at any instant. With L = 1, q = floor(N/2) + 1, the majority: the lock's argument is this
//! one's special case.
//!
//! **Per-holder expiry.** A slot ends at its own score, not with the key: every script prunes
//! the members whose time has come before it counts, so a killed holder's slot frees itself
//! one TTL after its last renewal, whatever the other holders do. (A TTL on the key alone
//! would be kept alive by the others' renewals.) The keys themselves get the TTL of their
//! longest slot, so nothing is left without a TTL.
//!
//! **Renewal.** At TTL/3, as the lock: the extension script moves our slot's expiry only where
//! the slot is still live (it never re-creates one), and the renewal counts only if q masters
//! confirmed before the validity ran out; the new validity is measured from the start of the
//! round. A renewal that q masters did not confirm means the slot *may be lost*: a master that
//! did not confirm may have dropped it (expired while we could not reach it, restarted empty,
//! evicted) and given it to another client, and with our slot on fewer than q masters the
//! count above no longer covers us: L others may each legitimately hold q masters. So the
//! supervisor stops the command before the validity ends, exactly as for a lost lock; refused
//! by so many masters that q cannot be reached any more (N − refusals < q), the slot is gone
//! for certain and the command is stopped at once.
//!
//! **Drift and clocks.** The score is the master's wall clock (`TIME`), the same clock Redis
//! expires keys by, so a slot is exactly as exposed to a master's clock jump as a lock key's
//! TTL is (see docs/guarantees-and-limits.md, "Limits"); the holder's own validity never reads a
//! wall clock.
//!
//! **Assumes** what the lock assumes (see `held`), for the slots key:
//! - masters keep it for a full TTL: one that restarts empty or evicts it frees every slot it
//!   held, and L others may then each hold q masters while we count on ours (`doctor`:
//!   *persistence*, *eviction*, *role*);
//! - master clocks do not jump: a slot ends at its score by the master's wall clock, so one
//!   stepped forward prunes slots early (`doctor`: *clock*);
//! - clock rates drift less than the drift factor between this host's monotonic clock (the
//!   validity) and each master's (the score); no `doctor` check measures rates.
//!
//! **One limit per key.** The limit is stored beside the slots; a master whose live slots were
//! taken with another L refuses, and that refusal is an error ([`Conflict::Limit`]), never a
//! wait and never an admission. Holders with different L's cannot both hold: every q is more
//! than half of N (q > L·N/(L+1) ≥ N/2), so their quorums share a master, which refused the
//! later one. The same holds for a key used as a lock: a slot is refused where K exists, the
//! lock where the slots key does, and a majority and a slot quorum share a master.
//!
//! **Waiting** is the lock's fair queue (`queue`), with one rule changed for L slots: a
//! newcomer takes a free slot only when the live waiters leave one for it (slots taken +
//! waiters < L), a waiter takes one when its position does (slots taken + position < L), and a
//! release wakes the waiters the free slots now leave room for. The queue only ever adds
//! refusals, so it takes nothing from the argument above; it decides who may *try*, in arrival
//! order. Its own quorum stays the majority (tickets, places), whatever q the slots need.
//!
//! **The price** is fault tolerance: N − q masters may be down (see docs/semaphore.md). With
//! q = N none may.
//!
//! A slot's token says what it is: `sem<L>-<32 hex digits>` (`tokens::slot_token`), so that
//! `release`, `extend` and the `--renew-while` renewer, given only the key and the token,
//! treat it as a slot of that limit.

use super::exclusive::{extension, leaving};
use super::fence::FenceError;
use super::held::Kind;
use super::seam::{
    Call, Giving, Holding, InTheWay, Leaving, Line, Newcomer, Queued, Seam, Seat, Wait,
};
use super::slots::{self, release_slot};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::Round;
use crate::lock::scripts::calls::args::{ExtendSlot, LeaveSlot, Recorded, SlotTurn, Take};
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::slots::slot_turn;
use crate::lock::scripts::{EXTEND_SLOT, LEAVE_SLOT, WAIT_SLOT};

/// A slot's seam (see `seam`): the slot quorum, the slots' scripts with the limit among
/// their arguments (its rounds in `slots`), room for
/// L at the head of the line, and a refusal means the semaphore is full.
pub(in crate::lock) struct Slot {
    pub limit: u32,
}

impl Seam for Slot {
    fn kind(&self) -> Kind {
        Kind::Slot { limit: self.limit }
    }

    fn newcomer(&self, key: &str, take: Take, history: String, tickets: usize) -> Newcomer {
        slots::newcomer(self.limit, key, take, history, tickets)
    }

    fn conflict(&self, round: &Round, _won: bool) -> Option<Conflict> {
        slots::conflict_of(self.limit, round)
    }

    fn refused(&self, round: &Round, tickets_needed: usize) -> (AttemptFailure, Option<u64>) {
        slots::refused(self.limit, round, tickets_needed)
    }

    fn release(&self, holding: Holding<'_>, purpose: Purpose, seat: Option<&Seat<'_>>) -> Giving {
        Giving {
            call: release_slot(holding, self.limit, purpose, seat),
            trace: "release slot",
        }
    }

    /// WAIT_SLOT: the lock's turn arguments, with the limit; first come, first served (a
    /// slot never supersedes).
    fn wait(&self, queued: &Queued, join: bool, _: &Names, _: Line) -> Wait {
        let args = Recorded {
            args: SlotTurn {
                args: queued.turn(join),
                limit: self.limit.to_string(),
            },
            history: queued.history.spec(),
        };
        Wait {
            call: Call::new(&WAIT_SLOT, args),
            room: self.limit as usize,
            decode: slot_turn,
        }
    }

    /// Full. Who holds the slots is not in a turn's answer: it says nothing rather than guess.
    /// A turn that may have taken a slot somewhere, even where the round did not wait for the
    /// answer, gives it back (the next turn would renew it, but a waiter that gives up now
    /// would leave it to its TTL).
    fn refused_turn(&self, in_the_way: InTheWay, first: bool) -> (AttemptFailure, bool) {
        let full = AttemptFailure::Full {
            limit: self.limit,
            holders: Vec::new(),
            frees_in: in_the_way.expires_in,
            waiters: in_the_way.waiters,
            place: (in_the_way.place > 0).then_some(in_the_way.place),
        };
        (full, first)
    }

    /// A slot's turn is refused by the slots, never by a holder of K.
    fn outsiders(&self) -> bool {
        false
    }

    fn extend(&self, token: &str, ms: &[u8]) -> Call {
        let args = ExtendSlot {
            args: extension(token, ms),
            limit: self.limit.to_string(),
        };
        Call::new(&EXTEND_SLOT, args)
    }

    fn leave(&self, token: &str, names: &Names, _: Leaving<'_>) -> Call {
        let args = LeaveSlot {
            args: leaving(token, names),
            limit: self.limit.to_string(),
        };
        Call::new(&LEAVE_SLOT, args)
    }

    /// A slot is one of up to L held at once (see `fence`).
    fn fence(&self) -> Result<(), FenceError> {
        Err(FenceError::NotExclusive { limit: self.limit })
    }
}
