//! A model of the superseding line (`--supersede`, src/lock/kinds/supersede.rs), checked
//! exhaustively by stateright: a holder and a few waiters, each with an order and a ticket,
//! over three masters; every interleaving of their scripts, requests delayed and reordered
//! (each connection in order, as TCP), notices read late, and one waiter that may die at any
//! step with its requests lost on any masters (an evictor that reached only some of them).
//!
//! # The Lua it mirrors
//! WAIT_SUPERSEDE (src/lock/scripts/supersede.rs): the mark checked first; the places other
//! than the caller's and K's holder compared by (order, ticket, token); the caller marked and
//! dropped when a newer one is in line (waking whoever that lets in, `hand_off`), else every
//! older one dropped, marked and told; then WAIT's body (join, and take when first and K is
//! free). RELEASE, the undo of a partial hold, and LEAVE (src/lock/scripts/lock.rs, queue.rs):
//! K deleted where it is the caller's, the place dropped, the newly eligible woken.
//!
//! # What is modelled
//! - **A master** holds K (whose token), the line (places, first by ticket) and the marks.
//! - **The holder** holds K on every master at the start and releases it at any moment.
//! - **A waiter** arrives (its first turn joins on every master), sleeps until a notice, takes
//!   a turn (WAIT_SUPERSEDE on every master, join set: a place that is gone is made again,
//!   more than the client does, so the marks alone keep an evicted waiter out), and decides as
//!   `queue::wait_in_line` does: won once a majority took K and no answer said superseded;
//!   once all answered, superseded if any said so (undo, LEAVE everywhere, never runs), else
//!   back to sleep after undoing a partial hold. A holder releases at any moment.
//! - **Notices** are a flag per waiter, set by a publish while it waits and read at any later
//!   moment (a late notice). Waiters listen on every master.
//! - **A death**: one waiter may die at any step; each of its requests still on the wire may
//!   then run or be lost, master by master.
//!
//! # What is abstracted away
//! Time: no leases, no heartbeats (a turn is only ever started by a notice, so the no-lost-
//! wake-up check is strict), no TTLs: marks are never removed. On real masters they expire
//! (no turn renews them), and then the client's rule that a waiter makes its place in its
//! first turn only keeps an evicted one out, with no clock (src/lock/kinds/supersede.rs):
//! time here would cost the exhaustive search, so tests/supersede_late.rs checks it on real
//! masters. The line's policy (every waiter here supersedes). Masters do not fail but by
//! losing a dead waiter's requests.
//!
//! # Properties
//! - **One holder at a time** (always).
//! - **An evicted waiter never takes the lock afterwards**: no waiter wins a turn once marks
//!   name it on a majority (always).
//! - **A holder is never evicted**: no mark is written where K holds the marked token, and no
//!   running holder is marked on a majority (always).
//! - **No waiter evicted that is newer than its evictor** (always).
//! - **No lost wake-up** (always, in runs without a death): in a state where nothing can happen
//!   (nothing on the wire, no notice unread, nobody with a step of its own), no waiter sleeps.
//!   With a death, the dead waiter's partial hold and place go by their TTL and lease, which
//!   no notice announces: a heartbeat's case, as in the queue.
//! - The newest waiter runs, and a waiter is superseded (sometimes: not vacuous).
//!
//! # Known-bad rules it catches
//! - `Rule::NoMarkCheck`: WAIT_SUPERSEDE does not check the marks. An evicted waiter's turn,
//!   started by the eviction's own notice and still on the wire, runs after its evictor held
//!   and released the lock, joins again and takes it.
//! - `Rule::ArrivalOrder`: a waiter evicts whoever was placed before it on that master,
//!   whatever their orders. Masters that saw two waiters arrive in different orders let the
//!   older order evict the newer.
//!
//! # Bounds and cost (debug build, `cargo test --test models supersede -- --nocapture`)
//! Two waiters, no death: 2 204 005 states (542 193 distinct) for orders that agree with the
//! tickets or are equal, 2 159 350 (529 362) where they disagree, 35 steps deep, about 35-50 s
//! each; with a death, 6 254 698 (1 186 519), about 110 s. The known-bad rules are found in a
//! full search of 3 680 443 states (913 073 distinct, `NoMarkCheck`) and 13 735 176 (3 052 707,
//! `ArrivalOrder`). Three waiters are `#[ignore]`d (minutes).

use stateright::{Checker, Model, Property};

use crate::model_kit::check::{self, explore};
use crate::model_kit::{MAJORITY, MASTERS};

/// Which WAIT_SUPERSEDE the masters run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// As redlock does.
    Sound,
    /// Known-bad: the marks are not checked.
    NoMarkCheck,
    /// Known-bad: a waiter evicts the places placed before its own on that master.
    ArrivalOrder,
}

#[derive(Clone, Debug)]
pub struct SupersedeModel {
    /// Each waiter's (order, ticket); the token breaks ties by the waiter's number. Client 0 is
    /// the holder, waiters are 1..
    pub waiters: Vec<(u8, u8)>,
    pub rule: Rule,
    /// One waiter may die.
    pub crash: bool,
}

/// A request on a connection.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Msg {
    /// A turn (WAIT_SUPERSEDE, join set), answering into turn number `u8`.
    Wait(u8),
    /// Deletes K where it is the sender's (RELEASE also drops its place); wakes the newly
    /// eligible.
    Release,
    /// The undo of a partial hold: deletes K where it is the sender's, keeps the place.
    Undo,
    /// LEAVE: drops the place; wakes the newly eligible.
    Leave,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Answer {
    Pending,
    Taken,
    Waiting,
    Superseded,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Phase {
    NotArrived,
    /// In a turn (its number): each master's answer.
    Turn(u8, [Answer; MASTERS]),
    Asleep,
    Holding,
    Done,
    /// Left as superseded, never ran.
    Superseded,
    Dead,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Master {
    /// K's token (a client's number).
    k: Option<usize>,
    /// Places in line, in the order they were made here.
    line: Vec<usize>,
    /// (evicted, evictor).
    marks: Vec<(usize, usize)>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct SupersedeState {
    masters: [Master; MASTERS],
    phases: Vec<Phase>,
    /// Each client's connections: requests not yet run, in order.
    wire: Vec<[Vec<Msg>; MASTERS]>,
    notices: Vec<bool>,
    died: bool,
    /// Violations, recorded as they happen.
    took_after_eviction: bool,
    evicted_holder: bool,
    evicted_newer: bool,
    two_holders: bool,
    newest_ran: bool,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Step {
    Arrive(usize),
    /// The first request on `client`'s connection to `master` runs there.
    Deliver {
        client: usize,
        master: usize,
    },
    /// A dead client's first request to `master` is lost.
    Lose {
        client: usize,
        master: usize,
    },
    /// A sleeping waiter reads its notice and starts a turn.
    Wake(usize),
    Decide(usize),
    Finish(usize),
    Die(usize),
}

const HOLDER: usize = 0;

impl SupersedeModel {
    fn clients(&self) -> usize {
        self.waiters.len() + 1
    }

    /// Whether waiter `a` is newer than waiter `b`: (order, ticket, token).
    fn newer(&self, a: usize, b: usize) -> bool {
        let (oa, ta) = self.waiters[a - 1];
        let (ob, tb) = self.waiters[b - 1];
        (oa, ta, a) > (ob, tb, b)
    }

    fn newest(&self) -> usize {
        (1..self.clients())
            .max_by(|&a, &b| {
                if self.newer(a, b) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                }
            })
            .unwrap()
    }

    /// The first place in line (smallest ticket, then token).
    fn first(&self, master: &Master) -> Option<usize> {
        master
            .line
            .iter()
            .copied()
            .min_by_key(|&c| (self.waiters[c - 1].1, c))
    }

    /// Who may take K there: the first place, when K is free or its own.
    fn eligible(&self, master: &Master) -> Option<usize> {
        let first = self.first(master)?;
        (master.k.is_none() || master.k == Some(first)).then_some(first)
    }

    /// Wakes whoever `change` lets in on `master` (never `caller`): `wake_newly`.
    fn changing(
        &self,
        state: &mut SupersedeState,
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

    /// WAIT_SUPERSEDE of `caller` on `master`.
    fn wait(&self, state: &mut SupersedeState, master: usize, caller: usize) -> Answer {
        let m = &state.masters[master];
        if self.rule != Rule::NoMarkCheck && m.marks.iter().any(|&(evicted, _)| evicted == caller) {
            return Answer::Superseded;
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
        let older: Vec<usize> = match self.rule {
            Rule::ArrivalOrder => {
                let mine = m.line.iter().position(|&c| c == caller);
                others
                    .iter()
                    .copied()
                    .filter(|&c| {
                        let theirs = m.line.iter().position(|&o| o == c);
                        mine.is_none() || theirs < mine
                    })
                    .collect()
            }
            _ => others
                .iter()
                .copied()
                .filter(|&c| !self.newer(c, caller))
                .collect(),
        };
        if let (Some(newest), false) = (newest, self.rule == Rule::ArrivalOrder) {
            self.mark(state, master, (caller, newest), true);
            self.changing(state, master, caller, |m| m.line.retain(|&c| c != caller));
            return Answer::Superseded;
        }
        for victim in older {
            self.mark(state, master, (victim, caller), false);
            self.changing(state, master, caller, |m| m.line.retain(|&c| c != victim));
            notify(state, victim);
        }
        let m = &mut state.masters[master];
        if !m.line.contains(&caller) {
            m.line.push(caller);
            // Only the arrival rule reads the order places were made in: sorted otherwise, so
            // that states differing only by it are one.
            if self.rule != Rule::ArrivalOrder {
                m.line.sort_unstable();
            }
        }
        let m = &state.masters[master];
        if self.first(m) == Some(caller) && (m.k.is_none() || m.k == Some(caller)) {
            state.masters[master].k = Some(caller);
            Answer::Taken
        } else {
            Answer::Waiting
        }
    }

    /// Marks `evicted` on `master`, by `by`: another waiter's eviction, or (`evicted` the
    /// caller) a waiter superseding itself, which may hold K there from a partial hold of its
    /// own (its undo is on the way): that is its own going, not a holder evicted.
    fn mark(
        &self,
        state: &mut SupersedeState,
        master: usize,
        (evicted, by): (usize, usize),
        itself: bool,
    ) {
        let m = &mut state.masters[master];
        state.evicted_holder |= m.k == Some(evicted) && !itself;
        state.evicted_newer |= self.newer(evicted, by);
        if !m.marks.iter().any(|&(e, _)| e == evicted) {
            m.marks.push((evicted, by));
            m.marks.sort_unstable();
        }
    }

    /// How many masters mark `client`.
    fn marked(state: &SupersedeState, client: usize) -> usize {
        state
            .masters
            .iter()
            .filter(|m| m.marks.iter().any(|&(e, _)| e == client))
            .count()
    }

    fn send(state: &mut SupersedeState, client: usize, msg: Msg) {
        for connection in &mut state.wire[client] {
            connection.push(msg);
        }
    }
}

fn notify(state: &mut SupersedeState, client: usize) {
    if matches!(state.phases[client], Phase::Asleep | Phase::Turn(..)) {
        state.notices[client] = true;
    }
}

impl Model for SupersedeModel {
    type State = SupersedeState;
    type Action = Step;

    fn init_states(&self) -> Vec<SupersedeState> {
        let n = self.clients();
        let master = Master {
            k: Some(HOLDER),
            line: Vec::new(),
            marks: Vec::new(),
        };
        let mut phases = vec![Phase::NotArrived; n];
        phases[HOLDER] = Phase::Holding;
        vec![SupersedeState {
            masters: [master.clone(), master.clone(), master],
            phases,
            wire: vec![Default::default(); n],
            notices: vec![false; n],
            died: false,
            took_after_eviction: false,
            evicted_holder: false,
            evicted_newer: false,
            two_holders: false,
            newest_ran: false,
        }]
    }

    fn actions(&self, state: &SupersedeState, actions: &mut Vec<Step>) {
        for (client, phase) in state.phases.iter().enumerate() {
            for master in 0..MASTERS {
                if !state.wire[client][master].is_empty() {
                    actions.push(Step::Deliver { client, master });
                    if *phase == Phase::Dead {
                        actions.push(Step::Lose { client, master });
                    }
                }
            }
            match phase {
                Phase::NotArrived => actions.push(Step::Arrive(client)),
                Phase::Asleep if state.notices[client] => actions.push(Step::Wake(client)),
                Phase::Turn(_, answers) => {
                    let taken = answers.iter().filter(|a| **a == Answer::Taken).count();
                    let superseded = answers.contains(&Answer::Superseded);
                    let all = !answers.contains(&Answer::Pending);
                    if (taken >= MAJORITY && !superseded) || all {
                        actions.push(Step::Decide(client));
                    }
                }
                Phase::Holding => actions.push(Step::Finish(client)),
                _ => {}
            }
            let alive = matches!(phase, Phase::Turn(..) | Phase::Asleep);
            if self.crash && !state.died && alive {
                actions.push(Step::Die(client));
            }
        }
    }

    fn next_state(&self, state: &SupersedeState, step: Step) -> Option<SupersedeState> {
        let mut next = state.clone();
        match step {
            Step::Arrive(client) | Step::Wake(client) => {
                let turn = match state.phases[client] {
                    Phase::Asleep => 1,
                    _ => 0,
                };
                next.notices[client] = false;
                next.phases[client] = Phase::Turn(turn, [Answer::Pending; MASTERS]);
                Self::send(&mut next, client, Msg::Wait(turn));
            }
            Step::Deliver { client, master } => {
                let msg = next.wire[client][master].remove(0);
                match msg {
                    Msg::Wait(turn) => {
                        let answer = self.wait(&mut next, master, client);
                        if let Phase::Turn(now, answers) = &mut next.phases[client]
                            && *now == turn
                        {
                            answers[master] = answer;
                        }
                    }
                    Msg::Release | Msg::Undo | Msg::Leave => {
                        self.changing(&mut next, master, client, |m| {
                            if msg != Msg::Leave && m.k == Some(client) {
                                m.k = None;
                            }
                            if msg != Msg::Undo {
                                m.line.retain(|&c| c != client);
                            }
                        });
                    }
                }
            }
            Step::Lose { client, master } => {
                next.wire[client][master].remove(0);
            }
            Step::Decide(client) => {
                let Phase::Turn(_, answers) = state.phases[client] else {
                    return None;
                };
                let taken = answers.iter().filter(|a| **a == Answer::Taken).count();
                let superseded = answers.contains(&Answer::Superseded);
                if taken >= MAJORITY && !superseded {
                    next.took_after_eviction |= Self::marked(state, client) >= MAJORITY;
                    next.two_holders |= state.phases.contains(&Phase::Holding);
                    next.newest_ran |= client == self.newest();
                    next.phases[client] = Phase::Holding;
                } else if superseded {
                    Self::send(&mut next, client, Msg::Undo);
                    Self::send(&mut next, client, Msg::Leave);
                    next.phases[client] = Phase::Superseded;
                } else {
                    if taken > 0 {
                        Self::send(&mut next, client, Msg::Undo);
                    }
                    next.phases[client] = Phase::Asleep;
                }
            }
            Step::Finish(client) => {
                Self::send(&mut next, client, Msg::Release);
                next.phases[client] = Phase::Done;
            }
            Step::Die(client) => {
                next.died = true;
                next.phases[client] = Phase::Dead;
                next.notices[client] = false;
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("one holder at a time", |_, s: &SupersedeState| {
                !s.two_holders
            }),
            Property::always(EVICTED_NEVER_TAKES, |_, s: &SupersedeState| {
                !s.took_after_eviction
            }),
            Property::always("a holder is never evicted", |_, s: &SupersedeState| {
                !s.evicted_holder
                    && s.phases.iter().enumerate().all(|(client, phase)| {
                        *phase != Phase::Holding || SupersedeModel::marked(s, client) < MAJORITY
                    })
            }),
            Property::always(NEVER_NEWER, |_, s: &SupersedeState| !s.evicted_newer),
            // Without deaths: a dead waiter's lock and place go by their TTL and lease, which
            // no notice announces (the heartbeat's case, see `queue`).
            Property::always("no lost wake-up", |_, s: &SupersedeState| {
                let quiet = s.wire.iter().flatten().all(Vec::is_empty)
                    && !s
                        .phases
                        .iter()
                        .zip(&s.notices)
                        .any(|(phase, notice)| has_a_step(*phase, *notice));
                s.died || !quiet || !s.phases.contains(&Phase::Asleep)
            }),
            Property::sometimes("the newest waiter runs", |_, s: &SupersedeState| {
                s.newest_ran
            }),
            Property::sometimes("a waiter is superseded", |_, s: &SupersedeState| {
                s.phases.contains(&Phase::Superseded)
            }),
        ]
    }
}

/// Whether a client can move without a request running: it arrives, decides, finishes, or
/// reads a notice.
fn has_a_step(phase: Phase, notice: bool) -> bool {
    match phase {
        Phase::NotArrived | Phase::Holding | Phase::Turn(..) => true,
        Phase::Asleep => notice,
        _ => false,
    }
}

const EVICTED_NEVER_TAKES: &str = "an evicted waiter never takes the lock afterwards";
const NEVER_NEWER: &str = "no waiter evicted that is newer than its evictor";

fn checked(model: SupersedeModel) -> impl Checker<SupersedeModel> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    explore(model, threads)
}

/// Every property holds in `model` (and every `sometimes` is met): the kit's check, the
/// counterexample told as its actions.
fn holds(model: SupersedeModel) {
    check::holds(model, |_, path| format!("{:?}", path.into_actions()));
}

/// A holder and two waiters, arriving in every order on every master; with orders that agree
/// with the tickets, that disagree (the later arrival has the lower order), and equal (a
/// retried pipeline).
#[test]
fn the_superseding_line_keeps_the_queues_promises() {
    for waiters in [
        vec![(1, 1), (2, 2)],
        vec![(2, 1), (1, 2)],
        vec![(5, 1), (5, 2)],
    ] {
        holds(SupersedeModel {
            waiters,
            rule: Rule::Sound,
            crash: false,
        });
    }
}

/// The same, with one waiter dying at any step, its requests lost on any masters (an evictor
/// that reached only some of them): the safety properties hold; the wake-up is then owed to
/// the dead waiter's TTL and lease, as in the queue (see `queue`, "When a lost notice still
/// costs a heartbeat").
#[test]
fn an_evictor_dying_mid_eviction_breaks_nothing() {
    holds(SupersedeModel {
        waiters: vec![(1, 1), (2, 2)],
        rule: Rule::Sound,
        crash: true,
    });
}

/// Three waiters, no death: a longer line of evictions (minutes: `--ignored`).
#[test]
#[ignore]
fn three_waiters_supersede_in_turn() {
    holds(SupersedeModel {
        waiters: vec![(1, 1), (3, 2), (2, 3)],
        rule: Rule::Sound,
        crash: false,
    });
}

/// The known-bad rules, each caught by the property it breaks.
#[test]
fn the_model_catches_an_unchecked_mark_and_an_eviction_by_arrival() {
    for (rule, waiters, property) in [
        (Rule::NoMarkCheck, vec![(1, 1), (2, 2)], EVICTED_NEVER_TAKES),
        (Rule::ArrivalOrder, vec![(2, 1), (1, 2)], NEVER_NEWER),
    ] {
        let checker = checked(SupersedeModel {
            waiters,
            rule,
            crash: false,
        });
        let path = checker.discovery(property);
        assert!(path.is_some(), "{rule:?} was not caught");
        println!("{rule:?} caught: {:?}", path.unwrap().into_actions());
    }
}
