//! The model as stateright explores it: the readers-writer lock's masters and clients over
//! `model_kit::system` (the connections, notices, timers and faults).

use super::client::{Client, Own, Timer};
use super::master::{Answer, Master, Ran, Request, Token};
use super::protocol::{LISTEN_SETS, Mode, Rules};
use super::start::{self, Start};
use crate::model_kit::system::{self, Bounds};

pub use crate::model_kit::system::Action;

pub type State = system::State<Master, Client>;

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

system::explored!(RwModel);

impl system::Protocol for RwModel {
    type Master = Master;
    type Parts = (Request, Answer, Timer, Own);

    /// Always reduced (both reductions, as in tests/queue_model).
    fn bounds(&self) -> Bounds {
        let (crash, leave, timers) = (self.crash, self.leave, self.timers);
        Bounds {
            crash,
            leave,
            timers,
            breaks: false,
            reduced: true,
        }
    }

    fn init_states(&self) -> Vec<State> {
        start::states(self.start)
    }

    fn listen_sets(&self) -> &'static [u8] {
        &LISTEN_SETS
    }

    fn is_timer(&self, _: Timer) -> bool {
        true
    }

    fn arrival(&self, client: &Client) -> Request {
        match client.own.mode {
            Mode::Foreign => Request::Set,
            Mode::Forcer => Request::Force,
            _ => Request::Acquire,
        }
    }

    fn is_arrival(&self, request: Request) -> bool {
        request == Request::Acquire
    }

    fn wait(&self, ticket: u8) -> Request {
        Request::Wait { ticket }
    }

    fn release(&self, client: &Client, announce: bool) -> Request {
        client.release(announce)
    }

    fn leave(&self) -> Request {
        Request::Leave
    }

    fn unawaited(&self, request: Request) -> bool {
        matches!(
            request,
            Request::Release { .. } | Request::Leave | Request::Del
        )
    }

    fn may_renew(&self, client: &Client) -> bool {
        self.extend
            && !client.own.renewed
            && !matches!(client.own.mode, Mode::Foreign | Mode::Forcer)
    }

    fn renew(&self, client: &mut Client) -> Request {
        client.own.renewed = true;
        Request::Extend
    }

    fn run(&self, master: &mut Master, from: Token, client: &Client, request: Request) -> Ran {
        master.run(from, client.own.mode, request, self.rules)
    }

    fn answer(&self, client: &mut Client, master: usize, answer: Answer) {
        client.answer(master, answer, self.rules);
    }

    fn has_place(&self, master: &Master, token: Token) -> bool {
        master.has_place(token)
    }

    fn lapse(&self, master: &mut Master, token: Token) {
        master.lapse(token);
    }

    fn expire(&self, master: &mut Master, token: Token, client: &Client) {
        master.expire(token, client.own.mode);
    }

    fn joins(&self, client: &mut Client) {
        client.own.queued = true;
    }
}
