//! A model of one line's policy (src/lock/kinds/supersede.rs, "One policy per line"), checked
//! exhaustively by stateright: a holder, a first-come, first-served waiter (a writer's WAIT or
//! a reader's READ_WAIT: both run `FIFO_POLICY_CHECK`) and a superseding waiter
//! (WAIT_SUPERSEDE), each with an order and a ticket, over three masters; every interleaving
//! of their scripts, requests delayed and reordered (each connection in order, as TCP), and
//! notices read late. The two may arrive in any order on each master, so each may be first
//! on some of them.
//!
//! # The Lua it mirrors
//! `FIFO_POLICY_CHECK` (src/lock/scripts/queue.rs): a waiter not in line where the policy key
//! exists is refused (`{'policy', 'supersede'}`). WAIT_SUPERSEDE's first two steps
//! (src/lock/scripts/supersede.rs): the marks; a line without the policy key that has live
//! places, none its own, refuses (`{'policy', 'fifo'}`); then its evictions (a newer place:
//! the caller marks and drops itself; older ones: marked, dropped, told), the policy key
//! written, and WAIT's body (the place made with `join`, in the superseding waiter's first
//! turn only; the take when first and K is free). RELEASE, the undo of a partial hold, and
//! LEAVE: K deleted where it is the caller's, the place dropped, the newly eligible woken.
//!
//! # What is modelled
//! - **A master** holds K (whose token), the line (places, first by ticket), whether the
//!   policy key is there, and the marks.
//! - **The holder** holds K on every master at the start and releases it at any moment.
//! - **A waiter** arrives (its first turn, sent with `join`), sleeps until a notice, takes a
//!   turn (the first-come waiter with `join` at every turn, as it rejoins while its lease
//!   lasts; the superseding one without), and decides as `queue::wait_in_line` does: won once
//!   a majority took K and no answer said superseded; once all answered: superseded if any
//!   said so; refused for its policy when its policy refusals and missing places are more
//!   than the quorum can spare (and a split, to come again, if those masters are too few for
//!   the other policy to win); lost its place (the superseding one) with no place on more
//!   masters than it can spare; else back to sleep after undoing a partial hold.
//!
//! # What is abstracted away
//! Time: no leases, no heartbeats (a turn is only ever started by a notice, so the no-lost-
//! wake-up check is strict), the keys' TTLs (the policy key and the marks last; their expiry
//! is the superseding line's model's). Masters do not fail and every answer arrives, so a
//! split never happens with three masters: a property checks that.
//!
//! # Properties
//! - **One holder at a time** (always).
//! - **One policy stands**: the two waiters are never both refused for their policy (always).
//! - **Superseded only by its own policy**: a superseding waiter is never superseded by (nor
//!   evicts) a first-come waiter (always).
//! - **No split with three masters heard** (always).
//! - **No lost wake-up** (always): in a state where nothing can happen, no waiter sleeps.
//! - Each waiter runs, and a waiter is refused for its policy (sometimes: not vacuous).
//!
//! # Known-bad rules it catches
//! - `Rule::AnyPolicyRefusal`: one master's policy refusal refuses the waiter, as before issue
//!   47: the first-come waiter first on master 0 and the superseding one on masters 1 and 2
//!   are both refused.
//! - `Rule::NoFifoCheck`: the first-come waiter skips `FIFO_POLICY_CHECK`, as a reader's
//!   READ_WAIT did: it joins the superseding line, and the superseding waiter, older than it,
//!   leaves as superseded by a reader.
//!
//! # Bounds and cost (debug build, `cargo test --test models policies -- --nocapture`)
//! A holder and the two waiters, for each of four pairs of tickets and orders: 415 333 states
//! (106 509 distinct), 35 or 36 steps deep, 2 to 4 s each on two loaded cores. The known-bad
//! rules, searched breadth first until caught: `AnyPolicyRefusal` after 20 333 states (7 581
//! distinct, 10 steps: both waiters refused), `NoFifoCheck` after 32 959 (11 703, 11 steps:
//! the superseding waiter leaves as superseded by the first-come one).

use stateright::{Model, Property};

use crate::model_kit::{MAJORITY, MASTERS};

mod checks;

/// Which rules the masters and the clients follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// As redlock does.
    Sound,
    /// Known-bad: any policy refusal refuses.
    AnyPolicyRefusal,
    /// Known-bad: the first-come waiter's turn does not check the policy.
    NoFifoCheck,
}

#[derive(Clone, Debug)]
pub struct PoliciesModel {
    /// The first-come waiter's and the superseding waiter's (order, ticket); an order of 0 is
    /// none (below every order).
    pub fifo: (u8, u8),
    pub superseding: (u8, u8),
    pub rule: Rule,
}

const HOLDER: usize = 0;
const FIFO: usize = 1;
const SUPERSEDING: usize = 2;
const CLIENTS: usize = 3;

/// A request on a connection.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Msg {
    /// A turn, answering into turn number `u8` (0, the first, is sent with `join`).
    Wait(u8),
    /// Deletes K where it is the sender's and drops its place; wakes the newly eligible.
    Release,
    /// The undo of a partial hold: deletes K where it is the sender's, keeps the place.
    Undo,
    /// Drops the place; wakes the newly eligible.
    Leave,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Answer {
    Pending,
    Taken,
    Waiting,
    Superseded,
    /// `{'policy', theirs}`.
    Policy,
    /// No place there, and the turn did not make one.
    NoPlace,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Phase {
    NotArrived,
    Turn(u8, [Answer; MASTERS]),
    Asleep,
    Holding,
    Done,
    Superseded,
    /// Left, refused for its policy (exit 64).
    Refused,
    /// Left to come again (a split): never with three masters heard.
    Split,
    /// Left, its place gone (exit 82).
    LostPlace,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Master {
    k: Option<usize>,
    /// Places in line, sorted by client (the first is found by ticket).
    line: Vec<usize>,
    /// The policy key (`supersede`) is there.
    policy: bool,
    /// (evicted, evictor).
    marks: Vec<(usize, usize)>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct PoliciesState {
    masters: [Master; MASTERS],
    phases: [Phase; CLIENTS],
    wire: [[Vec<Msg>; MASTERS]; CLIENTS],
    notices: [bool; CLIENTS],
    /// Violations and events, recorded as they happen.
    two_holders: bool,
    across_policies: bool,
    ran: [bool; CLIENTS],
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Step {
    Arrive(usize),
    Deliver { client: usize, master: usize },
    Wake(usize),
    Decide(usize),
    Finish(usize),
}

impl PoliciesModel {
    fn ticket(&self, client: usize) -> (u8, u8) {
        match client {
            FIFO => self.fifo,
            _ => self.superseding,
        }
    }

    /// Whether waiter `a` is newer than waiter `b`: (order, ticket, token).
    fn newer(&self, a: usize, b: usize) -> bool {
        let (oa, ta) = self.ticket(a);
        let (ob, tb) = self.ticket(b);
        (oa, ta, a) > (ob, tb, b)
    }

    fn first(&self, master: &Master) -> Option<usize> {
        master
            .line
            .iter()
            .copied()
            .min_by_key(|&c| (self.ticket(c).1, c))
    }

    fn eligible(&self, master: &Master) -> Option<usize> {
        let first = self.first(master)?;
        (master.k.is_none() || master.k == Some(first)).then_some(first)
    }

    /// Wakes whoever `change` lets in on `master` (never `caller`): `wake_newly`.
    fn changing(
        &self,
        state: &mut PoliciesState,
        master: usize,
        caller: usize,
        change: impl FnOnce(&mut Master),
    ) {
        let before = self.eligible(&state.masters[master]);
        change(&mut state.masters[master]);
        let after = self.eligible(&state.masters[master]);
        if let Some(woken) = after
            && after != before
            && woken != caller
        {
            notify(state, woken);
        }
    }

    /// `FIFO_POLICY_CHECK` then WAIT's body, or WAIT_SUPERSEDE, of `caller` on `master`.
    fn wait(&self, state: &mut PoliciesState, master: usize, caller: usize, turn: u8) -> Answer {
        let m = &state.masters[master];
        let placed = m.line.contains(&caller);
        if caller == FIFO {
            if self.rule != Rule::NoFifoCheck && m.policy && !placed {
                return Answer::Policy;
            }
        } else {
            if m.marks.iter().any(|&(evicted, _)| evicted == caller) {
                return Answer::Superseded;
            }
            if !m.policy && !placed && !m.line.is_empty() {
                return Answer::Policy;
            }
            let others: Vec<usize> = m
                .line
                .iter()
                .copied()
                .filter(|&c| c != caller && Some(c) != m.k)
                .collect();
            let newest = others
                .iter()
                .copied()
                .filter(|&c| self.newer(c, caller))
                .reduce(|a, b| if self.newer(a, b) { a } else { b });
            state.masters[master].policy = true;
            if let Some(newest) = newest {
                state.across_policies |= newest == FIFO;
                mark(state, master, (caller, newest));
                self.changing(state, master, caller, |m| m.line.retain(|&c| c != caller));
                return Answer::Superseded;
            }
            for victim in others {
                state.across_policies |= victim == FIFO;
                mark(state, master, (victim, caller));
                self.changing(state, master, caller, |m| m.line.retain(|&c| c != victim));
                notify(state, victim);
            }
        }
        let join = turn == 0 || caller == FIFO;
        let m = &mut state.masters[master];
        if !m.line.contains(&caller) {
            if !join {
                return Answer::NoPlace;
            }
            m.line.push(caller);
            m.line.sort_unstable();
        }
        let m = &state.masters[master];
        if self.first(m) == Some(caller) && (m.k.is_none() || m.k == Some(caller)) {
            state.masters[master].k = Some(caller);
            Answer::Taken
        } else {
            Answer::Waiting
        }
    }

    /// How a turn that neither won nor was superseded ends, as `queue::wait_in_line` decides.
    fn ends(&self, turn: u8, answers: &[Answer; MASTERS]) -> Option<Phase> {
        let spare = MASTERS - MAJORITY;
        let count = |answer| answers.iter().filter(|a| **a == answer).count();
        let (refusals, placeless) = (count(Answer::Policy), count(Answer::NoPlace));
        let unheard = count(Answer::Pending);
        if refusals > 0 && (self.rule == Rule::AnyPolicyRefusal || refusals + placeless > spare) {
            let theirs_may_win = refusals + placeless + unheard >= MAJORITY;
            return Some(if theirs_may_win || self.rule == Rule::AnyPolicyRefusal {
                Phase::Refused
            } else {
                Phase::Split
            });
        }
        (turn > 0 && placeless > spare).then_some(Phase::LostPlace)
    }
}

fn mark(state: &mut PoliciesState, master: usize, marked: (usize, usize)) {
    let marks = &mut state.masters[master].marks;
    if !marks.iter().any(|&(e, _)| e == marked.0) {
        marks.push(marked);
        marks.sort_unstable();
    }
}

fn notify(state: &mut PoliciesState, client: usize) {
    if matches!(state.phases[client], Phase::Asleep | Phase::Turn(..)) {
        state.notices[client] = true;
    }
}

fn send(state: &mut PoliciesState, client: usize, msg: Msg) {
    for connection in &mut state.wire[client] {
        connection.push(msg);
    }
}

impl Model for PoliciesModel {
    type State = PoliciesState;
    type Action = Step;

    fn init_states(&self) -> Vec<PoliciesState> {
        let master = Master {
            k: Some(HOLDER),
            line: Vec::new(),
            policy: false,
            marks: Vec::new(),
        };
        vec![PoliciesState {
            masters: [master.clone(), master.clone(), master],
            phases: [Phase::Holding, Phase::NotArrived, Phase::NotArrived],
            wire: Default::default(),
            notices: [false; CLIENTS],
            two_holders: false,
            across_policies: false,
            ran: [false; CLIENTS],
        }]
    }

    fn actions(&self, state: &PoliciesState, actions: &mut Vec<Step>) {
        for (client, phase) in state.phases.iter().enumerate() {
            for master in 0..MASTERS {
                if !state.wire[client][master].is_empty() {
                    actions.push(Step::Deliver { client, master });
                }
            }
            match phase {
                Phase::NotArrived => actions.push(Step::Arrive(client)),
                Phase::Asleep if state.notices[client] => actions.push(Step::Wake(client)),
                Phase::Turn(_, answers) => {
                    let taken = answers.iter().filter(|a| **a == Answer::Taken).count();
                    let superseded = answers.contains(&Answer::Superseded);
                    if (taken >= MAJORITY && !superseded) || !answers.contains(&Answer::Pending) {
                        actions.push(Step::Decide(client));
                    }
                }
                Phase::Holding => actions.push(Step::Finish(client)),
                _ => {}
            }
        }
    }

    fn next_state(&self, state: &PoliciesState, step: Step) -> Option<PoliciesState> {
        let mut next = state.clone();
        match step {
            Step::Arrive(client) | Step::Wake(client) => {
                let turn = u8::from(state.phases[client] == Phase::Asleep);
                next.notices[client] = false;
                next.phases[client] = Phase::Turn(turn, [Answer::Pending; MASTERS]);
                send(&mut next, client, Msg::Wait(turn));
            }
            Step::Deliver { client, master } => match next.wire[client][master].remove(0) {
                Msg::Wait(turn) => {
                    let answer = self.wait(&mut next, master, client, turn);
                    if let Phase::Turn(now, answers) = &mut next.phases[client]
                        && *now == turn
                    {
                        answers[master] = answer;
                    }
                }
                msg => self.changing(&mut next, master, client, |m| {
                    if msg != Msg::Leave && m.k == Some(client) {
                        m.k = None;
                    }
                    if msg != Msg::Undo {
                        m.line.retain(|&c| c != client);
                    }
                }),
            },
            Step::Decide(client) => {
                let Phase::Turn(turn, answers) = state.phases[client] else {
                    return None;
                };
                let taken = answers.iter().filter(|a| **a == Answer::Taken).count();
                if answers.contains(&Answer::Superseded) {
                    send(&mut next, client, Msg::Undo);
                    send(&mut next, client, Msg::Leave);
                    next.phases[client] = Phase::Superseded;
                } else if taken >= MAJORITY {
                    next.two_holders |= state.phases.contains(&Phase::Holding);
                    next.ran[client] = true;
                    next.phases[client] = Phase::Holding;
                } else {
                    if taken > 0 {
                        send(&mut next, client, Msg::Undo);
                    }
                    next.phases[client] = match self.ends(turn, &answers) {
                        Some(left) => {
                            send(&mut next, client, Msg::Leave);
                            left
                        }
                        None => Phase::Asleep,
                    };
                }
            }
            Step::Finish(client) => {
                send(&mut next, client, Msg::Release);
                next.phases[client] = Phase::Done;
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("one holder at a time", |_, s: &PoliciesState| {
                !s.two_holders
            }),
            Property::always(ONE_POLICY_STANDS, |_, s: &PoliciesState| {
                !(s.phases[FIFO] == Phase::Refused && s.phases[SUPERSEDING] == Phase::Refused)
            }),
            Property::always(OWN_POLICY, |_, s: &PoliciesState| !s.across_policies),
            Property::always(
                "no split with three masters heard",
                |_, s: &PoliciesState| !s.phases.contains(&Phase::Split),
            ),
            Property::always("no lost wake-up", |_, s: &PoliciesState| {
                let quiet = s.wire.iter().flatten().all(Vec::is_empty)
                    && !s.phases.iter().zip(&s.notices).any(|(phase, notice)| {
                        matches!(phase, Phase::NotArrived | Phase::Holding | Phase::Turn(..))
                            || (*phase == Phase::Asleep && *notice)
                    });
                !quiet || !s.phases.contains(&Phase::Asleep)
            }),
            Property::sometimes("the first-come waiter runs", |_, s: &PoliciesState| {
                s.ran[FIFO]
            }),
            Property::sometimes("the superseding waiter runs", |_, s: &PoliciesState| {
                s.ran[SUPERSEDING]
            }),
            Property::sometimes(
                "a waiter is refused for its policy",
                |_, s: &PoliciesState| s.phases.contains(&Phase::Refused),
            ),
        ]
    }
}

const ONE_POLICY_STANDS: &str = "one policy stands: never both waiters refused for it";
const OWN_POLICY: &str = "a superseding waiter is superseded by its own policy only";
