//! One client: `Redlock::take` and `queue::wait_in_line` as a state machine, one round at a
//! time, deciding as the real rounds decide (src/lock/quorum/round.rs, `Until`), for a reader or a
//! writer; or the foreign client's one try.

use super::master::{Answer, Request};
use super::protocol::{Mode, Rules, TICKETS};
use super::wire::{Wire, stop_awaiting, write_all};

pub const MASTERS: usize = 3;
/// Where a client is.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Not yet arrived.
    Start,
    /// Its ACQUIRE round runs (the foreign client's SET NX round).
    Acquiring,
    /// Refused with a ticket: it subscribes to its wake channel next, then places itself.
    Joining,
    /// Refused without a ticket enough to join (the foreign client: refused): it backs off and
    /// arrives again.
    Outside,
    /// Its WAIT round runs (`Until::WonOrAllAnswered`).
    Turn,
    /// Between turns: until a notice is read or its timer (heartbeat or backoff) fires.
    Sleeping,
    /// Holds K (a share of it, for a reader), within its validity.
    Holding,
    /// Holds K, and renews it: an EXTEND round runs.
    Renewing,
    /// Released K; gone.
    Done,
    /// Gave up or was interrupted while waiting, and left the queue.
    Left,
    /// Died; what it had written to its connections still arrives.
    Crashed,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Client {
    pub mode: Mode,
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
    /// It renewed once already (the model allows one renewal per holder).
    pub renewed: bool,
    /// Ghost: its first ACQUIRE has run somewhere.
    pub arrived: bool,
    /// Ghost: the clients (a bit each) that had a live place on a majority when it arrived.
    pub behind: u8,
    /// Ghost: it joined the queue (drew its tickets and placed itself).
    pub queued: bool,
    /// Ghost: it has held K.
    pub served: bool,
}

impl Client {
    pub fn new(mode: Mode) -> Client {
        Client {
            mode,
            phase: Phase::Start,
            ticket: 0,
            answers: [None; MASTERS],
            sent: Default::default(),
            listening: 0,
            noticed: false,
            renewed: false,
            arrived: false,
            behind: 0,
            queued: false,
            served: false,
        }
    }

    pub fn holds(&self) -> bool {
        matches!(self.phase, Phase::Holding | Phase::Renewing)
    }

    pub fn is_alive(&self) -> bool {
        !matches!(self.phase, Phase::Done | Phase::Left | Phase::Crashed)
    }

    /// Starts a round: `request` on every master's connection, answers awaited.
    pub fn round(&mut self, request: Request, phase: Phase) {
        self.answers = [None; MASTERS];
        write_all(&mut self.sent, request, true);
        self.phase = phase;
    }

    /// Writes `request` to every master without waiting for answers (a release, an undo or
    /// LEAVE: `Until::DecidedAndSent`; what it answers changes nothing the model tracks).
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

    /// The release of whatever it holds or partly took.
    pub fn release(&self, announce: bool) -> Request {
        match self.mode {
            Mode::Foreign => Request::Del,
            _ => Request::Release { announce },
        }
    }

    /// A master's answer to the current round arrives.
    pub fn answer(&mut self, master: usize, answer: Answer, rules: Rules) {
        self.answers[master] = Some(answer);
        let answers = self.answers;
        let answers = answers.iter().flatten();
        let taken = answers.clone().filter(|a| **a == Answer::Taken).count();
        let answered = answers.clone().count();
        let won = taken >= rules.quorum(self.mode);
        match self.phase {
            Phase::Acquiring => {
                let tickets = answers.clone().filter_map(|a| match a {
                    Answer::Refused { ticket } => Some(*ticket),
                    _ => None,
                });
                let refused = answered - taken;
                if won {
                    self.hold();
                } else if rules.newcomer_decided(self.mode, taken, refused, answered) {
                    self.stop_listening();
                    // Anything but a refusal from every master may have left it a partial hold.
                    if refused < MASTERS {
                        self.send(self.release(false));
                    }
                    // Each refusal drew a ticket: it joins with the highest of N - majority + 1.
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
                    if taken > 0 {
                        self.send(Request::Release { announce: false });
                    }
                    self.phase = Phase::Sleeping;
                }
            }
            Phase::Renewing => {
                if won {
                    self.stop_listening();
                    self.phase = Phase::Holding;
                } else if answered == MASTERS {
                    // Not confirmed by its quorum: the share may be lost; stopped, released.
                    self.send(self.release(true));
                    self.phase = Phase::Done;
                }
            }
            _ => unreachable!("an awaited answer outside a round"),
        }
    }

    fn hold(&mut self) {
        self.stop_listening();
        self.served = true;
        self.phase = Phase::Holding;
    }
}
