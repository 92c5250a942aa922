//! The rules a run follows: which version of the protocol (today's, src/lock at the time of
//! issue 23, or the fix), and what the clients wait for (the lock, or a slot of a semaphore).

use super::master::Answer;
pub use crate::model_kit::{MAJORITY, MASTERS, TICKETS};

/// Which version of the protocol the model runs.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protocol {
    /// As on main when issue 23 was filed: RELEASE publishes only where it deleted the lock,
    /// to the first live waiter (RELEASE_SLOT only where it removed a slot, to the first
    /// waiters the free slots leave room for); LEAVE where the leaver was first and the lock
    /// is free; an undo publishes nothing; a waiter listens on N - q + 1 masters (q the
    /// majority); a slot's undo does not put back the place its turn gave up; a slot newcomer's
    /// round ends at its first refusal; a woken waiter found first looks again after 1-5 ms.
    Today,
    /// The fix of issue 23 (src/lock/kinds/queue.rs, "Hand-off"): every script that lets a
    /// waiter in on a master (RELEASE, RELEASE_SLOT, their clean-ups, LEAVE) publishes to it there,
    /// "newly eligible"; a waiter listens on q masters (its own quorum); a slot's undo puts its
    /// place back; a slot newcomer's round waits for N - majority + 1 refusals, and every
    /// master that answers draws a waiting newcomer a ticket, one that gives it a slot too;
    /// every failed turn sleeps on a timer.
    Fixed,
}

/// What the clients wait for.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Lock,
    /// A slot of a semaphore of `limit` (see src/lock/kinds/semaphore.rs).
    Slots {
        limit: u8,
    },
}

impl Kind {
    /// How many may hold at once.
    pub fn limit(self) -> usize {
        match self {
            Kind::Lock => 1,
            Kind::Slots { limit } => limit as usize,
        }
    }

    /// How many masters a holder needs: the majority for the lock, floor(L·N/(L+1)) + 1 for
    /// a slot (`tally::slot_quorum`).
    pub fn quorum(self) -> usize {
        match self {
            Kind::Lock => MAJORITY,
            Kind::Slots { limit } => limit as usize * MASTERS / (limit as usize + 1) + 1,
        }
    }
}

/// How a waiter sleeps between turns (`wait_in_line`'s `delay`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sleep {
    /// A prompt retry (today: 1-5 ms after a woken turn that found us first): part of the
    /// hand-off, not a timer the no-lost-wake-up property may rely on.
    Soon,
    /// The first waiter's backoff (10-250 ms, or up to a heartbeat while a lock or slot with
    /// a TTL is in the way): a timer.
    Backoff,
    /// A waiter that is not first renews its place once per heartbeat (1 s): a timer.
    Heartbeat,
}

impl Sleep {
    /// Whether its end is a timer firing (rather than a step of the hand-off).
    pub fn is_timer(self) -> bool {
        self != Sleep::Soon
    }
}

/// What a forced release (`release --force`, src/lock/kinds/revoke.rs) does on a master
/// that holds a token.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Force {
    /// FORCE as built: the token is replaced by the revocation marker, which refuses every
    /// newcomer until the revoked holder's release crosses it off or it expires (after the
    /// holder's validity, a death here).
    Marker,
    /// Known-bad: the key is freed at once, as an operator's `DEL` on every master would.
    FreeAtOnce,
    /// Known-bad: the marker's TTL is shorter than the revoked holder's remaining validity
    /// (the force's own TTL, say, where the holder's was longer): it may run out while the
    /// revoked holder still lives.
    ShortTtl,
    /// Known-bad, on the holder's side: FORCE as built, but a renewal that did not win counts
    /// a revocation naming its token from any master, as before `Lock::granted_by`; a marker
    /// left there by an earlier partial hold of the same token is taken for this hold's.
    CountedFromAnyMaster,
    /// Known-bad, on the holder's side: a revocation counts from every master but those that
    /// refused the round that took the hold (the first fix, 2ce65c6); a master that round did
    /// not wait for may have refused it, keeping an earlier partial hold's marker.
    CountedUnlessRefused,
}

impl Force {
    /// Whether a renewal that did not win counts a revocation in `answer`, the answer from a
    /// master to the round that took the hold (`None`: not heard before that round won).
    /// As built (`renewal`), only where that master gave the hold the lock (or a slot).
    pub fn counts_revocation_from(self, answer: Option<Answer>) -> bool {
        let granted = matches!(answer, Some(Answer::Taken | Answer::TakenWithTicket { .. }));
        let refused = matches!(
            answer,
            Some(Answer::Refused { .. } | Answer::Waiting { .. })
        );
        match self {
            Force::CountedFromAnyMaster => true,
            Force::CountedUnlessRefused => !refused,
            _ => granted,
        }
    }
}

/// The protocol and the kind together: every rule a client or master follows.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rules {
    pub protocol: Protocol,
    pub kind: Kind,
    /// How FORCE revokes, in runs with a forcer.
    pub force: Force,
    /// Each hold keeps the answers it was won with (`Client::won_with`), and a lost renewal
    /// counts a revocation only as `Force::counts_revocation_from` says. Only from a stale
    /// marker's start (`Start::StaleMarker`), the one place where a master that did not give
    /// a hold the lock can hold a marker naming its token; elsewhere every master's counts,
    /// as for a lock rebuilt from its token (`granted_by: None`), which decides alike there
    /// and spares the states that differ only by what a hold won with.
    pub keeps_grants: bool,
}

impl Rules {
    /// The sets of masters (a bit per master) a waiter may subscribe on; `listen_on` draws one.
    pub fn listen_sets(self) -> &'static [u8] {
        let listened = match self.protocol {
            Protocol::Today => MASTERS - MAJORITY + 1,
            Protocol::Fixed => self.kind.quorum(),
        };
        match listened {
            2 => &[0b011, 0b101, 0b110],
            3 => &[0b111],
            _ => unreachable!("3 masters"),
        }
    }

    /// Whether every script that lets a waiter in on a master publishes to it there (the
    /// fix's "notify newly eligible"), rather than today's rules.
    pub fn wakes_whoever_it_lets_in(self) -> bool {
        self.protocol == Protocol::Fixed
    }

    /// Whether a waiter's undo of a slot turn puts back the place the turn gave up.
    pub fn undo_reseats(self) -> bool {
        self.protocol == Protocol::Fixed && self.kind != Kind::Lock
    }

    /// Whether a newcomer's round, with `taken` and `refused` answers of `answered`, is over.
    pub fn newcomer_decided(self, taken: usize, refused: usize, answered: usize) -> bool {
        let quorum = self.kind.quorum();
        let won = taken >= quorum;
        match (self.kind, self.protocol) {
            // The slot's newcomer before the fix: `Until::Decided`, over once the quorum is out of reach.
            (Kind::Slots { .. }, Protocol::Today) => won || refused > MASTERS - quorum,
            // `Until::WonOrRefusedBy` (the fixed slot): won, or refused by enough masters for
            // a ticket, or all answered.
            (Kind::Slots { .. }, _) => won || refused >= TICKETS || answered == MASTERS,
            // `Until::WonOrAllAnswered` (the lock's newcomer that will wait): won, or all
            // answered, so that a refusal from every master needs no undo.
            _ => won || answered == MASTERS,
        }
    }

    /// The sleep after a failed turn that found the waiter `first` somewhere, after a sleep
    /// that a notice ended (`woken`).
    pub fn after_failed_turn(self, first: bool, woken: bool) -> Sleep {
        match (self.protocol, first) {
            (_, false) => Sleep::Heartbeat,
            (Protocol::Today, true) if woken => Sleep::Soon,
            // First: some master has another's lock or full slots (every holder in the model
            // has a holder record): the backoff, or up to a heartbeat (`wakeup::timer`).
            (_, true) => Sleep::Backoff,
        }
    }
}
