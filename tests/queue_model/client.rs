//! One client's decisions: how `take::take` and `queue::wait_in_line` read a round's answers,
//! as the real rounds decide (src/lock/quorum/round.rs, `Until`), for the lock or a slot. The
//! state machine itself, its connections and subscriptions are `model_kit::client`'s.

use super::master::{Answer, Request};
use super::protocol::{Kind, Rules, Sleep};
use crate::model_kit::{MASTERS, client};

/// What this model keeps of a client besides what every model does.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Own {
    /// The last sleep was ended by a notice (`woken` in `wait_in_line`).
    pub woken: bool,
    /// It is the forcer (`release --force`): it sends FORCE, never holds.
    pub forcer: bool,
    /// It renewed once already (runs with a forcer: see `revoke`).
    pub renewed: bool,
    /// It never renews (the second slot holder, in runs that revoke slots: see `revoke`).
    pub never_renews: bool,
    /// Ghost: a renewal of its hold that did not win counted a revocation that an earlier
    /// partial hold of its token left (`Master::stale`), not one of this hold: it would stop
    /// saying it was revoked by a force that ran before it held (see `revoke`).
    pub named_stale: bool,
}

pub type Client = client::Client<Request, Answer, Sleep, Own>;
pub type Phase = client::Phase<Sleep>;

/// A newcomer's clean-up of a partial hold: it has no place to put back.
pub const UNDO: Request = Request::Release {
    announce: false,
    reseat: None,
};

impl Client {
    /// Its round won: it holds, remembering the answers it won with where the rules say
    /// (which masters gave it the lock: `Lock::granted_by`).
    fn hold_as(&mut self, rules: Rules) {
        if rules.keeps_grants {
            self.hold_keeping_answers();
        } else {
            self.hold();
        }
    }

    /// A master's answer to the current round arrives.
    pub fn answer(&mut self, master: usize, answer: Answer, rules: Rules) {
        self.answers[master] = Some(answer);
        if self.phase == Phase::Subscribing {
            return self.confirmed();
        }
        if self.own.forcer || self.phase == Phase::Renewing {
            return self.forced_or_renewed(rules);
        }
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
                    self.own.woken = false;
                    self.hold_as(rules);
                } else if rules.newcomer_decided(taken, refused, answered) {
                    self.stop_listening();
                    // Anything but a refusal from every master may have left it a partial hold.
                    if refused < MASTERS {
                        self.send(UNDO);
                    }
                    // In the fix, each slot given drew a ticket too.
                    self.join_or_back_off(tickets);
                }
            }
            Phase::Turn => {
                if won {
                    self.unsubscribe();
                    self.own.woken = false;
                    self.hold_as(rules);
                } else if answered == MASTERS {
                    let first = answers
                        .clone()
                        .any(|a| matches!(a, Answer::Waiting { first: true, .. }));
                    // A slot's turn also undoes when first (`take_slot`: a master it did not
                    // hear from may have given it one; here it heard all, so that is a no-op).
                    let slot = matches!(rules.kind, Kind::Slots { .. });
                    // Anything but a refusal from every master may have left it a partial
                    // hold (`Polled::partial`): a lost answer too, whose WAIT may have run.
                    let lost = answers.clone().any(|a| *a == Answer::Lost);
                    if taken > 0 || lost || (slot && first) {
                        let reseat = rules.undo_reseats().then_some(self.ticket);
                        self.send(Request::Release {
                            announce: false,
                            reseat,
                        });
                    }
                    let sleep = rules.after_failed_turn(first, self.own.woken);
                    self.own.woken = false;
                    self.phase = Phase::Sleeping(sleep);
                }
            }
            _ => unreachable!("an awaited answer outside a round"),
        }
    }
}
