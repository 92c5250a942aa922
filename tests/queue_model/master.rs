//! One master: the keys of one lock, and the queue's Lua scripts, each one atomic step.
//!
//! Each script below follows its Lua line for line, keeping only what decides who may hold,
//! who is first, and who is told: ACQUIRE and RELEASE (src/lock/scripts/lock.rs), WAIT and
//! LEAVE (src/lock/scripts/queue.rs), and the functions they share (`first_live`, `drop`,
//! `eligible_lock`, `wake_newly`: src/lock/scripts/queue_lua.rs). Today's protocol
//! (`Protocol::Today`) is the Lua at the time of issue 23, whose `wake_first` the fix replaced
//! by `wake_newly`.

use super::protocol::{Kind, Rules};
pub use crate::model_kit::Token;
use crate::model_kit::queue::{self, Queue};
pub use crate::model_kit::system::answered;

/// A place in the queue: the sorted set `KEYS[3]` (token scored by ticket; see
/// `model_kit::queue` for its lease).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub ticket: u8,
    pub token: Token,
}

impl queue::Place for Place {
    fn token(&self) -> Token {
        self.token
    }
}

/// What one master stores for the lock.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Master {
    /// `K`: the token that holds the lock here.
    pub lock: Option<Token>,
    /// `K` holds the revocation marker (`release --force`), in place of this token.
    pub revoked: Option<Token>,
    /// Ghost: the marker revoked an earlier partial hold of its token (a turn that took K
    /// here for a moment, whose undo never arrived: `Start::StaleMarker`), not any hold that
    /// token has later.
    pub stale: bool,
    /// The slots key of a semaphore: the tokens (a bit each) that hold a slot here.
    pub slots: u8,
    /// The slots revoked by `release --force`, each still counted under its renamed member
    /// (a bit per revoked token; see `revoke`).
    pub revoked_slots: u8,
    pub queue: Queue<Place>,
    /// `KEYS[6]`, the ticket counter.
    pub counter: u8,
}

/// A script call, as written to one master's connection.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Request {
    /// ACQUIRE with a ticket wanted (every client in the model will wait).
    Acquire,
    /// WAIT with `join` set (a live waiter's place never lapses in the model, so `join` is
    /// always true; see the header).
    Wait { ticket: u8 },
    /// RELEASE (or RELEASE_SLOT); `announce` false is the clean-up of a failed attempt or turn
    /// (`undo`), which for a slot waiter's turn in the fix puts back its place with its ticket
    /// (`reseat`).
    Release { announce: bool, reseat: Option<u8> },
    /// LEAVE.
    Leave,
    /// FORCE (`release --force`; see `revoke`).
    Force,
    /// EXTEND: the holder renews.
    Extend,
    /// SUBSCRIBE to the caller's wake channel, written on the connection that carries its
    /// requests (RESP3; see `kept`): the subscription is that connection's, kept in the
    /// client's `listening`, not in the master's keys.
    Subscribe,
}

/// A master's answer to ACQUIRE or WAIT (RELEASE and LEAVE are never waited for).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answer {
    /// The lock is the caller's here (ACQUIRE's or WAIT's 1).
    Taken,
    /// The fix's ACQUIRE_SLOT for a newcomer that will wait: the slot is the caller's here,
    /// and a ticket was drawn too (`{'taken', ticket}`).
    TakenWithTicket { ticket: u8 },
    /// ACQUIRE refused, and drew this ticket.
    Refused { ticket: u8 },
    /// WAIT kept the place: `first` at position 0; `held` when a lock (with its TTL) is here.
    Waiting { first: bool, held: bool },
    /// FORCE ran (what it found changes nothing the forcer does in the model).
    Forced,
    /// SUBSCRIBE's confirmation (a push, in order with the connection's replies).
    Subscribed,
    /// No answer: the connection broke (`Action::Break`), before the request ran or after.
    Lost,
    /// EXTEND: extended (1), or not (0, or `{'revoked', record}` naming the caller: `revoked`;
    /// `stale`, a ghost: that marker is `Master::stale`).
    Renewed {
        extended: bool,
        revoked: bool,
        stale: bool,
    },
}

/// What running one script did that the rest of the system sees.
pub type Ran = crate::model_kit::system::Ran<Answer>;

impl Master {
    /// Runs `request` from `from`, atomically, as Redis runs a script.
    pub fn run(&mut self, from: Token, request: Request, rules: Rules) -> Ran {
        if request == Request::Subscribe {
            return answered(Answer::Subscribed);
        }
        if let Kind::Slots { limit } = rules.kind {
            return self.run_slot(from, request, rules, limit as usize);
        }
        let fixed = rules.wakes_whoever_it_lets_in();
        match request {
            Request::Force => self.force(rules.force),
            Request::Extend => self.extend(from),
            Request::Acquire => self.acquire(from),
            Request::Wait { ticket } => self.wait(from, ticket),
            Request::Release { announce, .. } if fixed => {
                // RELEASE reads nobody eligible before its writes while K holds the caller's
                // token: nobody but the caller can be, and the caller is never woken. Checked
                // in every state the model reaches.
                assert!(
                    self.lock != Some(from) || self.eligible() & !(1 << from) == 0,
                    "RELEASE's shortcut: with K the caller's, another waiter was eligible"
                );
                self.letting_in(from, Master::eligible, |m| m.release_fixed(from, announce))
            }
            Request::Leave if fixed => {
                self.letting_in(from, Master::eligible, |m| m.leave_fixed(from))
            }
            Request::Release { announce, .. } => self.release_today(from, announce),
            Request::Leave => self.leave_today(from),
            Request::Subscribe => unreachable!("answered above"),
        }
    }

    /// The fix's `eligible_lock` (a bit per token): the first live waiter, when the lock is
    /// free or its own.
    fn eligible(&self) -> u8 {
        match self.first_live() {
            Some(first)
                if self.revoked.is_none() && self.lock.is_none_or(|holder| holder == first) =>
            {
                1 << first
            }
            _ => 0,
        }
    }

    /// The fix's rule around a script's writes (`wake_newly`): the waiters `eligible` after
    /// them and not before are woken, except the caller.
    pub(crate) fn letting_in(
        &mut self,
        caller: Token,
        eligible: impl Fn(&Master) -> u8,
        writes: impl FnOnce(&mut Master) -> Ran,
    ) -> Ran {
        let before = eligible(self);
        let mut ran = writes(self);
        ran.woke = eligible(self) & !before & !(1 << caller);
        ran
    }

    /// The fix's RELEASE (writes only; `letting_in` wakes).
    fn release_fixed(&mut self, from: Token, announce: bool) -> Ran {
        let mut released = self.lock == Some(from);
        if released {
            self.lock = None;
        }
        // ACKNOWLEDGE: a revoked holder's release (or a revoked partial hold's undo) crosses
        // it off, and opens K.
        if self.revoked == Some(from) {
            self.revoked = None;
            self.stale = false;
            released = true;
        }
        if announce {
            self.drop_place(from);
        }
        Ran {
            released,
            ..Ran::default()
        }
    }

    /// The fix's LEAVE and LEAVE_SLOT (writes only).
    pub(crate) fn leave_fixed(&mut self, from: Token) -> Ran {
        self.drop_place(from);
        Ran::default()
    }

    /// Whether `token` has a (live) place here.
    pub fn has_place(&self, token: Token) -> bool {
        self.queue.position(token).is_some()
    }

    /// `token`'s lease ran out here.
    pub fn lapse(&mut self, token: Token) {
        self.drop_place(token);
    }

    /// `first_live`: the first waiter whose lease runs (see `Place`).
    pub(crate) fn first_live(&self) -> Option<Token> {
        self.queue.first().map(|p| p.token)
    }

    /// `drop(token)`.
    pub(crate) fn drop_place(&mut self, token: Token) {
        self.queue.remove(token);
    }

    pub(crate) fn position(&self, token: Token) -> Option<usize> {
        self.queue.position(token)
    }

    /// The place-making part of WAIT and WAIT_SLOT (`join` is always set, see `Request`): the
    /// caller's place, if it has none, and the counter raised to its ticket.
    pub(crate) fn place(&mut self, token: Token, ticket: u8) {
        if self.position(token).is_none() {
            self.queue.insert(Place { ticket, token });
            self.counter = self.counter.max(ticket);
        }
    }

    fn acquire(&mut self, from: Token) -> Ran {
        // `EXISTS KEYS[3] and first_live(now_ms()) ~= false`
        let waiting = self.first_live().is_some();
        // SET NX fails on the marker as on a token.
        if !waiting && self.lock.is_none() && self.revoked.is_none() {
            self.lock = Some(from);
            return answered(Answer::Taken);
        }
        if self.lock == Some(from) {
            return answered(Answer::Taken);
        }
        self.counter += 1;
        answered(Answer::Refused {
            ticket: self.counter,
        })
    }

    fn wait(&mut self, from: Token, ticket: u8) -> Ran {
        self.place(from, ticket);
        let first = self.first_live();
        let current = self.lock;
        let revoked = self.revoked.is_some();
        if first == Some(from) && !revoked && (current.is_none() || current == Some(from)) {
            self.lock = Some(from);
            return answered(Answer::Taken);
        }
        answered(Answer::Waiting {
            first: self.position(from) == Some(0),
            held: current.is_some() || revoked,
        })
    }

    /// Today's RELEASE: it wakes the first waiter where it deleted the lock, and only there.
    fn release_today(&mut self, from: Token, announce: bool) -> Ran {
        let queued = announce && !self.queue.is_empty();
        let released = self.lock == Some(from);
        if released {
            self.lock = None;
        }
        let mut ran = Ran {
            released,
            ..Ran::default()
        };
        if queued {
            self.drop_place(from);
            if released {
                // `wake_first`; with nobody queued, RELEASE announces on the key's release
                // channel instead, which only waiters outside the queue (an earlier redlock)
                // hear: nobody in the model.
                ran.woke = self.wake_first();
            }
        }
        ran
    }

    /// Today's LEAVE (also for a slot waiter): it wakes the next waiter where the leaver was
    /// first and the lock free.
    pub(crate) fn leave_today(&mut self, from: Token) -> Ran {
        let first = self.first_live();
        if self.position(from).is_none() {
            return Ran::default();
        }
        self.drop_place(from);
        let mut ran = Ran::default();
        if first == Some(from) && self.lock.is_none() {
            ran.woke = self.wake_first();
        }
        ran
    }

    /// `wake_first`: the first live waiter (a bit), which the script publishes to.
    fn wake_first(&self) -> u8 {
        self.first_live().map_or(0, |first| 1 << first)
    }
}
