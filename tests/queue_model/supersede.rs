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
//! older one dropped, marked and told; then WAIT's body (the place made where it is missing
//! if `join` is set, else the answer that there is none; the take when first and K is free). RELEASE, the undo of a partial hold, and LEAVE (src/lock/scripts/lock.rs, queue.rs):
//! K deleted where it is the caller's, the place dropped, the newly eligible woken.
//!
//! # What is modelled
//! - **A master** holds K (whose token), the line (places, first by ticket) and the marks.
//! - **The holder** holds K on every master at the start and releases it at any moment.
//! - **A waiter** arrives (its first turn, the only one sent with `join`, makes its place on
//!   every master), sleeps until a notice, takes a turn (WAIT_SUPERSEDE on every master,
//!   without `join`: a place that is gone stays gone, `Line::rejoins`), and decides as
//!   `queue::wait_in_line` does: won once a majority took K and no answer said superseded;
//!   once all answered, superseded if any said so (undo, LEAVE everywhere, never runs); else,
//!   after its first turn, with no place on more masters than the quorum can spare, it lost
//!   its place (undo, LEAVE everywhere, exit 82, never runs); else back to sleep after
//!   undoing a partial hold.
//! - **The marks expire** (`expiry`): a master's marks (one hash, with a TTL only an eviction
//!   sets) may vanish at any moment once written, so no property rests on a mark lasting.
//!   Only a turn reads them, so the expiry is taken just before a turn runs there
//!   (`Step::ExpireThenDeliver`). Which clients a mark ever named is kept apart
//!   (`ever_marked`), for the properties to read.
//! - **Notices** are a flag per waiter, set by a publish while it waits and read at any later
//!   moment (a late notice). Waiters listen on every master.
//! - **A death**: one waiter may die at any step; each of its requests still on the wire may
//!   then run or be lost, master by master.
//! - **A lapse** (`lapse`): a sleeping waiter's place may go on any master, silently, as a
//!   lease does when the waiter is stopped between turns for longer than it (issue 47, item
//!   2: a SIGSTOPped waiter, a paused CI VM).
//!
//! # What is abstracted away
//! Time: no leases, no heartbeats (a turn is only ever started by a notice, so the no-lost-
//! wake-up check is strict), so a place goes only by an eviction, a release or LEAVE, or
//! where `lapse` is set by the lapse step, at any moment; the marks' TTL is the expiry step,
//! at any moment (sooner than on real masters, or never). The line's policy (every waiter here supersedes). Masters do not fail
//! but by losing a dead waiter's requests.
//!
//! # Properties
//! - **One holder at a time** (always).
//! - **An evicted waiter never takes the lock afterwards**: no waiter wins a turn once marks
//!   have named it on a majority, expired since or not (always).
//! - **An evicted waiter is told by whom while its marks last**: no waiter leaves as having
//!   lost its place while marks not yet expired name it on a majority (always).
//! - **Superseded means a mark named it**: a waiter leaves as superseded (exit 80) only
//!   when a mark named it; one whose place is gone and that no mark names leaves as having
//!   lost its place (exit 82), its own outcome (always).
//! - **A holder is never evicted**: no mark is written where K holds the marked token, and no
//!   running holder was ever marked on a majority (always).
//! - **No waiter evicted that is newer than its evictor** (always).
//! - **No lost wake-up** (always, in runs without a death or a lapse): in a state where nothing can happen
//!   (nothing on the wire, no notice unread, nobody with a step of its own), no waiter sleeps.
//!   With a death, the dead waiter's partial hold and place go by their TTL and lease, which
//!   no notice announces: a heartbeat's case, as in the queue.
//! - The newest waiter runs, a waiter is superseded, and (where marks expire) a waiter finds
//!   its place gone and leaves (sometimes: not vacuous).
//!
//! # Known-bad rules it catches
//! - `Rule::RejoinAfterFirstTurn`: a later turn makes a missing place again (`join` at every
//!   turn, as the client did before the first-turn rule). Waiter 1, evicted by waiter 2 on a
//!   majority while its own turn took the lock on the third master, sleeps while 2 runs and
//!   releases; its marks expire on a master 2 released; its turn makes its place again there
//!   in the empty line, takes the lock (a majority) and runs. This is why the rule is needed:
//!   the marks alone keep an evicted waiter out only while they last.
//! - `Rule::NoMarkCheck`: WAIT_SUPERSEDE does not check the marks. An evicted waiter still
//!   never takes the lock (its place is not made again), but its next turn finds no place
//!   where the marks name it, and it leaves saying it lost its place, not who evicted it.
//! - `Rule::ArrivalOrder`: a waiter evicts whoever was placed before it on that master,
//!   whatever their orders. Masters that saw two waiters arrive in different orders let the
//!   older order evict the newer.
//! - `Rule::LostAsSuperseded` (issue 47, item 2): a waiter that lost its place leaves as
//!   superseded (exit 80, which CI maps to "a newer build deploys"). A lone waiter whose place
//!   lapsed, with no mark anywhere, leaves as superseded by nobody.
//!
//! # Bounds and cost (debug build, `cargo test --test models supersede -- --nocapture`)
//! Two waiters, no death, marks that expire: 8 673 271 states (1 967 981 distinct, 44 and 45
//! steps deep) for orders that agree with the tickets or are equal, 8 745 517 (1 970 801, 41)
//! where they disagree, 80-90 s each on two loaded cores (2 204 005 and 2 159 350 when marks
//! never expired). With a death, marks that never expire: 6 254 698 (1 186 519, 35), about
//! 60 s; with expiry too, 23 271 030 (4 053 749, 43), about 300 s, `#[ignore]`d. The known-bad
//! rules are searched breadth first, on one thread, until caught: `RejoinAfterFirstTurn`
//! after 1 459 078 states (432 245 distinct, 20 deep, about 20 s), `NoMarkCheck` after
//! 402 657 (131 363, 17, 5 s), `ArrivalOrder` after 6 941 (2 686, 9). Three waiters are
//! `#[ignore]`d (minutes).

use stateright::{Model, Property};

use crate::model_kit::{MAJORITY, MASTERS};

mod checks;
mod scripts;

/// Which WAIT_SUPERSEDE the masters run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// As redlock does.
    Sound,
    /// Known-bad: the marks are not checked.
    NoMarkCheck,
    /// Known-bad: a waiter evicts the places placed before its own on that master.
    ArrivalOrder,
    /// Known-bad: a waiter's later turns make its place again where it is gone (`join` at
    /// every turn, as before the first-turn rule).
    RejoinAfterFirstTurn,
    /// Known-bad, the client's: a turn that found its place gone on more masters than the
    /// quorum can spare leaves as superseded (exit 80), as before issue 47, whether or not a
    /// mark named it.
    LostAsSuperseded,
}

#[derive(Clone, Debug)]
pub struct SupersedeModel {
    /// Each waiter's (order, ticket); the token breaks ties by the waiter's number. Client 0 is
    /// the holder, waiters are 1..
    pub waiters: Vec<(u8, u8)>,
    pub rule: Rule,
    /// One waiter may die.
    pub crash: bool,
    /// The marks may expire (`Step::ExpireThenDeliver`).
    pub expiry: bool,
    /// A sleeping waiter's place may lapse on any master (`Step::Lapse`).
    pub lapse: bool,
}

/// A request on a connection.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Msg {
    /// A turn (WAIT_SUPERSEDE), answering into turn number `u8`: 0, the first, is sent with
    /// `join`, the later ones without.
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
    /// No place there, and the turn did not make one (a later turn: no `join`).
    NoPlace,
    /// A later turn made the place again, and waits (`RejoinAfterFirstTurn` only; the
    /// client counts these as `remade`).
    Remade,
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
    /// Left having found its place gone on more masters than the quorum can spare (lapsed,
    /// or evicted with the mark since expired): never ran, and exits 82, not as superseded
    /// (no mark it can read names it).
    LostPlace,
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
    /// A place lapsed (`Step::Lapse`).
    lapsed: bool,
    /// Each master's clients that a mark ever named there (a bit per client), kept when the
    /// marks expire: what the properties read.
    ever_marked: [u8; MASTERS],
    /// Violations, recorded as they happen.
    took_after_eviction: bool,
    evicted_holder: bool,
    evicted_newer: bool,
    two_holders: bool,
    /// A waiter left as having lost its place while marks (not yet expired) named it on a
    /// majority: it should have been told who evicted it.
    evictor_untold: bool,
    /// A waiter left as superseded that no mark named: it would report an evictor it does
    /// not have (exit 80, which CI takes for a newer deploy).
    superseded_unmarked: bool,
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
    /// A sleeping waiter's place on `master` lapses: it was stopped between turns for longer
    /// than its lease (SIGSTOP, a paused VM, a throttled container). Nothing is published.
    Lapse {
        client: usize,
        master: usize,
    },
    /// A sleeping waiter reads its notice and starts a turn.
    Wake(usize),
    Decide(usize),
    Finish(usize),
    Die(usize),
    /// The marks on `master` expire (the hash goes: only an eviction writes it and sets its
    /// TTL, and the model has no time, so any moment will do), and then the first request on
    /// `client`'s connection there, a turn, runs. Only a turn reads the marks, so no script
    /// can tell an expiry at any earlier moment from this one: the expiry is taken here alone,
    /// which spares the states that differ only by when it came.
    ExpireThenDeliver {
        client: usize,
        master: usize,
    },
}

const HOLDER: usize = 0;

impl SupersedeModel {
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
            lapsed: false,
            ever_marked: [0; MASTERS],
            took_after_eviction: false,
            evicted_holder: false,
            evicted_newer: false,
            two_holders: false,
            evictor_untold: false,
            superseded_unmarked: false,
            newest_ran: false,
        }]
    }

    fn actions(&self, state: &SupersedeState, actions: &mut Vec<Step>) {
        for (client, phase) in state.phases.iter().enumerate() {
            for master in 0..MASTERS {
                if !state.wire[client][master].is_empty() {
                    actions.push(Step::Deliver { client, master });
                    if self.expiry
                        && matches!(state.wire[client][master][0], Msg::Wait(_))
                        && !state.masters[master].marks.is_empty()
                    {
                        actions.push(Step::ExpireThenDeliver { client, master });
                    }
                    if *phase == Phase::Dead {
                        actions.push(Step::Lose { client, master });
                    }
                }
            }
            if self.lapse && *phase == Phase::Asleep {
                for master in 0..MASTERS {
                    if state.masters[master].line.contains(&client) {
                        actions.push(Step::Lapse { client, master });
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
            Step::Deliver { client, master } | Step::ExpireThenDeliver { client, master } => {
                if matches!(step, Step::ExpireThenDeliver { .. }) {
                    next.masters[master].marks.clear();
                }
                let msg = next.wire[client][master].remove(0);
                match msg {
                    Msg::Wait(turn) => {
                        let answer = self.wait(&mut next, master, client, turn);
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
            Step::Lapse { client, master } => {
                next.lapsed = true;
                next.masters[master].line.retain(|&c| c != client);
            }
            Step::Decide(client) => {
                let Phase::Turn(turn, answers) = state.phases[client] else {
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
                    next.superseded_unmarked |= Self::marked(state, client) == 0;
                    Self::send(&mut next, client, Msg::Undo);
                    Self::send(&mut next, client, Msg::Leave);
                    next.phases[client] = Phase::Superseded;
                } else {
                    if taken > 0 {
                        Self::send(&mut next, client, Msg::Undo);
                    }
                    next.phases[client] = if lost_its_place(turn, &answers) {
                        Self::send(&mut next, client, Msg::Leave);
                        if self.rule == Rule::LostAsSuperseded {
                            next.superseded_unmarked |= Self::marked(state, client) == 0;
                            Phase::Superseded
                        } else {
                            next.evictor_untold |= Self::marked_now(state, client) >= MAJORITY;
                            Phase::LostPlace
                        }
                    } else {
                        Phase::Asleep
                    };
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
        let mut properties = vec![
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
            Property::always(EVICTOR_TOLD, |_, s: &SupersedeState| !s.evictor_untold),
            Property::always(SUPERSEDED_ONLY_MARKED, |_, s: &SupersedeState| {
                !s.superseded_unmarked
            }),
            // Without deaths or lapses: a dead waiter's lock and place go by their TTL and
            // lease, and a lapse is silent; no notice announces either (the heartbeat's case,
            // see `queue`).
            Property::always("no lost wake-up", |_, s: &SupersedeState| {
                let quiet = s.wire.iter().flatten().all(Vec::is_empty)
                    && !s
                        .phases
                        .iter()
                        .zip(&s.notices)
                        .any(|(phase, notice)| has_a_step(*phase, *notice));
                s.died || s.lapsed || !quiet || !s.phases.contains(&Phase::Asleep)
            }),
            Property::sometimes("the newest waiter runs", |_, s: &SupersedeState| {
                s.newest_ran
            }),
        ];
        // A lone waiter has nobody to supersede it.
        if self.waiters.len() > 1 {
            properties.push(Property::sometimes(
                "a waiter is superseded",
                |_, s: &SupersedeState| s.phases.contains(&Phase::Superseded),
            ));
        }
        // Only an expired mark or a lapse leaves a waiter without a place and without a mark.
        if self.expiry || self.lapse {
            properties.push(Property::sometimes(
                LOSES_ITS_PLACE,
                |_, s: &SupersedeState| s.phases.contains(&Phase::LostPlace),
            ));
        }
        properties
    }
}

/// Whether a turn that neither won nor was superseded lost the waiter its place, as
/// `queue::wait_in_line` decides: after the first turn, a place made again on more masters
/// than the quorum can spare (it had lapsed), or none on that many (a turn without `join`).
fn lost_its_place(turn: u8, answers: &[Answer; MASTERS]) -> bool {
    let spare = MASTERS - MAJORITY;
    let count = |answer| answers.iter().filter(|a| **a == answer).count();
    turn > 0 && (count(Answer::Remade) > spare || count(Answer::NoPlace) > spare)
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
const EVICTOR_TOLD: &str = "a waiter evicted while its marks last is told by whom";
const LOSES_ITS_PLACE: &str = "a waiter finds its place gone and leaves";
const SUPERSEDED_ONLY_MARKED: &str = "a waiter leaves as superseded only when a mark named it";
