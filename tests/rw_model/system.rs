//! The whole system as a stateright `Model`: three masters, a few clients, the connections
//! between them, the wake notices, the timers and the faults; its actions.

use stateright::{Model, Property};

use super::client::MASTERS;
use super::client::{Client, Phase};
use super::master::{Master, Ran, Request, Token};
use super::protocol::{LISTEN_SETS, Mode, Rules};
use super::start::{self, Start};
use super::{properties, symmetry};

/// What is checked: the rules, where the run starts, which faults.
#[derive(Clone, Copy, Debug)]
pub struct RwModel {
    pub rules: Rules,
    pub start: Start,
    /// One client may die (its place lapses, its K or share expires).
    pub crash: bool,
    /// One waiter may give up or be interrupted (LEAVE).
    pub leave: bool,
    /// A holder may renew once (EXTEND).
    pub extend: bool,
    /// How many timers (heartbeats, backoffs) may fire in one run.
    pub timers: u8,
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
    /// A newcomer sends ACQUIRE (the foreign client SET NX) to every master.
    Arrive(Token),
    /// The oldest request on `client`'s connection to `master` runs there.
    Run { client: Token, master: usize },
    /// A refused newcomer subscribes on `masters` (a bit each), then sends WAIT everywhere.
    Listen { client: Token, masters: u8 },
    /// A sleeping waiter reads its notices (`Notices::next`): a turn.
    Wake(Token),
    /// A sleeping waiter's heartbeat or backoff fires (a turn), or a refused newcomer's backoff
    /// (it arrives again).
    Timer(Token),
    /// The holder renews: EXTEND to every master, answers awaited.
    Extend(Token),
    /// The holder releases (it sends RELEASE everywhere and is gone).
    Release(Token),
    /// A waiter gives up or is interrupted: LEAVE everywhere (after an undo, mid-turn).
    Leave(Token),
    /// A client dies.
    Crash(Token),
    /// A dead client's place lapses on `master` (its lease ran out).
    Lapse { client: Token, master: usize },
    /// A dead client's K or share expires on `master` (its TTL ran out).
    Expire { client: Token, master: usize },
}

impl Model for RwModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        start::states(self.start)
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if self.independent_steps(state, actions) {
            return;
        }
        let crashed = state.clients.iter().any(|c| c.phase == Phase::Crashed);
        let left = state.clients.iter().any(|c| c.phase == Phase::Left);
        let timer = state.timers < self.timers;
        for (i, client) in state.clients.iter().enumerate() {
            let token = i as Token;
            match client.phase {
                Phase::Start => actions.push(Action::Arrive(token)),
                Phase::Joining => {
                    for masters in LISTEN_SETS {
                        actions.push(Action::Listen {
                            client: token,
                            masters,
                        });
                    }
                }
                Phase::Sleeping => {
                    if client.noticed {
                        actions.push(Action::Wake(token));
                    }
                    // A timer may fire while a notice is still on the wire (then the turn
                    // finds it unread after).
                    if timer {
                        actions.push(Action::Timer(token));
                    }
                }
                Phase::Outside if timer => actions.push(Action::Timer(token)),
                Phase::Holding => {
                    actions.push(Action::Release(token));
                    if self.extend && !client.renewed && client.mode != Mode::Foreign {
                        actions.push(Action::Extend(token));
                    }
                }
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
            if self.leave && !left && matches!(client.phase, Phase::Turn | Phase::Sleeping) {
                actions.push(Action::Leave(token));
            }
            if self.crash && !crashed && client.is_alive() {
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
                    let mut expired = *m;
                    expired.expire(token, client.mode);
                    if expired != *m {
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
        Some(symmetry::canonical(next))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::of(self)
    }
}

impl RwModel {
    /// Pushes the steps of one client that commute with every step of every other client and
    /// change nothing a property reads, if there are such; then exploring only them loses no
    /// state that breaks a property (partial-order reduction, as in tests/queue_model). Any
    /// path reordered to take each such step as soon as it is enabled ends in the same state,
    /// and a state that the reduced exploration skips still has such a step pending: it is not
    /// settled, and holders, arrivals and who was served are those of the state after it.
    /// - A request not waited for that changes nothing on its master, now or ever (a release,
    ///   an undo, a LEAVE or a DEL where the caller has no K, no share and no place: only its
    ///   own later requests, behind this one on the connection, could give it one).
    /// - A newcomer's arrival (its requests are then on the wire, which only delays them) and
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
                let ran = after.run(token, client.mode, sent.request, self.rules);
                let inert = matches!(
                    sent.request,
                    Request::Release { .. } | Request::Leave | Request::Del
                );
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
                    for masters in LISTEN_SETS {
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
        fn client(state: &mut State, c: Token) -> &mut Client {
            &mut state.clients[c as usize]
        }
        match action {
            Action::Arrive(c) => {
                let client = client(state, c);
                let request = match client.mode {
                    Mode::Foreign => Request::Set,
                    _ => Request::Acquire,
                };
                client.round(request, Phase::Acquiring);
            }
            Action::Run { client, master } => return Some(self.run(state, client, master)),
            Action::Listen { client: c, masters } => {
                let client = client(state, c);
                client.listening = masters;
                client.queued = true;
                let ticket = client.ticket;
                client.round(Request::Wait { ticket }, Phase::Turn);
            }
            Action::Wake(c) => {
                let client = client(state, c);
                client.noticed = false;
                let ticket = client.ticket;
                client.round(Request::Wait { ticket }, Phase::Turn);
            }
            Action::Timer(c) => {
                state.timers += 1;
                let client = client(state, c);
                if client.phase == Phase::Outside {
                    let request = match client.mode {
                        Mode::Foreign => Request::Set,
                        _ => Request::Acquire,
                    };
                    client.round(request, Phase::Acquiring);
                } else {
                    let ticket = client.ticket;
                    client.round(Request::Wait { ticket }, Phase::Turn);
                }
            }
            Action::Extend(c) => {
                let client = client(state, c);
                client.renewed = true;
                client.round(Request::Extend, Phase::Renewing);
            }
            Action::Release(c) => {
                let client = client(state, c);
                client.send(client.release(true));
                client.phase = Phase::Done;
            }
            Action::Leave(c) => {
                let client = client(state, c);
                if client.phase == Phase::Turn {
                    // The interrupted turn may have taken K somewhere: undo, then leave.
                    client.stop_listening();
                    client.send(Request::Release { announce: false });
                }
                client.send(Request::Leave);
                client.unsubscribe();
                client.phase = Phase::Left;
            }
            Action::Crash(c) => {
                let client = client(state, c);
                client.stop_listening();
                client.unsubscribe();
                client.phase = Phase::Crashed;
            }
            Action::Lapse { client, master } => state.masters[master].lapse(client),
            Action::Expire { client, master } => {
                let mode = state.clients[client as usize].mode;
                state.masters[master].expire(client, mode);
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
        let mode = state.clients[token as usize].mode;
        let ran = state.masters[master].run(token, mode, sent.request, self.rules);
        for (i, waiter) in state.clients.iter_mut().enumerate() {
            // Published on a channel it does not listen to here: nobody hears it.
            if ran.woke & (1 << i) != 0 && waiter.listening & (1 << master) != 0 {
                waiter.noticed = true;
            }
        }
        let client = &mut state.clients[token as usize];
        if let (true, Some(answer)) = (sent.awaited, ran.answer) {
            client.answer(master, answer, self.rules);
        }
        ran
    }
}
