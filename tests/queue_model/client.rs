//! One client: `Redlock::take` and `queue::wait_in_line` as a state machine, one round at a
//! time, deciding as the real rounds decide (src/lock/quorum/round.rs, `Until`).

use super::master::{Answer, Request};
use super::protocol::{Kind, Rules, Sleep, TICKETS};
use super::wire::{Wire, stop_awaiting, write_all};

pub const MASTERS: usize = 3;

/// Where a client is.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Not yet arrived.
    Start,
    /// Its ACQUIRE round runs (`Until::Conclusive`).
    Acquiring,
    /// Refused with a ticket: it subscribes to its wake channel next, then places itself.
    Joining,
    /// Refused without enough tickets to join the queue: it backs off and arrives again.
    Outside,
    /// Its WAIT round runs (`Until::WonOrAllAnswered`).
    Turn,
    /// Between turns: until the sleep ends or a notice is read.
    Sleeping(Sleep),
    /// Holds the lock (within its validity).
    Holding,
    /// Released the lock; gone.
    Done,
    /// Gave up or was interrupted while waiting, and left the queue.
    Left,
    /// Died; what it had written to its connections still arrives.
    Crashed,
}

/// A newcomer's clean-up of a partial hold: it has no place to put back.
pub const UNDO: Request = Request::Release {
    announce: false,
    reseat: None,
};

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Client {
    pub phase: Phase,
    pub ticket: u8,
    /// The current round's answers, by master.
    pub answers: [Option<Answer>; MASTERS],
    /// Per master, the requests written to that connection and not yet run, oldest first.
    pub sent: [Wire; MASTERS],
    /// The masters (a bit each) it is subscribed to its wake channel on.
    pub listening: u8,
    /// A notice published to it is unread (the coalesced flag `Notices::next` clears; one
    /// still on the wire counts: how long it travels is how long the waiter takes to read it).
    pub noticed: bool,
    /// The last sleep was ended by a notice (`woken` in `wait_in_line`).
    pub woken: bool,
    /// Ghost: its first ACQUIRE has run somewhere.
    pub arrived: bool,
    /// Ghost: the clients (a bit each) that had a live place on a majority when it arrived.
    pub behind: u8,
    /// Ghost: it has held the lock.
    pub served: bool,
}

impl Client {
    pub fn new() -> Client {
        Client {
            phase: Phase::Start,
            ticket: 0,
            answers: [None; MASTERS],
            sent: Default::default(),
            listening: 0,
            noticed: false,
            woken: false,
            arrived: false,
            behind: 0,
            served: false,
        }
    }

    /// Starts a round: `request` on every master's connection, answers awaited.
    pub fn round(&mut self, request: Request, phase: Phase) {
        self.answers = [None; MASTERS];
        write_all(&mut self.sent, request, true);
        self.phase = phase;
    }

    /// Writes `request` to every master without waiting for answers (a release, an undo or
    /// LEAVE: `Until::DecidedAndSent`; what it decides changes nothing the model tracks).
    pub fn send(&mut self, request: Request) {
        write_all(&mut self.sent, request, false);
    }

    /// The round is decided (or abandoned): later answers are not listened to.
    pub fn stop_listening(&mut self) {
        stop_awaiting(&mut self.sent);
    }

    /// Drops its subscriptions (`Notices` dropped at the end of `wait_in_line`, or death).
    pub fn unsubscribe(&mut self) {
        self.listening = 0;
        self.noticed = false;
    }

    /// A master's answer to the current round arrives.
    pub fn answer(&mut self, master: usize, answer: Answer, rules: Rules) {
        self.answers[master] = Some(answer);
        let answers = self.answers;
        let answers = answers.iter().flatten();
        let taken = answers
            .clone()
            .filter(|a| matches!(a, Answer::Taken | Answer::TakenWithTicket { .. }))
            .count();
        let answered = answers.clone().count();
        let won = taken >= rules.kind.quorum();
        match self.phase {
            Phase::Acquiring => {
                let tickets = answers.clone().filter_map(|a| match a {
                    Answer::Refused { ticket } | Answer::TakenWithTicket { ticket } => {
                        Some(*ticket)
                    }
                    _ => None,
                });
                let refused = answers
                    .filter(|a| matches!(a, Answer::Refused { .. }))
                    .count();
                if won {
                    self.hold();
                } else if rules.newcomer_decided(taken, refused, answered) {
                    self.stop_listening();
                    // Anything but a refusal from every master may have left it a partial hold.
                    if refused < MASTERS {
                        self.send(UNDO);
                    }
                    // Each refusal drew a ticket (in the fix, each slot given too): it joins
                    // with the highest of N - majority + 1.
                    self.phase = if tickets.clone().count() >= TICKETS {
                        self.ticket = tickets.max().expect("tickets");
                        Phase::Joining
                    } else {
                        Phase::Outside
                    };
                }
            }
            Phase::Turn => {
                if won {
                    self.unsubscribe();
                    self.hold();
                } else if answered == MASTERS {
                    let first = answers
                        .clone()
                        .any(|a| matches!(a, Answer::Waiting { first: true, .. }));
                    // A slot's turn also undoes when first (`take_slot`: a master it did not
                    // hear from may have given it one; here it heard all, so that is a no-op).
                    let slot = matches!(rules.kind, Kind::Slots { .. });
                    if taken > 0 || (slot && first) {
                        let reseat = rules.undo_reseats().then_some(self.ticket);
                        self.send(Request::Release {
                            announce: false,
                            reseat,
                        });
                    }
                    let sleep = rules.after_failed_turn(first, self.woken);
                    self.woken = false;
                    self.phase = Phase::Sleeping(sleep);
                }
            }
            _ => unreachable!("an awaited answer outside a round"),
        }
    }

    fn hold(&mut self) {
        self.stop_listening();
        self.woken = false;
        self.served = true;
        self.phase = Phase::Holding;
    }
}
