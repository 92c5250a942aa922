//! A model of `--order` (src/lock/kinds/order.rs), checked exhaustively by stateright: every
//! interleaving of a few runs with orders, the ORDER script on three masters, requests and
//! answers delayed and reordered, one master whose requests may be lost (a minority down), and
//! one run that dies at any step with its requests still on the wire (they may land later,
//! under the next holder).
//!
//! # The Lua it mirrors
//! ORDER (src/lock/scripts/order.rs): the register read, and raised to the order unless it
//! holds a higher one, in one atomic step per master, answering what it held before.
//!
//! # What is modelled
//! - **A run** (`src/commands/ordering.rs` over `order::check` and `order::raise`): reads the
//!   registers (step 1) and leaves as outdated when an answer is above its order; waits for the
//!   lock; once it holds it, sends the raise to every master (step 2) and decides as soon as a
//!   majority answered (`Until::DecidedAndSent`; it may also hear more first, which only adds
//!   answers): outdated when an answer is above its order (it releases), else it runs its
//!   command and then releases.
//! - **The lock** is a mutex: at most one run holds it, as Redlock promises within the
//!   validity (the argument leans on exactly that, and a raise confirmed after the validity
//!   ran out counts for nothing: `OrderError::Expired`). A run that dies frees it (its TTL
//!   runs out) while its raise may still be on the wire.
//! - **The network**: each request runs on its master at any moment after it was sent,
//!   whatever else runs in between, also after its run decided without it (a raise is sent
//!   to every master, and only a majority's answers are waited for), ran, finished or died;
//!   one master may lose any request sent to it.
//!
//! # Properties
//! - **No order runs after a higher one ran** (always).
//! - Runs are outdated, the highest order runs, and an order two runs share runs twice
//!   (sometimes: the model is not vacuous).
//!
//! # Known-bad rules it catches
//! - `Rule::OverwriteLower`: the script sets the register to any order, also a lower one (a
//!   plain SET). An outdated run lowers it on a majority, and an order between the two runs
//!   after the higher one.
//! - `Rule::FirstAnswer`: a run decides on the first answer instead of a majority's; the one
//!   master the higher order's raise did not reach is enough to let an older order run.
//! - `Rule::ReadOnly`: a run trusts its read before waiting and ignores what its raise under
//!   the lock answers (step 1 taken for the decision): a newer order that took the lock while
//!   it waited does not stop it.

use stateright::{Checker, Model, Property};

use crate::model_kit::check::{self, explore};
use crate::model_kit::{MAJORITY, MASTERS};

/// Which ORDER and which decision the runs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// As redlock does.
    Sound,
    /// Known-bad: the register is set to whatever order is raised.
    OverwriteLower,
    /// Known-bad: a run decides once one master answered.
    FirstAnswer,
    /// Known-bad: a run's raise never makes it outdated (only its read before waiting does).
    ReadOnly,
}

#[derive(Clone, Debug)]
pub struct OrderModel {
    /// Each run's order.
    pub orders: Vec<u8>,
    pub rule: Rule,
    /// One run may die.
    pub crash: bool,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Request {
    /// On the wire.
    Sent,
    /// Ran: what the register held before.
    Answered(u8),
    Lost,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Step 1: the read, before waiting.
    Reading([Request; MASTERS]),
    /// In line for the lock.
    Waiting,
    /// Step 2: holds the lock, raising.
    Raising([Request; MASTERS]),
    /// Its command runs (it holds the lock).
    Running,
    Ran,
    Outdated,
    /// Died; its raise may still be on the wire.
    Dead([Request; MASTERS]),
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct OrderState {
    registers: [u8; MASTERS],
    holder: Option<usize>,
    runs: Vec<Phase>,
    /// Raises still on the wire of runs that decided without them (or ran, or finished).
    late: Vec<[Request; MASTERS]>,
    /// The highest order whose command ran.
    highest_ran: u8,
    /// An order ran after a higher one.
    older_after_newer: bool,
    /// An order ran a second time.
    ran_again: bool,
    died: bool,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Step {
    Start(usize),
    /// `run`'s request to `master` runs there.
    Deliver {
        run: usize,
        master: usize,
    },
    /// The last master loses `run`'s request (it is down).
    Lose {
        run: usize,
        master: usize,
    },
    Decide(usize),
    Take(usize),
    Finish(usize),
    Die(usize),
}

/// The master whose requests may be lost: one is a minority, and which one is a naming.
const DOWN: usize = MASTERS - 1;

fn requests(phase: &Phase) -> Option<&[Request; MASTERS]> {
    match phase {
        Phase::Reading(r) | Phase::Raising(r) | Phase::Dead(r) => Some(r),
        _ => None,
    }
}

impl OrderModel {
    fn quorum(&self) -> usize {
        match self.rule {
            Rule::FirstAnswer => 1,
            _ => MAJORITY,
        }
    }
}

impl Model for OrderModel {
    type State = OrderState;
    type Action = Step;

    fn init_states(&self) -> Vec<OrderState> {
        vec![OrderState {
            registers: [0; MASTERS],
            holder: None,
            runs: vec![Phase::Idle; self.orders.len()],
            late: vec![[Request::Lost; MASTERS]; self.orders.len()],
            highest_ran: 0,
            older_after_newer: false,
            ran_again: false,
            died: false,
        }]
    }

    fn actions(&self, state: &OrderState, actions: &mut Vec<Step>) {
        for (run, phase) in state.runs.iter().enumerate() {
            for requests in requests(phase).into_iter().chain([&state.late[run]]) {
                for (master, request) in requests.iter().enumerate() {
                    if *request == Request::Sent {
                        actions.push(Step::Deliver { run, master });
                        if master == DOWN {
                            actions.push(Step::Lose { run, master });
                        }
                    }
                }
            }
            match phase {
                Phase::Idle => actions.push(Step::Start(run)),
                Phase::Reading(r) | Phase::Raising(r) if answered(r).count() >= self.quorum() => {
                    actions.push(Step::Decide(run))
                }
                Phase::Waiting if state.holder.is_none() => actions.push(Step::Take(run)),
                Phase::Running => actions.push(Step::Finish(run)),
                _ => {}
            }
            let alive = !matches!(phase, Phase::Ran | Phase::Outdated | Phase::Dead(_));
            if self.crash && !state.died && alive && *phase != Phase::Idle {
                actions.push(Step::Die(run));
            }
        }
    }

    fn next_state(&self, state: &OrderState, step: Step) -> Option<OrderState> {
        let mut next = state.clone();
        match step {
            Step::Start(run) => next.runs[run] = Phase::Reading([Request::Sent; MASTERS]),
            Step::Deliver { run, master } => {
                let order = self.orders[run];
                // A late request is a raise whose run has moved on: nobody hears its answer.
                let late = state.late[run][master] == Request::Sent;
                let raise = late || matches!(state.runs[run], Phase::Raising(_) | Phase::Dead(_));
                let held = state.registers[master];
                if raise && (order >= held || self.rule == Rule::OverwriteLower) {
                    next.registers[master] = order;
                }
                if late {
                    next.late[run][master] = Request::Lost;
                } else {
                    set(&mut next.runs[run], master, Request::Answered(held));
                }
            }
            Step::Lose { run, master } => {
                if state.late[run][master] == Request::Sent {
                    next.late[run][master] = Request::Lost;
                } else {
                    set(&mut next.runs[run], master, Request::Lost);
                }
            }
            Step::Decide(run) => {
                let order = self.orders[run];
                let (raising, requests) = match state.runs[run] {
                    Phase::Reading(r) => (false, r),
                    Phase::Raising(r) => (true, r),
                    _ => return None,
                };
                let outdated = answered(&requests).any(|held| held > order)
                    && !(raising && self.rule == Rule::ReadOnly);
                if raising {
                    // What is still on the wire stays there; what answered is done with.
                    next.late[run] = requests.map(|request| match request {
                        Request::Sent => Request::Sent,
                        _ => Request::Lost,
                    });
                }
                next.runs[run] = match (outdated, raising) {
                    (true, _) => Phase::Outdated,
                    (false, false) => Phase::Waiting,
                    (false, true) => Phase::Running,
                };
                if raising && outdated {
                    next.holder = None;
                }
                if raising && !outdated {
                    next.older_after_newer |= order < state.highest_ran;
                    next.ran_again |= order == state.highest_ran;
                    next.highest_ran = state.highest_ran.max(order);
                }
            }
            Step::Take(run) => {
                next.holder = Some(run);
                next.runs[run] = Phase::Raising([Request::Sent; MASTERS]);
            }
            Step::Finish(run) => {
                next.holder = None;
                next.runs[run] = Phase::Ran;
            }
            Step::Die(run) => {
                next.died = true;
                if state.holder == Some(run) {
                    next.holder = None;
                }
                // What it sent still arrives; a read changes nothing, so only a raise is kept.
                next.runs[run] = match state.runs[run] {
                    Phase::Raising(r) => Phase::Dead(r),
                    _ => Phase::Dead([Request::Lost; MASTERS]),
                };
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(
                "no order runs after a higher one ran",
                |_, s: &OrderState| !s.older_after_newer,
            ),
            Property::sometimes("a run is outdated", |_, s: &OrderState| {
                s.runs.contains(&Phase::Outdated)
            }),
            Property::sometimes(
                "the highest order runs",
                |m: &OrderModel, s: &OrderState| Some(&s.highest_ran) == m.orders.iter().max(),
            ),
            // Where two runs share an order (a retried pipeline).
            Property::sometimes(
                "the same order runs again",
                |m: &OrderModel, s: &OrderState| {
                    let mut orders = m.orders.clone();
                    orders.sort();
                    orders.dedup();
                    s.ran_again || orders.len() == m.orders.len()
                },
            ),
        ]
    }
}

fn answered(requests: &[Request; MASTERS]) -> impl Iterator<Item = u8> + '_ {
    requests.iter().filter_map(|r| match r {
        Request::Answered(held) => Some(*held),
        _ => None,
    })
}

fn set(phase: &mut Phase, master: usize, request: Request) {
    if let Phase::Reading(r) | Phase::Raising(r) | Phase::Dead(r) = phase {
        r[master] = request;
    }
}

const NO_OLDER_AFTER_NEWER: &str = "no order runs after a higher one ran";

fn checked(model: OrderModel) -> impl Checker<OrderModel> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    explore(model, threads)
}

/// Every property holds in `model` (and every `sometimes` is met): the kit's check, the
/// counterexample told as its actions.
fn holds(model: OrderModel) {
    check::holds(model, |_, path| format!("{:?}", path.into_actions()));
}

/// Three runs in every order of arrival, one with a repeated order (a retried pipeline), one
/// master losing requests, one run dying at any step.
#[test]
fn an_order_never_runs_after_a_higher_one() {
    for orders in [vec![1, 2, 3], vec![2, 1, 2]] {
        holds(OrderModel {
            orders,
            rule: Rule::Sound,
            crash: true,
        });
    }
}

/// The known-bad rules: each lets an older order run after a newer one.
#[test]
fn the_model_catches_a_register_that_goes_down_a_decision_on_one_answer_and_a_raise_unheard() {
    for rule in [Rule::OverwriteLower, Rule::FirstAnswer, Rule::ReadOnly] {
        let checker = checked(OrderModel {
            orders: vec![1, 2, 3],
            rule,
            crash: false,
        });
        let path = checker.discovery(NO_OLDER_AFTER_NEWER);
        assert!(path.is_some(), "{rule:?} was not caught");
        println!("{rule:?} caught: {:?}", path.unwrap().into_actions());
    }
}
