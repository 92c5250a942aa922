//! The system every model explores: three masters, a few clients, the connections between
//! them (each a TCP stream: a master runs a connection's requests in order, and any message
//! may be delayed behind any other), the wake notices, the timers and the faults (a client
//! that dies, a waiter that leaves, leases and TTLs that run out after a death). A model says
//! what its masters store and run and how its clients decide ([`Protocol`]); the steps, their
//! order, the reductions and the delivery are here, once.

use std::fmt::Debug;
use std::hash::Hash;

use super::client::{Client, Phase};
use super::{MAJORITY, MASTERS, Token, symmetry};

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct State<M, C> {
    pub masters: [M; MASTERS],
    pub clients: Vec<C>,
    /// How many timers fired so far.
    pub timers: u8,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A newcomer sends ACQUIRE (with a ticket wanted; the foreign client SET NX) to every
    /// master.
    Arrive(Token),
    /// The oldest request on `client`'s connection to `master` runs there.
    Run { client: Token, master: usize },
    /// A refused newcomer subscribes on `masters` (a bit each), then sends WAIT everywhere.
    Listen { client: Token, masters: u8 },
    /// A sleeping waiter reads its notices (`Notices::next`): a turn.
    Wake(Token),
    /// A sleeping waiter's sleep ends (a turn), or a refused newcomer's backoff (it arrives
    /// again).
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
    /// A dead client's lock, slot or share expires on `master` (its TTL ran out).
    Expire { client: Token, master: usize },
    /// A waiter's connection to `master` breaks (a fault, once per run where the bounds allow
    /// it): what was on the wire there is gone, after the oldest request ran there with its
    /// answer lost (`ran`) or not; an awaited answer from there is an error; what else goes
    /// with that connection is the model's (`Protocol::broken`).
    Break {
        client: Token,
        master: usize,
        ran: bool,
    },
}

/// What running one script did that the rest of the system sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ran<A> {
    pub answer: Option<A>,
    /// The waiters (a bit each) on whose wake channels it published.
    pub woke: u8,
    /// A release or an undo gave up what the caller held here.
    pub released: bool,
}

impl<A> Default for Ran<A> {
    fn default() -> Self {
        Ran {
            answer: None,
            woke: 0,
            released: false,
        }
    }
}

/// A script's run that answers `answer` and does nothing else the system sees.
pub fn answered<A>(answer: A) -> Ran<A> {
    Ran {
        answer: Some(answer),
        ..Ran::default()
    }
}

/// The faults and bounds of a run.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// One client may die.
    pub crash: bool,
    /// One waiter may give up or be interrupted (LEAVE).
    pub leave: bool,
    /// How many timers (heartbeats, backoffs) may fire in one run.
    pub timers: u8,
    /// One waiter's connection to one master may break, once (`Action::Break`).
    pub breaks: bool,
    /// Explore fewer interleavings and states, losing none that could break a property: the
    /// masters' names do not matter (`symmetry`), and steps that commute with every other go
    /// first, alone (`independent_steps`).
    pub reduced: bool,
}

/// The types a model's clients are made of: what they send, what they are answered, how they
/// sleep, and what the model keeps of each besides (`(Request, Answer, Sleep, Own)`).
pub trait Parts {
    type Request: Copy + Eq + Ord + Hash + Debug;
    type Answer: Copy + Eq + Ord + Hash + Debug;
    type Sleep: Copy + Eq + Ord + Hash + Debug;
    type Own: Copy + Eq + Ord + Hash + Debug;
}

impl<R, A, S, X> Parts for (R, A, S, X)
where
    R: Copy + Eq + Ord + Hash + Debug,
    A: Copy + Eq + Ord + Hash + Debug,
    S: Copy + Eq + Ord + Hash + Debug,
    X: Copy + Eq + Ord + Hash + Debug,
{
    type Request = R;
    type Answer = A;
    type Sleep = S;
    type Own = X;
}

pub type RequestOf<P> = <<P as Protocol>::Parts as Parts>::Request;
pub type AnswerOf<P> = <<P as Protocol>::Parts as Parts>::Answer;
pub type SleepOf<P> = <<P as Protocol>::Parts as Parts>::Sleep;
pub type ClientOf<P> =
    Client<RequestOf<P>, AnswerOf<P>, SleepOf<P>, <<P as Protocol>::Parts as Parts>::Own>;
pub type StateOf<P> = State<<P as Protocol>::Master, ClientOf<P>>;

/// What a model says of its masters and clients; the system does the rest.
pub trait Protocol {
    type Master: Copy + Eq + Ord + Hash + Debug;
    type Parts: Parts;

    fn bounds(&self) -> Bounds;
    /// The states a run may start in.
    fn init_states(&self) -> Vec<StateOf<Self>>;
    /// The sets of masters (a bit each) a waiter may subscribe on (`listen_on` draws one).
    fn listen_sets(&self) -> &'static [u8];
    /// Whether a sleep's end is a timer firing (counted against the bound), rather than a
    /// step of the hand-off.
    fn is_timer(&self, sleep: SleepOf<Self>) -> bool;

    /// What `client` sends when it arrives, and again after its backoff.
    fn arrival(&self, client: &ClientOf<Self>) -> RequestOf<Self>;
    /// Whether `request` is a newcomer's ACQUIRE (the first that runs makes it arrived).
    fn is_arrival(&self, request: RequestOf<Self>) -> bool;
    fn wait(&self, ticket: u8) -> RequestOf<Self>;
    /// A holder's release (`announce`), or the undo of an interrupted turn.
    fn release(&self, client: &ClientOf<Self>, announce: bool) -> RequestOf<Self>;
    fn leave(&self) -> RequestOf<Self>;
    /// Whether `request` is never waited for (a release, an undo, LEAVE): one that changes
    /// nothing where it runs commutes with every other step.
    fn unawaited(&self, request: RequestOf<Self>) -> bool;
    /// Whether a holder may renew now; `renew` marks it and gives the request.
    fn may_renew(&self, _client: &ClientOf<Self>) -> bool {
        false
    }
    fn renew(&self, _client: &mut ClientOf<Self>) -> RequestOf<Self> {
        unreachable!("a model without renewals")
    }

    /// Runs `request` from `from` on `master`, atomically, as Redis runs a script.
    fn run(
        &self,
        master: &mut Self::Master,
        from: Token,
        client: &ClientOf<Self>,
        request: RequestOf<Self>,
    ) -> Ran<AnswerOf<Self>>;
    /// A master's answer to `client`'s current round arrives.
    fn answer(&self, client: &mut ClientOf<Self>, master: usize, answer: AnswerOf<Self>);
    /// Whether `token` has a (live) place on `master`.
    fn has_place(&self, master: &Self::Master, token: Token) -> bool;
    /// `token`'s lease ran out on `master`.
    fn lapse(&self, master: &mut Self::Master, token: Token);
    /// `token`'s lock, slot or share ran out of TTL on `master` (no script runs).
    fn expire(&self, master: &mut Self::Master, token: Token, client: &ClientOf<Self>);
    /// Whether something `token` left on `master` may run out of TTL while its client still
    /// lives: never, in the protocols as built (a TTL outlasts its holder's validity), so
    /// only a known-bad rule says yes.
    fn expires_alive(&self, _master: &Self::Master, _token: Token) -> bool {
        false
    }

    /// A sleeping client reads its notices.
    fn woken(&self, _client: &mut ClientOf<Self>) {}
    /// A refused newcomer subscribes and places itself.
    fn joins(&self, _client: &mut ClientOf<Self>) {}

    /// A refused newcomer subscribes on `masters` (a bit each): by default on connections of
    /// their own, confirmed at once, then its join turn (WAIT) on every master.
    fn listen(&self, client: &mut ClientOf<Self>, masters: u8) {
        client.listening = masters;
        self.joins(client);
        client.round(self.wait(client.ticket), Phase::Turn);
    }
    /// Whether `request` is a SUBSCRIBE written on the connection that carries requests: it
    /// subscribes the client there when the master runs it, while the client waits in line.
    fn subscribes(&self, _request: RequestOf<Self>) -> bool {
        false
    }
    /// Whether `client`'s connection to `master` may break now (with `Bounds::breaks`).
    fn may_break(&self, _client: &ClientOf<Self>, _master: usize) -> bool {
        false
    }
    /// `client`'s connection to `master` broke (its wire is emptied already); `awaited`: its
    /// current round waited for an answer from there.
    fn broken(&self, _client: &mut ClientOf<Self>, _master: usize, _awaited: bool) {}
}

/// stateright's `Model` for `$model`, a [`Protocol`] over this system whose module's
/// `properties::of` says what is checked.
macro_rules! explored {
    ($model:ty) => {
        impl stateright::Model for $model {
            type State = $crate::model_kit::system::StateOf<$model>;
            type Action = $crate::model_kit::system::Action;

            fn init_states(&self) -> Vec<Self::State> {
                $crate::model_kit::system::Protocol::init_states(self)
            }

            fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
                $crate::model_kit::system::actions(self, state, actions);
            }

            fn next_state(&self, state: &Self::State, action: Self::Action) -> Option<Self::State> {
                Some($crate::model_kit::system::next_state(self, state, action))
            }

            fn properties(&self) -> Vec<stateright::Property<Self>> {
                super::properties::of(self)
            }
        }
    };
}
pub(crate) use explored;

/// The steps that may happen in `state` (stateright's `Model::actions`).
pub fn actions<P: Protocol>(model: &P, state: &StateOf<P>, actions: &mut Vec<Action>) {
    let bounds = model.bounds();
    if bounds.reduced && independent_steps(model, state, actions) {
        return;
    }
    let crashed = state.clients.iter().any(|c| c.phase == Phase::Crashed);
    let left = state.clients.iter().any(|c| c.phase == Phase::Left);
    let timer = state.timers < bounds.timers;
    for (i, client) in state.clients.iter().enumerate() {
        let token = i as Token;
        match client.phase {
            Phase::Start => actions.push(Action::Arrive(token)),
            Phase::Joining => listen(model, token, actions),
            Phase::Sleeping(sleep) => {
                if client.noticed {
                    actions.push(Action::Wake(token));
                }
                // A timer may fire while a notice is still on the wire (then the turn
                // finds it unread after).
                if !model.is_timer(sleep) || timer {
                    actions.push(Action::Timer(token));
                }
            }
            Phase::Outside if timer => actions.push(Action::Timer(token)),
            Phase::Holding => {
                actions.push(Action::Release(token));
                if model.may_renew(client) {
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
        let waiting = matches!(client.phase, Phase::Turn | Phase::Sleeping(_));
        if bounds.leave && !left && waiting {
            actions.push(Action::Leave(token));
        }
        if bounds.crash && !crashed && client.is_alive() {
            actions.push(Action::Crash(token));
        }
        let broken = state.clients.iter().any(|c| c.broken);
        for master in 0..MASTERS {
            if !bounds.breaks || broken || !model.may_break(client, master) {
                continue;
            }
            actions.push(Action::Break {
                client: token,
                master,
                ran: false,
            });
            // Ran there, its answer lost (an answer not awaited is lost anyway: a run, then
            // a break).
            if client.sent[master]
                .oldest()
                .is_some_and(|sent| sent.awaited)
            {
                actions.push(Action::Break {
                    client: token,
                    master,
                    ran: true,
                });
            }
        }
        if client.phase != Phase::Crashed {
            for (master, m) in state.masters.iter().enumerate() {
                if model.expires_alive(m, token) {
                    actions.push(Action::Expire {
                        client: token,
                        master,
                    });
                }
            }
        } else {
            for (master, m) in state.masters.iter().enumerate() {
                if model.has_place(m, token) {
                    actions.push(Action::Lapse {
                        client: token,
                        master,
                    });
                }
                let mut expired = *m;
                model.expire(&mut expired, token, client);
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

fn listen<P: Protocol>(model: &P, client: Token, actions: &mut Vec<Action>) {
    for &masters in model.listen_sets() {
        actions.push(Action::Listen { client, masters });
    }
}

/// Pushes the steps of one client that commute with every step of every other client and
/// change nothing a property reads, if there are such; then exploring only them loses no
/// state that breaks a property (partial-order reduction). Any path reordered to take each
/// such step as soon as it is enabled ends in the same state, and a state that the reduced
/// exploration skips still has such a step pending: it is not settled, and holders, arrivals
/// and who was served are those of the state after the step, which is explored.
/// - A request not waited for that changes nothing on its master, now or ever (a release, an
///   undo, a LEAVE or a DEL where the caller has no lock, no share and no place: only its own
///   later requests, behind this one on the connection, could give it one).
/// - A newcomer's arrival (its requests are then on the wire, which only delays them) and its
///   subscription (nobody publishes to it before its WAIT places it), while no client may
///   still die: a death before either is not the same as one after.
fn independent_steps<P: Protocol>(
    model: &P,
    state: &StateOf<P>,
    actions: &mut Vec<Action>,
) -> bool {
    let crashed = state.clients.iter().any(|c| c.phase == Phase::Crashed);
    let may_die = model.bounds().crash && !crashed;
    for (i, client) in state.clients.iter().enumerate() {
        let token = i as Token;
        for (master, wire) in client.sent.iter().enumerate() {
            let Some(sent) = wire.oldest() else { continue };
            let m = state.masters[master];
            let mut after = m;
            let ran = model.run(&mut after, token, client, sent.request);
            if model.unawaited(sent.request) && after == m && ran.woke == 0 {
                actions.push(Action::Run {
                    client: token,
                    master,
                });
                return true;
            }
        }
        match client.phase {
            Phase::Start if !may_die => actions.push(Action::Arrive(token)),
            Phase::Joining if !may_die => listen(model, token, actions),
            _ => continue,
        }
        return true;
    }
    false
}

/// The state after `action` (stateright's `Model::next_state`): its representative, when
/// the model is reduced.
pub fn next_state<P: Protocol>(model: &P, state: &StateOf<P>, action: Action) -> StateOf<P> {
    let mut next = state.clone();
    apply(model, &mut next, action);
    if model.bounds().reduced {
        symmetry::canonical(next)
    } else {
        next
    }
}

/// Applies `action`; returns what a script that ran did (for the trace).
pub fn apply<P: Protocol>(
    model: &P,
    state: &mut StateOf<P>,
    action: Action,
) -> Option<Ran<AnswerOf<P>>> {
    match action {
        Action::Arrive(c) => {
            let client = &mut state.clients[c as usize];
            client.round(model.arrival(client), Phase::Acquiring);
        }
        Action::Run { client, master } => return Some(run(model, state, client, master)),
        Action::Listen { client, masters } => {
            model.listen(&mut state.clients[client as usize], masters);
        }
        Action::Wake(c) => {
            let client = &mut state.clients[c as usize];
            client.noticed = false;
            client.unread_from = 0;
            model.woken(client);
            client.round(model.wait(client.ticket), Phase::Turn);
        }
        Action::Timer(c) => {
            let client = &mut state.clients[c as usize];
            let prompt = matches!(client.phase, Phase::Sleeping(s) if !model.is_timer(s));
            if !prompt {
                state.timers += 1;
            }
            if client.phase == Phase::Outside {
                client.round(model.arrival(client), Phase::Acquiring);
            } else {
                client.round(model.wait(client.ticket), Phase::Turn);
            }
        }
        Action::Extend(c) => {
            let client = &mut state.clients[c as usize];
            let request = model.renew(client);
            client.round(request, Phase::Renewing);
        }
        Action::Release(c) => {
            let client = &mut state.clients[c as usize];
            client.send(model.release(client, true));
            client.phase = Phase::Done;
        }
        Action::Leave(c) => {
            let client = &mut state.clients[c as usize];
            if client.phase == Phase::Turn {
                // The interrupted turn may have taken the lock somewhere: undo, then leave.
                client.stop_listening();
                client.send(model.release(client, false));
            }
            client.send(model.leave());
            client.unsubscribe();
            client.phase = Phase::Left;
        }
        Action::Crash(c) => {
            let client = &mut state.clients[c as usize];
            client.stop_listening();
            client.unsubscribe();
            client.phase = Phase::Crashed;
        }
        Action::Lapse { client, master } => model.lapse(&mut state.masters[master], client),
        Action::Expire { client, master } => {
            let dead = &state.clients[client as usize];
            model.expire(&mut state.masters[master], client, dead);
        }
        Action::Break {
            client,
            master,
            ran,
        } => {
            let mut awaited = false;
            let mut told = None;
            if ran {
                awaited = true;
                told = Some(run_unanswered(model, state, client, master));
            }
            let waiter = &mut state.clients[client as usize];
            awaited |= waiter.sent[master].cut();
            waiter.broken = true;
            model.broken(waiter, master, awaited);
            return told;
        }
    }
    None
}

/// The oldest request on `token`'s connection to `master` runs there; its notices reach the
/// waiters that listen there, its answer the client if its round still waits for it.
fn run<P: Protocol>(
    model: &P,
    state: &mut StateOf<P>,
    token: Token,
    master: usize,
) -> Ran<AnswerOf<P>> {
    deliver(model, state, token, master, true)
}

/// The oldest request on `token`'s connection to `master` runs there, and its answer is lost
/// with the connection (`Action::Break`).
fn run_unanswered<P: Protocol>(
    model: &P,
    state: &mut StateOf<P>,
    token: Token,
    master: usize,
) -> Ran<AnswerOf<P>> {
    deliver(model, state, token, master, false)
}

/// `run`, its answer delivered where `answered`.
fn deliver<P: Protocol>(
    model: &P,
    state: &mut StateOf<P>,
    token: Token,
    master: usize,
    answered: bool,
) -> Ran<AnswerOf<P>> {
    let sent = state.clients[token as usize].sent[master].pop();
    let sent = sent.expect("a request on the wire");
    if model.is_arrival(sent.request) && !state.clients[token as usize].arrived {
        let behind = placed_on_a_majority(model, state) & !(1 << token);
        let client = &mut state.clients[token as usize];
        client.arrived = true;
        client.behind = behind;
    }
    let client = &state.clients[token as usize];
    let ran = model.run(&mut state.masters[master], token, client, sent.request);
    for (i, waiter) in state.clients.iter_mut().enumerate() {
        // Published on a channel it does not listen to here: nobody hears it.
        if ran.woke & (1 << i) != 0 && waiter.listening & (1 << master) != 0 {
            waiter.noticed = true;
            if model.bounds().breaks {
                waiter.unread_from |= 1 << master;
            }
        }
    }
    let client = &mut state.clients[token as usize];
    let in_line = matches!(
        client.phase,
        Phase::Subscribing | Phase::Turn | Phase::Sleeping(_)
    );
    if model.subscribes(sent.request) && in_line {
        client.listening |= 1 << master;
    }
    if let (true, true, Some(answer)) = (answered, sent.awaited, ran.answer) {
        model.answer(client, master, answer);
    }
    ran
}

/// The clients (a bit each) with a live place on at least a majority of masters: those a
/// client arriving now is behind.
fn placed_on_a_majority<P: Protocol>(model: &P, state: &StateOf<P>) -> u8 {
    let placed = |t: Token| {
        state
            .masters
            .iter()
            .filter(|m| model.has_place(m, t))
            .count()
    };
    (0..state.clients.len() as Token)
        .filter(|&t| placed(t) >= MAJORITY)
        .fold(0, |bits, t| bits | 1 << t)
}
