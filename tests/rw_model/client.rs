//! One client's decisions: how `take::take` and `queue::wait_in_line` read a round's answers
//! for a reader or a writer, as the real rounds decide (src/lock/quorum/round.rs, `Until`); or
//! the foreign client's one try. The state machine itself, its connections and subscriptions
//! are `model_kit::client`'s.

use super::master::{Answer, Request};
use super::protocol::{Mode, Rules};
use crate::model_kit::{MASTERS, client};

/// What this model keeps of a client besides what every model does.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Own {
    pub mode: Mode,
    /// It renewed once already (the model allows one renewal per holder).
    pub renewed: bool,
    /// Ghost: it joined the queue (drew its tickets and placed itself).
    pub queued: bool,
}

/// How a client of this model sleeps: until a notice or its timer (heartbeat or backoff),
/// every end of a sleep a timer.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timer;

pub type Client = client::Client<Request, Answer, Timer, Own>;
pub type Phase = client::Phase<Timer>;

/// A client of `mode`, not yet arrived.
pub fn new(mode: Mode) -> Client {
    Client::new(Own {
        mode,
        renewed: false,
        queued: false,
    })
}

impl Client {
    /// The release of whatever it holds or partly took.
    pub fn release(&self, announce: bool) -> Request {
        match self.own.mode {
            Mode::Foreign => Request::Del,
            _ => Request::Release { announce },
        }
    }

    /// A master's answer to the current round arrives.
    pub fn answer(&mut self, master: usize, answer: Answer, rules: Rules) {
        self.answers[master] = Some(answer);
        if self.own.mode == Mode::Forcer {
            if self.answers.iter().flatten().count() == MASTERS {
                self.stop_listening();
                self.phase = Phase::Done;
            }
            return;
        }
        let answers = self.answers;
        let answers = answers.iter().flatten();
        let taken = answers.clone().filter(|a| **a == Answer::Taken).count();
        let answered = answers.clone().count();
        let won = taken >= rules.quorum(self.own.mode);
        match self.phase {
            Phase::Acquiring => {
                let tickets = answers.clone().filter_map(|a| match a {
                    Answer::Refused { ticket } => Some(*ticket),
                    _ => None,
                });
                if won {
                    self.hold();
                } else if rules.newcomer_decided(self.own.mode, taken, answered) {
                    self.stop_listening();
                    // Anything but a refusal from every master may have left it a partial hold.
                    if answered - taken < MASTERS {
                        self.send(self.release(false));
                    }
                    self.join_or_back_off(tickets);
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
                    self.phase = Phase::Sleeping(Timer);
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
}
