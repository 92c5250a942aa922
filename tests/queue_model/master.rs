//! One master: the keys of one lock, and the queue's Lua scripts, each one atomic step.
//!
//! Each script below follows its Lua line for line (src/lock/scripts/lock.rs: ACQUIRE, RELEASE;
//! src/lock/scripts/queue.rs: WAIT, LEAVE and the shared `first_live`, `drop`, `wake_first`),
//! keeping only what decides who may hold, who is first, and who is told.

use super::protocol::{Kind, Rules};

/// A client's token; tokens are never reused, so a client has one for its whole life.
pub type Token = u8;

/// A place in the queue: the sorted set `KEYS[3]` (token scored by ticket). Its lease
/// (`KEYS[4]`) is not kept: a place is there while its lease runs, and gone once it lapsed
/// (`Master::lapse`). A lapsed place the real master still stores is dropped by `first_live`
/// before any script looks at the queue, so it decides nothing: dropping it at once is the
/// same.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub ticket: u8,
    pub token: Token,
}

/// The most places one queue holds in the model (one per client).
const PLACES: usize = 4;

/// The queue, in Redis's order: by ticket, then by token.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Queue([Option<Place>; PLACES]);

impl Queue {
    pub fn iter(&self) -> impl Iterator<Item = &Place> {
        self.0.iter().flatten()
    }

    pub fn first(&self) -> Option<&Place> {
        self.0[0].as_ref()
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// Keeps the places `keep` says to, in order.
    fn retain(&mut self, keep: impl Fn(&Place) -> bool) {
        let mut kept = Queue::default();
        for (slot, place) in kept.0.iter_mut().zip(self.iter().filter(|p| keep(p))) {
            *slot = Some(*place);
        }
        *self = kept;
    }

    /// `ZADD`: the place, in its order.
    pub fn insert(&mut self, place: Place) {
        let at = self
            .iter()
            .take_while(|p| (p.ticket, p.token) < (place.ticket, place.token));
        let at = at.count();
        assert!(
            self.0[PLACES - 1].is_none(),
            "more places than the model allows"
        );
        self.0[at..].rotate_right(1);
        self.0[at] = Some(place);
    }

    fn position(&self, token: Token) -> Option<usize> {
        self.iter().position(|p| p.token == token)
    }
}

/// What one master stores for the lock.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Master {
    /// `K`: the token that holds the lock here.
    pub lock: Option<Token>,
    /// The slots key of a semaphore: the tokens (a bit each) that hold a slot here.
    pub slots: u8,
    pub queue: Queue,
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
}

/// What running one script did that the rest of the system sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ran {
    pub answer: Option<Answer>,
    /// The waiters (a bit each) on whose wake channels it published.
    pub woke: u8,
    /// RELEASE deleted the caller's lock.
    pub released: bool,
}

impl Master {
    /// Runs `request` from `from`, atomically, as Redis runs a script.
    pub fn run(&mut self, from: Token, request: Request, rules: Rules) -> Ran {
        if let Kind::Slots { limit } = rules.kind {
            return self.run_slot(from, request, rules, limit as usize);
        }
        let fixed = rules.wakes_whoever_it_lets_in();
        match request {
            Request::Acquire => self.acquire(from),
            Request::Wait { ticket } => self.wait(from, ticket),
            Request::Release { announce, .. } if fixed => {
                self.letting_in(from, Master::eligible, |m| m.release_fixed(from, announce))
            }
            Request::Leave if fixed => {
                self.letting_in(from, Master::eligible, |m| m.leave_fixed(from))
            }
            Request::Release { announce, .. } => self.release_today(from, announce),
            Request::Leave => self.leave_today(from),
        }
    }

    /// The fix's `eligible_lock` (a bit per token): the first live waiter, when the lock is
    /// free or its own.
    fn eligible(&self) -> u8 {
        match self.first_live() {
            Some(first) if self.lock.is_none_or(|holder| holder == first) => 1 << first,
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
        let released = self.lock == Some(from);
        if released {
            self.lock = None;
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
        self.queue.retain(|p| p.token != token);
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
        if !waiting && self.lock.is_none() {
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
        if first == Some(from) && (current.is_none() || current == Some(from)) {
            self.lock = Some(from);
            return answered(Answer::Taken);
        }
        answered(Answer::Waiting {
            first: self.position(from) == Some(0),
            held: current.is_some(),
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

pub(crate) fn answered(answer: Answer) -> Ran {
    Ran {
        answer: Some(answer),
        ..Ran::default()
    }
}
