//! One master: K, the readers' shares, the queue, and the scripts, each one atomic step,
//! keeping what decides who may hold, who is eligible and who is told: READ_ACQUIRE,
//! READ_WAIT, READ_EXTEND, READ_RELEASE (src/lock/scripts/shared.rs); the writer's ACQUIRE,
//! EXTEND and RELEASE (src/lock/scripts/lock.rs); WAIT and LEAVE (src/lock/scripts/queue.rs);
//! and the functions they share, `first_live`, `drop`, `eligible_lock`, `wake_newly`
//! (src/lock/scripts/queue_lua.rs).

use super::protocol::{Flaw, Mode, Rules};
use crate::model_kit::queue::{self, Queue};
pub use crate::model_kit::system::answered;

/// A client's token. A reader's says so (`shr-...`), which is how the scripts know a place's
/// mode.
pub use crate::model_kit::Token;

/// What `K` holds on one master.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    #[default]
    Free,
    /// The readers' marker (`__redlock:shared`, never a token), PX the longest live share.
    Marker,
    /// A writer of ours, by token.
    Writer(Token),
    /// The foreign client's value.
    Foreign,
    /// The revocation marker (`release --force`), for the holders in `Master::revoked`.
    Revoked,
}

/// A place in the queue: token scored by ticket, and its mode (the token's prefix). Its lease
/// is not kept: a place is there while its lease runs and gone once it lapsed
/// (`Master::lapse`), which is what `first_live` makes of it before any decision.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub ticket: u8,
    pub token: Token,
    pub reader: bool,
}

impl queue::Place for Place {
    fn token(&self) -> Token {
        self.token
    }
}

/// What one master stores for K.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Master {
    pub key: Key,
    /// The readers key: the tokens (a bit each) with a live share here.
    pub readers: u8,
    pub queue: Queue<Place>,
    /// The ticket counter.
    pub counter: u8,
    /// The holders (a bit each) the revocation record names, while K is `Revoked`.
    pub revoked: u8,
}

/// A request, as written to one master's connection; the script is the one of the caller's
/// mode (ACQUIRE or READ_ACQUIRE, and so on).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Request {
    /// ACQUIRE or READ_ACQUIRE, a ticket wanted (every client of ours in the model waits).
    Acquire,
    /// WAIT or READ_WAIT with `join` set (a live waiter's place never lapses in the model).
    Wait { ticket: u8 },
    /// RELEASE or READ_RELEASE; `announce` false is the clean-up of a failed round (the undo),
    /// which keeps the place.
    Release { announce: bool },
    /// LEAVE.
    Leave,
    /// EXTEND or READ_EXTEND: only where the caller's share lives, never re-created.
    Extend,
    /// The foreign client's `SET K x NX PX`.
    Set,
    /// The foreign client's release: `GET K == x`, then `DEL K`.
    Del,
    /// FORCE (src/lock/scripts/revoke.rs).
    Force,
}

/// A master's answer (RELEASE, LEAVE and DEL are never waited for).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answer {
    /// K (or a share of it) is the caller's here: taken, or extended.
    Taken,
    /// ACQUIRE refused, and drew this ticket.
    Refused { ticket: u8 },
    /// WAIT kept the place: `first` when nothing but K keeps the caller out here (for a
    /// reader: only readers ahead), `held` when K exists.
    Waiting { first: bool, held: bool },
    /// SET NX failed, or EXTEND found no share of the caller's.
    Denied,
}

/// What running one script did that the rest of the system sees.
pub type Ran = crate::model_kit::system::Ran<Answer>;

impl Master {
    /// Runs `request` from `from` (of `mode`), atomically, as Redis runs a script.
    pub fn run(&mut self, from: Token, mode: Mode, request: Request, rules: Rules) -> Ran {
        match (request, mode) {
            (Request::Set, _) => self.set_nx(),
            (Request::Force, _) => self.force(rules),
            (Request::Del, _) => {
                if self.key == Key::Foreign {
                    self.key = Key::Free;
                }
                Ran::default()
            }
            (Request::Acquire, Mode::Writer) => self.acquire(from),
            (Request::Acquire, _) => self.read_acquire(from, rules),
            (Request::Wait { ticket }, Mode::Writer) => self.wait(from, ticket),
            (Request::Wait { ticket }, _) => self.read_wait(from, ticket, rules),
            (Request::Extend, _) => answered(if self.holds(from) {
                Answer::Taken
            } else {
                Answer::Denied
            }),
            (Request::Release { announce }, mode) => {
                // The writer's RELEASE reads nobody eligible before its writes while K holds
                // its token: nobody but the caller can be, and the caller is never woken.
                assert!(
                    self.key != Key::Writer(from) || self.eligible() & !(1 << from) == 0,
                    "RELEASE's shortcut: with K the caller's, another waiter was eligible"
                );
                self.letting_in(from, rules, |m| {
                    let released = m.give_up(from, mode, rules);
                    if announce {
                        m.drop_place(from);
                    }
                    Ran {
                        released,
                        ..Ran::default()
                    }
                })
            }
            (Request::Leave, _) => self.letting_in(from, rules, |m| {
                m.drop_place(from);
                Ran::default()
            }),
        }
    }

    /// Whether `token` has its K or its share here.
    pub fn holds(&self, token: Token) -> bool {
        self.key == Key::Writer(token) || self.readers & (1 << token) != 0
    }

    /// Whether K exists as anything but the readers' marker.
    fn held_alone(&self) -> bool {
        matches!(self.key, Key::Writer(_) | Key::Foreign | Key::Revoked)
    }

    /// FORCE: the writer's token, or every live share, gives way to the marker, which names
    /// them; or, with the flaw, K is freed at once.
    fn force(&mut self, rules: Rules) -> Ran {
        let revoked = match self.key {
            Key::Writer(token) => 1 << token,
            Key::Marker => self.readers,
            Key::Free | Key::Revoked => return answered(Answer::Denied),
            Key::Foreign => unreachable!("runs with a forcer have no foreign client"),
        };
        self.readers = 0;
        if rules.has(Flaw::ForceFreesAtOnce) {
            self.key = Key::Free;
        } else {
            self.key = Key::Revoked;
            self.revoked = revoked;
        }
        answered(Answer::Taken)
    }

    /// The design's eligibility (a bit per token): a writer waiter is eligible iff it is the
    /// first live waiter and K is free or its own; a reader waiter iff every live waiter ahead
    /// of it is a reader and K is free or the marker.
    pub fn eligible(&self) -> u8 {
        let mut eligible = 0;
        for (position, place) in self.queue.iter().enumerate() {
            if !place.reader {
                let free = matches!(self.key, Key::Free) || self.key == Key::Writer(place.token);
                if position == 0 && free {
                    eligible |= 1 << place.token;
                }
                break;
            }
            if !self.held_alone() {
                eligible |= 1 << place.token;
            }
        }
        eligible
    }

    /// The one wake-up rule around a script's writes (`wake_newly`): the waiters eligible after
    /// them and not before are published to, except the caller.
    fn letting_in(
        &mut self,
        caller: Token,
        rules: Rules,
        writes: impl FnOnce(&mut Master) -> Ran,
    ) -> Ran {
        let before = self.eligible();
        let mut ran = writes(self);
        let newly = self.eligible() & !before & !(1 << caller);
        ran.woke = if rules.has(Flaw::WakesTheFirstOnly) {
            let first = self.queue.iter().find(|p| newly & (1 << p.token) != 0);
            first.map_or(0, |p| 1 << p.token)
        } else {
            newly
        };
        ran
    }

    /// The writes of RELEASE or READ_RELEASE (and their undo): the caller's K or share goes;
    /// READ_RELEASE deletes the marker once no live share is left. Returns whether anything of
    /// the caller's was here.
    fn give_up(&mut self, from: Token, mode: Mode, rules: Rules) -> bool {
        // ACKNOWLEDGE and `cross_off`: a revoked holder's release (or undo) says it stopped;
        // the last one crossed off opens K.
        if self.key == Key::Revoked && self.revoked & (1 << from) != 0 {
            self.revoked &= !(1 << from);
            if self.revoked == 0 {
                self.key = Key::Free;
            }
            return true;
        }
        match mode {
            Mode::Writer if self.key == Key::Writer(from) => {
                self.key = Key::Free;
                true
            }
            Mode::Reader if self.readers & (1 << from) != 0 => {
                self.readers &= !(1 << from);
                let last = self.readers == 0 || rules.has(Flaw::ReleaseDeletesTheMarker);
                if last && self.key == Key::Marker {
                    self.key = Key::Free;
                }
                true
            }
            _ => false,
        }
    }

    /// `token`'s lease ran out here: its place is gone (no script runs, nobody is told).
    pub fn lapse(&mut self, token: Token) {
        self.drop_place(token);
    }

    /// `token`'s K or share ran out of TTL here (no script runs, nobody is told). The marker's
    /// PX is the longest live share's: it goes with the last one.
    pub fn expire(&mut self, token: Token, mode: Mode) {
        // The marker's TTL is the longest revoked holder's plus drift: it runs out after the
        // last of them died (the model's time, see `revoke` in the queue's model).
        if self.key == Key::Revoked && self.revoked & (1 << token) != 0 {
            self.revoked &= !(1 << token);
            if self.revoked == 0 {
                self.key = Key::Free;
            }
            return;
        }
        match mode {
            Mode::Foreign if self.key == Key::Foreign => self.key = Key::Free,
            Mode::Writer if self.key == Key::Writer(token) => self.key = Key::Free,
            Mode::Reader => {
                self.readers &= !(1 << token);
                if self.readers == 0 && self.key == Key::Marker {
                    self.key = Key::Free;
                }
            }
            _ => {}
        }
    }

    pub fn has_place(&self, token: Token) -> bool {
        self.queue.position(token).is_some()
    }

    fn drop_place(&mut self, token: Token) {
        self.queue.remove(token);
    }

    /// The place-making part of WAIT (`join` is always set): the caller's place, if it has
    /// none, and the counter raised to its ticket.
    fn place(&mut self, token: Token, ticket: u8, reader: bool) {
        if !self.has_place(token) {
            self.queue.insert(Place {
                ticket,
                token,
                reader,
            });
            self.counter = self.counter.max(ticket);
        }
    }

    fn refuse(&mut self) -> Ran {
        self.counter += 1;
        answered(Answer::Refused {
            ticket: self.counter,
        })
    }

    /// The foreign client's `SET K x NX`: it looks at K alone.
    fn set_nx(&mut self) -> Ran {
        if self.key != Key::Free {
            return answered(Answer::Denied);
        }
        self.key = Key::Foreign;
        answered(Answer::Taken)
    }

    /// The writer's ACQUIRE (today's): `SET NX` where nobody waits; K as a marker refuses it.
    fn acquire(&mut self, from: Token) -> Ran {
        let waiting = self.queue.iter().next().is_some();
        if !waiting && self.key == Key::Free {
            self.key = Key::Writer(from);
            return answered(Answer::Taken);
        }
        if self.key == Key::Writer(from) {
            return answered(Answer::Taken);
        }
        self.refuse()
    }

    /// READ_ACQUIRE: refused where K is held alone (a writer, ours or foreign); a newcomer
    /// reader takes a share without queueing only where nobody waits at all (or, with
    /// `readers_pass_readers`, where no writer waits).
    fn read_acquire(&mut self, from: Token, rules: Rules) -> Ran {
        if self.readers & (1 << from) != 0 {
            return answered(Answer::Taken);
        }
        let passes = |p: &&Place| rules.readers_pass_readers && p.reader;
        let waiting = self.queue.iter().any(|p| !passes(&p));
        let queue_counts = !rules.has(Flaw::NewcomerReaderIgnoresTheQueue);
        if self.held_alone() || (waiting && queue_counts) {
            return self.refuse();
        }
        self.take_share(from);
        answered(Answer::Taken)
    }

    fn take_share(&mut self, from: Token) {
        self.readers |= 1 << from;
        self.key = Key::Marker;
    }

    /// The writer's WAIT (today's): the first live waiter takes K where it is free (or its own:
    /// a partial hold of an earlier turn), keeping its place until the release.
    fn wait(&mut self, from: Token, ticket: u8) -> Ran {
        self.place(from, ticket, false);
        if self.eligible() & (1 << from) != 0 {
            self.key = Key::Writer(from);
            return answered(Answer::Taken);
        }
        answered(Answer::Waiting {
            first: self.queue.position(from) == Some(0),
            held: self.key != Key::Free,
        })
    }

    /// READ_WAIT: an eligible reader takes a share (keeping its place until the release).
    fn read_wait(&mut self, from: Token, ticket: u8, rules: Rules) -> Ran {
        self.place(from, ticket, true);
        let passes = rules.has(Flaw::WaitingReaderIgnoresWritersAhead) && !self.held_alone();
        if passes || self.eligible() & (1 << from) != 0 {
            self.take_share(from);
            return answered(Answer::Taken);
        }
        let mut ahead = self.queue.iter().take_while(|p| p.token != from);
        answered(Answer::Waiting {
            first: ahead.all(|p| p.reader),
            held: self.key != Key::Free,
        })
    }
}
