//! Release notices on the kept connection (issue 53, item 1): where the server speaks RESP3,
//! a waiter subscribes to its wake channel on the connection it already keeps for its
//! requests to that master (HELLO 3, then SUBSCRIBE there, whose confirmation is a push in
//! order with the replies), confirmed before its join turn; a RESP2 server (Redis 5) keeps a
//! subscribed connection of its own per master (`Node::subscribe`, `Notices::subscribe`).
//!
//! # What is modelled
//! - **One FIFO.** `Subscription::Kept`: `listen_on`'s draw writes SUBSCRIBE
//!   (`Request::Subscribe`) on the kept connection to each master drawn, awaited like any
//!   round (`Phase::Subscribing`); the master subscribes the waiter when it runs it, in that
//!   connection's order (`listening` gets the master's bit then, not at once as for a
//!   connection of its own). Once every confirmation came (or its connection broke), the
//!   waiter takes its join turn (WAIT) on every master. A notice is a push on that same
//!   connection; the model delivers it as the script runs, as it does replies, so pushes and
//!   replies keep their order.
//! - **One fate.** A fault, `Action::Break` (at most one per run, `QueueModel::breaks`): one
//!   waiter's connection to one master breaks while it waits in line (subscribing, in a
//!   turn, asleep). What was on the wire there is gone, after its oldest request ran there
//!   with its answer lost, or not; an answer the round awaited from there is an error
//!   (`Answer::Lost`), and a failed turn with one undoes, as `Polled::partial` says (its WAIT
//!   may have taken the lock there). With the kept connection the subscription there ends with
//!   it, with any notice from there still unread (`Client::unread_from`: the pessimistic
//!   reading, as if a push read off the socket but not yet looked at went with it; notices
//!   from other masters stay), and nothing subscribes again: the next request there
//!   reconnects without it. With a connection of its own
//!   (`Subscription::Separate`, RESP2), the same break leaves the subscription.
//! - **Known-bad.** `Subscription::KeptAfterTurn`: the join turn's WAIT is written before the
//!   SUBSCRIBE on each connection, so a master runs the turn before the subscription is in
//!   place there. The checker finds the lost wake-up: the turn places the waiter, fails
//!   against the holder, and the holder's release, between the turn and the SUBSCRIBE, is
//!   published to nobody listening; the waiter sleeps on its backoff, a timer, with the lock
//!   free on every master (`a_subscription_after_the_join_turn_loses_a_wake_up`).
//!
//! # Properties
//! Those of the model (`properties`), with "no lost wake-up" read as the fault allows: a
//! waiter whose connection broke (`Client::broken`) may sleep on its heartbeat, by design
//! (the header of src/lock/kinds/queue.rs, "When a lost notice still costs a heartbeat", (b)
//! and (c)). In a state where nothing can happen without a timer, the lock is free on every
//! master and every live client asleep; the first in line among them (smallest ticket, then
//! token) is the broken waiter, whose heartbeat then takes the lock (it is first wherever it
//! is placed, and its turn places it everywhere), or nobody is asleep. The others wait behind
//! it, and are woken by its release like any hand-off: the runs go on past its heartbeat
//! (`timers` 1) and the property holds there too. Where breaks are on, also **nothing
//! taken is left behind**: in such a state no master keeps a lock or a slot (a turn whose
//! answer was lost undid what it may have taken; that this property would catch an undo that
//! ignored a lost answer was not shown: in these bounds the waiter's next turn takes back its
//! own leftover lock, and its release frees it). And, so that the fault is not vacuous, **a
//! break leaves its waiter to its heartbeat** in some run (a state the property without its
//! exception would fail on). Never more holders than the limit and first come, first served,
//! unchanged.
//!
//! A SUBSCRIBE is never taken as a step that commutes with every other (`unawaited`, see
//! `model_kit::system`): it changes whom a later publish reaches.
//!
//! # What is not modelled
//! - A break that loses a release, an undo or a LEAVE in flight (a break is offered only where
//!   the wire holds WAIT and SUBSCRIBE alone): that is a lost request, whose aftermath item 1
//!   does not change (the request connection could always break), and
//!   `Start::StaleMarker` starts after one. Nor a break of a holder's or a newcomer's
//!   connection: no subscription rides on it.
//! - HELLO 3 and the RESP2 fallback as steps: which design a master gets is a run's constant.
//!   A master that does not confirm within a node timeout is a break here (left out, the
//!   backoff covers it).
//! - Timeouts other than a break, master restarts, more than one break per run.
//!
//! # Bounds and cost
//! Measured 2026-12-03, debug build, on 2 cores with other work running
//! (`cargo test --test models kept -- --nocapture`); every start is `Start::HandOff`
//! (waiters, joining, newcomers), one break and one timer unless said:
//! - `kept_notices_hand_off_without_a_timer`: no break, (2, 0, 0), 2 timers: 102,059 states
//!   (32,863 distinct), 0.2 s.
//! - `kept_notices_join_without_a_timer`: no break, (0, 2, 0), no timer: 183,515 states
//!   (64,441 distinct), 0.4 s.
//! - `a_broken_kept_connection_costs_only_its_waiter_a_heartbeat`: (2, 0, 0): 282,406
//!   (91,646 distinct), 0.6 s; (1, 1, 0): 1,123,448 (344,191), 2.4 s; (1, 0, 1): 1,278,848
//!   (392,885), 2.8 s; (2, 0, 0) with 2 timers: 874,933 (260,608), 2.1 s.
//! - `a_broken_kept_connection_while_joining_costs_only_its_waiter_a_heartbeat`: (0, 2, 0):
//!   7,855,307 (2,419,546), 21 s.
//! - `a_broken_kept_connection_and_a_waiter_that_leaves`: (2, 0, 0), a leave: 3,944,230
//!   (1,282,225), 12 s.
//! - `a_broken_kept_slot_connection_costs_only_its_waiter_a_heartbeat`: slots, (1, 0, 0):
//!   104,639 (23,435), 0.3 s; (2, 0, 0): 6,525,902 (1,415,670), 16 s.
//! - `a_broken_request_connection_costs_only_its_waiter_a_heartbeat` (`Subscription::Separate`):
//!   (2, 0, 0): 222,718 (78,274), 0.5 s; (1, 1, 0): 855,749 (289,003), 2.2 s.
//! - `a_subscription_after_the_join_turn_loses_a_wake_up` (`Subscription::KeptAfterTurn`),
//!   (0, 1, 0), no timer: 1,413 states (574 distinct), found in 19 steps, 5 ms.
//! - `a_broken_kept_connection_can_leave_its_waiter_to_its_heartbeat`: (1, 0, 0), the search
//!   stops at the first such state: 4,459 states (1,673 distinct), 13 steps deep, 17 ms.
//! - `kept_notices_hold_within_larger_bounds` (ignored; 14 min in all): a break and a death,
//!   (2, 0, 0): 20,554,292 (5,556,640), 107 s; (0, 1, 1): 15,415,869 (4,642,082), 97 s;
//!   slots, (2, 0, 0) and a leave: 95,172,723 (24,458,086), 394 s; (0, 2, 0) and a leave:
//!   73,397,211 (21,394,858), 243 s. All hold.
//!
//! The tests run in CI (all but the ignored one) take about a minute together.

use super::client::{Client, Phase};
use super::master::{Answer, Request};
use super::system::QueueModel;
use super::{fixed, fixed_slots, hand_off, holds, loses_a_wake_up};
use crate::model_kit::check;
use crate::model_kit::wire::Sent;
use crate::model_kit::{MASTERS, Token};

/// Where a waiter's subscription to its wake channel rides.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subscription {
    /// A subscribed connection of its own per master (today; a RESP2 server after item 1),
    /// confirmed before the join turn; a break of the request connection leaves it.
    Separate,
    /// On the kept request connection (RESP3): SUBSCRIBE written there and confirmed before
    /// the join turn; it ends with that connection.
    Kept,
    /// Known-bad: on the kept connection, but written after the join turn's WAIT.
    KeptAfterTurn,
}

impl Subscription {
    fn kept(self) -> bool {
        self != Subscription::Separate
    }
}

/// A refused newcomer subscribes on `masters` (a bit each) and takes its join turn, as
/// `subscription` says.
pub(super) fn listen(subscription: Subscription, client: &mut Client, masters: u8) {
    let drawn = (0..MASTERS).filter(move |m| masters & (1 << m) != 0);
    match subscription {
        Subscription::Separate => {
            client.listening = masters;
            client.round(
                Request::Wait {
                    ticket: client.ticket,
                },
                Phase::Turn,
            );
        }
        Subscription::Kept => {
            client.answers = [None; MASTERS];
            for m in drawn {
                client.sent[m].push(Sent {
                    request: Request::Subscribe,
                    awaited: true,
                });
            }
            client.phase = Phase::Subscribing;
        }
        Subscription::KeptAfterTurn => {
            client.round(
                Request::Wait {
                    ticket: client.ticket,
                },
                Phase::Turn,
            );
            for m in drawn {
                client.sent[m].push(Sent {
                    request: Request::Subscribe,
                    awaited: false,
                });
            }
        }
    }
}

impl Client {
    /// A SUBSCRIBE was confirmed (or its connection broke): once none is awaited, the join
    /// turn (WAIT) on every master.
    pub(super) fn confirmed(&mut self) {
        let awaited = self.sent.iter().any(|w| w.iter().any(|s| s.awaited));
        if !awaited {
            self.round(
                Request::Wait {
                    ticket: self.ticket,
                },
                Phase::Turn,
            );
        }
    }
}

impl QueueModel {
    /// Whether `client`'s connection to `master` may break now: it waits in line, the break
    /// loses no release, undo or LEAVE (see the header), and it loses something (a request
    /// on the wire, or the subscription there).
    pub(super) fn can_break(&self, client: &Client, master: usize) -> bool {
        let in_line = matches!(
            client.phase,
            Phase::Subscribing | Phase::Turn | Phase::Sleeping(_)
        );
        let wire = &client.sent[master];
        let only_turns = wire
            .iter()
            .all(|s| matches!(s.request, Request::Wait { .. } | Request::Subscribe));
        let subscribed = client.listening & (1 << master) != 0;
        let loses = !wire.is_empty() || (self.subscription.kept() && subscribed);
        self.breaks && in_line && only_turns && loses
    }

    /// `client`'s connection to `master` broke: with the kept connection, its subscription
    /// there too, and whatever it had not read; an awaited answer is an error.
    pub(super) fn after_break(&self, client: &mut Client, master: usize, awaited: bool) {
        if self.subscription.kept() {
            client.listening &= !(1 << master);
            client.unread_from &= !(1 << master);
            client.noticed = client.unread_from != 0;
        }
        if awaited {
            client.answer(master, Answer::Lost, self.rules());
        }
    }
}

/// Whether the asleep client first in line (by ticket, then token) is one whose connection
/// broke: its heartbeat is then what starts the queue again, by design.
pub(super) fn first_asleep_is_broken<'a>(
    asleep: impl Iterator<Item = (Token, &'a Client)>,
) -> bool {
    asleep
        .min_by_key(|(token, c)| (c.ticket, *token))
        .is_some_and(|(_, c)| c.broken)
}

fn kept(model: QueueModel) -> QueueModel {
    QueueModel {
        subscription: Subscription::Kept,
        ..model
    }
}

fn broken(model: QueueModel) -> QueueModel {
    QueueModel {
        breaks: true,
        timers: 1,
        ..model
    }
}

/// Hand-offs through two waiters subscribed on their kept connections, with up to two
/// heartbeats or backoffs anywhere: fault-free, as with connections of their own.
#[test]
fn kept_notices_hand_off_without_a_timer() {
    holds(QueueModel {
        timers: 2,
        ..kept(fixed(hand_off(2, 0, 0)))
    });
}

/// Two waiters subscribe on their kept connections and place themselves while the holder
/// releases: the confirmations, in order with the replies, come before the join turn, and no
/// wake-up is lost.
#[test]
fn kept_notices_join_without_a_timer() {
    holds(kept(fixed(hand_off(0, 2, 0))));
}

/// One waiter's kept connection to one master breaks at any moment of a hand-off (its turn's
/// WAIT there lost before or after it ran, its subscription there gone, never made again):
/// never two holders, the order kept, nothing left taken, and only that waiter may be left to
/// its heartbeat, which then starts the queue again. Two waiters; a waiter and one joining; a
/// waiter and a newcomer; two waiters with two timers.
#[test]
fn a_broken_kept_connection_costs_only_its_waiter_a_heartbeat() {
    holds(broken(kept(fixed(hand_off(2, 0, 0)))));
    holds(broken(kept(fixed(hand_off(1, 1, 0)))));
    holds(broken(kept(fixed(hand_off(1, 0, 1)))));
    holds(QueueModel {
        timers: 2,
        ..broken(kept(fixed(hand_off(2, 0, 0))))
    });
}

/// A break while two waiters subscribe and place themselves: one's SUBSCRIBE or join turn
/// lost there, before or after it ran.
#[test]
fn a_broken_kept_connection_while_joining_costs_only_its_waiter_a_heartbeat() {
    holds(broken(kept(fixed(hand_off(0, 2, 0)))));
}

/// A break, and a waiter that gives up at any moment.
#[test]
fn a_broken_kept_connection_and_a_waiter_that_leaves() {
    holds(QueueModel {
        leave: true,
        ..broken(kept(fixed(hand_off(2, 0, 0))))
    });
}

/// Slots (limit 2, a holder needs all 3 masters, a waiter listens on all 3): a break costs
/// only its waiter a heartbeat. One waiter, then two.
#[test]
fn a_broken_kept_slot_connection_costs_only_its_waiter_a_heartbeat() {
    holds(broken(kept(fixed_slots(hand_off(1, 0, 0)))));
    holds(broken(kept(fixed_slots(hand_off(2, 0, 0)))));
}

/// The same break where the subscription has a connection of its own (RESP2): it stays, but
/// the lost answer still costs that waiter a heartbeat at worst (the queue's header, (c)),
/// and some run does.
#[test]
fn a_broken_request_connection_costs_only_its_waiter_a_heartbeat() {
    holds(broken(fixed(hand_off(2, 0, 0))));
    holds(broken(fixed(hand_off(1, 1, 0))));
}

/// Known-bad: the join turn is written before the SUBSCRIBE. The turn fails against the
/// holder, whose release then lands before the subscription: published to nobody listening.
#[test]
fn a_subscription_after_the_join_turn_loses_a_wake_up() {
    loses_a_wake_up(QueueModel {
        subscription: Subscription::KeptAfterTurn,
        ..fixed(hand_off(0, 1, 0))
    });
}

/// How a break of the kept connection costs its waiter a heartbeat: the shortest run the
/// checker finds (breadth first) that leaves it asleep on its timer with nothing else to do.
#[test]
fn a_broken_kept_connection_can_leave_its_waiter_to_its_heartbeat() {
    let model = broken(kept(fixed(hand_off(1, 0, 0))));
    let path = check::until_caught(model, "a break leaves its waiter to its heartbeat")
        .expect("no run where a break costs a heartbeat");
    println!("{}", super::trace::tell(&model, path));
}

/// Larger bounds than CI can afford: a break and a death; two joining with a leave, or with
/// a newcomer; slots with a leave.
#[test]
#[ignore]
fn kept_notices_hold_within_larger_bounds() {
    holds(QueueModel {
        crash: true,
        ..broken(kept(fixed(hand_off(2, 0, 0))))
    });
    holds(broken(kept(fixed(hand_off(0, 1, 1)))));
    holds(QueueModel {
        leave: true,
        ..broken(kept(fixed_slots(hand_off(2, 0, 0))))
    });
    holds(QueueModel {
        leave: true,
        ..broken(kept(fixed(hand_off(0, 2, 0))))
    });
}
