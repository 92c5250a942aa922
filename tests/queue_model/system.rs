//! The whole system as a stateright `Model`: three masters, a few clients, the connections
//! between them, the wake notices, and the faults; its actions, and the properties checked.

use stateright::{Model, Property};

use super::client::{Client, MASTERS, Phase};
use super::master::{Master, Ran, Request, Token};
use super::protocol::{Kind, Protocol, Rules, Sleep};
use super::start::{self, Start};
use super::{properties, symmetry};

/// What is checked: the protocol, where the run starts, which faults.
#[derive(Clone, Copy, Debug)]
pub struct QueueModel {
    pub protocol: Protocol,
    pub kind: Kind,
    pub start: Start,
    /// One client may crash (its place lapses, its lock expires).
    pub crash: bool,
    /// One waiter may give up or be interrupted (LEAVE).
    pub leave: bool,
    /// How many timers (heartbeats, backoffs) may fire in one run.
    pub timers: u8,
    /// Explore fewer interleavings and states, losing none that could break a property: the
    /// masters' names do not matter (`symmetry`), and steps that commute with every other go
    /// first, alone (`QueueModel::independent_steps`).
    pub reduced: bool,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    pub masters: [Master; MASTERS],
    pub clients: Vec<Client>,
    /// How many timers fired so far.
    pub timers: u8,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A newcomer sends ACQUIRE (with a ticket wanted) to every master.
    Arrive(Token),
    /// The oldest request on `client`'s connection to `master` runs there.
    Run { client: Token, master: usize },
    /// A refused newcomer subscribes on `masters` (a bit each), then sends WAIT everywhere.
    Listen { client: Token, masters: u8 },
    /// A sleeping waiter reads its notices (`Notices::next`): a turn.
    Wake(Token),
    /// A sleeping waiter's sleep ends: a turn (a timer, unless the sleep was `Soon`).
    Timer(Token),
    /// The holder releases the lock (it sends RELEASE everywhere and is gone).
    Release(Token),
    /// A waiter gives up or is interrupted: it sends LEAVE everywhere (after an undo, mid-turn).
    Leave(Token),
    /// A client dies.
    Crash(Token),
    /// A dead client's place lapses on `master` (its lease ran out).
    Lapse { client: Token, master: usize },
    /// A dead client's lock or slot expires on `master` (its TTL ran out).
    Expire { client: Token, master: usize },
}

impl Model for QueueModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        start::states(self.start, self.rules())
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if self.reduced && self.independent_steps(state, actions) {
            return;
        }
        let crashed = state.clients.iter().any(|c| c.phase == Phase::Crashed);
        let left = state.clients.iter().any(|c| c.phase == Phase::Left);
        for (i, client) in state.clients.iter().enumerate() {
            let token = i as Token;
            match client.phase {
                Phase::Start => actions.push(Action::Arrive(token)),
                Phase::Joining => {
                    for &masters in self.rules().listen_sets() {
                        actions.push(Action::Listen {
                            client: token,
                            masters,
                        });
                    }
                }
                Phase::Sleeping(sleep) => {
                    if client.noticed {
                        actions.push(Action::Wake(token));
                    }
                    // A timer may fire while a notice is still on the wire (then the turn
                    // finds it unread after).
                    if !sleep.is_timer() || state.timers < self.timers {
                        actions.push(Action::Timer(token));
                    }
                }
                Phase::Outside if state.timers < self.timers => {
                    actions.push(Action::Timer(token));
                }
                Phase::Holding => actions.push(Action::Release(token)),
                _ => {}
            }
            for master in 0..MASTERS {
                if !client.sent[master].is_empty() {
                    actions.push(Action::Run {
                        client: token,
                        master,
                    });
                }
            }
            if self.leave && !left && matches!(client.phase, Phase::Turn | Phase::Sleeping(_)) {
                actions.push(Action::Leave(token));
            }
            let alive = !matches!(client.phase, Phase::Done | Phase::Left | Phase::Crashed);
            if self.crash && !crashed && alive {
                actions.push(Action::Crash(token));
            }
            if client.phase == Phase::Crashed {
                for (master, m) in state.masters.iter().enumerate() {
                    if m.has_place(token) {
                        actions.push(Action::Lapse {
                            client: token,
                            master,
                        });
                    }
                    if m.lock == Some(token) || m.slots & (1 << token) != 0 {
                        actions.push(Action::Expire {
                            client: token,
                            master,
                        });
                    }
                }
            }
        }
    }

    fn next_state(&self, state: &State, action: Action) -> Option<State> {
        let mut next = state.clone();
        self.apply(&mut next, action);
        Some(if self.reduced {
            symmetry::canonical(next)
        } else {
            next
        })
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::of(self)
    }
}

impl QueueModel {
    pub fn rules(&self) -> Rules {
        Rules {
            protocol: self.protocol,
            kind: self.kind,
        }
    }

    /// Pushes the steps of one client that commute with every step of every other client and
    /// change nothing a property reads, if there are such; then exploring only them loses no
    /// state that breaks a property (partial-order reduction). Any path reordered to take each
    /// such step as soon as it is enabled ends in the same state, and a state that the reduced
    /// exploration skips still has such a step pending: it is not quiescent, and holders,
    /// arrivals and who was served are those of the state after the step, which is explored.
    /// - A request that changes nothing on its master, now or ever: an undo, RELEASE or
    ///   LEAVE where the caller has no lock and no place (only its own later requests, behind
    ///   this one on the connection, could make them). It is not waited for.
    /// - A newcomer's arrival (its ACQUIREs are then on the wire, which only delays them) and
    ///   its subscription (nobody publishes to it before its WAIT places it), while no client
    ///   may still die: a death before either is not the same as one after.
    fn independent_steps(&self, state: &State, actions: &mut Vec<Action>) -> bool {
        let may_die = self.crash && !state.clients.iter().any(|c| c.phase == Phase::Crashed);
        for (i, client) in state.clients.iter().enumerate() {
            let token = i as Token;
            for (master, wire) in client.sent.iter().enumerate() {
                let Some(sent) = wire.oldest() else { continue };
                let m = state.masters[master];
                let mut after = m;
                let ran = after.run(token, sent.request, self.rules());
                let inert = !matches!(sent.request, Request::Acquire | Request::Wait { .. });
                if inert && after == m && ran.woke == 0 {
                    actions.push(Action::Run {
                        client: token,
                        master,
                    });
                    return true;
                }
            }
            match client.phase {
                Phase::Start if !may_die => actions.push(Action::Arrive(token)),
                Phase::Joining if !may_die => {
                    for &masters in self.rules().listen_sets() {
                        actions.push(Action::Listen {
                            client: token,
                            masters,
                        });
                    }
                }
                _ => continue,
            }
            return true;
        }
        false
    }

    /// Applies `action`; returns what a script that ran did (for the trace).
    pub fn apply(&self, state: &mut State, action: Action) -> Option<Ran> {
        match action {
            Action::Arrive(c) => {
                state.clients[c as usize].round(Request::Acquire, Phase::Acquiring);
            }
            Action::Run { client, master } => return Some(self.run(state, client, master)),
            Action::Listen { client, masters } => {
                let client = &mut state.clients[client as usize];
                client.listening = masters;
                let ticket = client.ticket;
                client.round(Request::Wait { ticket }, Phase::Turn);
            }
            Action::Wake(c) => {
                let client = &mut state.clients[c as usize];
                client.noticed = false;
                client.woken = true;
                let ticket = client.ticket;
                client.round(Request::Wait { ticket }, Phase::Turn);
            }
            Action::Timer(c) => {
                let client = &mut state.clients[c as usize];
                if client.phase != Phase::Sleeping(Sleep::Soon) {
                    state.timers += 1;
                }
                if client.phase == Phase::Outside {
                    client.round(Request::Acquire, Phase::Acquiring);
                } else {
                    let ticket = client.ticket;
                    client.round(Request::Wait { ticket }, Phase::Turn);
                }
            }
            Action::Release(c) => {
                let client = &mut state.clients[c as usize];
                client.send(Request::Release {
                    announce: true,
                    reseat: None,
                });
                client.phase = Phase::Done;
            }
            Action::Leave(c) => {
                let client = &mut state.clients[c as usize];
                if client.phase == Phase::Turn {
                    // The interrupted turn may have taken the lock somewhere: undo, then leave.
                    client.stop_listening();
                    client.send(Request::Release {
                        announce: false,
                        reseat: None,
                    });
                }
                client.send(Request::Leave);
                client.unsubscribe();
                client.phase = Phase::Left;
            }
            Action::Crash(c) => {
                let client = &mut state.clients[c as usize];
                client.stop_listening();
                client.unsubscribe();
                client.phase = Phase::Crashed;
            }
            Action::Lapse { client, master } => state.masters[master].lapse(client),
            Action::Expire { client, master } => {
                let master = &mut state.masters[master];
                master.slots &= !(1 << client);
                if master.lock == Some(client) {
                    master.lock = None;
                }
            }
        }
        None
    }

    fn run(&self, state: &mut State, token: Token, master: usize) -> Ran {
        let sent = state.clients[token as usize].sent[master].pop();
        let sent = sent.expect("a request on the wire");
        if sent.request == Request::Acquire && !state.clients[token as usize].arrived {
            let behind = properties::placed_on_a_majority(state) & !(1 << token);
            let client = &mut state.clients[token as usize];
            client.arrived = true;
            client.behind = behind;
        }
        let ran = state.masters[master].run(token, sent.request, self.rules());
        for (i, waiter) in state.clients.iter_mut().enumerate() {
            // Published on a channel it does not listen to here: nobody hears it.
            if ran.woke & (1 << i) != 0 && waiter.listening & (1 << master) != 0 {
                waiter.noticed = true;
            }
        }
        let client = &mut state.clients[token as usize];
        if let (true, Some(answer)) = (sent.awaited, ran.answer) {
            client.answer(master, answer, self.rules());
        }
        ran
    }
}
