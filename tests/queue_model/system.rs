//! The model as stateright explores it: the fair queue's masters and clients over
//! `model_kit::system` (the connections, notices, timers and faults), and the properties
//! checked.

use super::client::{Client, Own, UNDO};
use super::kept::{self, Subscription};
use super::master::{Answer, Master, Ran, Request, Token};
use super::protocol::{Force, Kind, Protocol, Rules, Sleep};
use super::start::{self, Start};
use crate::model_kit::system::{self, Bounds};

pub use crate::model_kit::system::Action;

pub type State = system::State<Master, Client>;

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
    /// Explore fewer interleavings and states, losing none that could break a property (see
    /// `Bounds::reduced`).
    pub reduced: bool,
    /// A forcer (`release --force`, the last client) sends FORCE at any moment, and every
    /// holder may renew once (EXTEND), at any moment (see `revoke`).
    pub force: Option<Force>,
    /// Where a waiter's subscription rides: a connection of its own, or the kept one (see
    /// `kept`).
    pub subscription: Subscription,
    /// One waiter's connection to one master may break, once (see `kept`).
    pub breaks: bool,
}

system::explored!(QueueModel);

impl QueueModel {
    pub fn rules(&self) -> Rules {
        Rules {
            protocol: self.protocol,
            kind: self.kind,
            force: self.force.unwrap_or(Force::Marker),
            keeps_grants: matches!(self.start, Start::StaleMarker),
        }
    }
}

impl system::Protocol for QueueModel {
    type Master = Master;
    type Parts = (Request, Answer, Sleep, Own);

    fn bounds(&self) -> Bounds {
        let (crash, leave, timers, reduced) = (self.crash, self.leave, self.timers, self.reduced);
        Bounds {
            crash,
            leave,
            timers,
            breaks: self.breaks,
            reduced,
        }
    }

    fn init_states(&self) -> Vec<State> {
        let mut states = start::states(self.start, self.rules());
        if self.force.is_some() {
            for state in &mut states {
                // One slot holder renews, at any moment; the other never does (it learns of
                // the revocation never, and releases as usual), which keeps the run within
                // CI's budget (both renewing: 21M states for a newcomer; see `revoke`).
                if let Kind::Slots { .. } = self.kind {
                    state.clients[1].own.never_renews = true;
                }
                state.clients.push(Client::new(Own {
                    forcer: true,
                    ..Own::default()
                }));
            }
        }
        states
    }

    fn listen_sets(&self) -> &'static [u8] {
        self.rules().listen_sets()
    }

    fn is_timer(&self, sleep: Sleep) -> bool {
        sleep.is_timer()
    }

    fn arrival(&self, client: &Client) -> Request {
        if client.own.forcer {
            Request::Force
        } else {
            Request::Acquire
        }
    }

    fn is_arrival(&self, request: Request) -> bool {
        request == Request::Acquire
    }

    fn wait(&self, ticket: u8) -> Request {
        Request::Wait { ticket }
    }

    fn release(&self, _: &Client, announce: bool) -> Request {
        match announce {
            true => Request::Release {
                announce,
                reseat: None,
            },
            false => UNDO,
        }
    }

    fn leave(&self) -> Request {
        Request::Leave
    }

    fn unawaited(&self, request: Request) -> bool {
        // A SUBSCRIBE is not one: where it is not awaited (`Subscription::KeptAfterTurn`) it
        // still subscribes the client, a change no master's keys show.
        !matches!(
            request,
            Request::Acquire
                | Request::Wait { .. }
                | Request::Force
                | Request::Extend
                | Request::Subscribe
        )
    }

    fn may_renew(&self, client: &Client) -> bool {
        self.force.is_some() && !client.own.renewed && !client.own.never_renews
    }

    fn renew(&self, client: &mut Client) -> Request {
        client.own.renewed = true;
        Request::Extend
    }

    fn run(&self, master: &mut Master, from: Token, _: &Client, request: Request) -> Ran {
        master.run(from, request, self.rules())
    }

    fn answer(&self, client: &mut Client, master: usize, answer: Answer) {
        client.answer(master, answer, self.rules());
    }

    fn has_place(&self, master: &Master, token: Token) -> bool {
        master.has_place(token)
    }

    fn lapse(&self, master: &mut Master, token: Token) {
        master.lapse(token);
    }

    fn expire(&self, master: &mut Master, token: Token, _: &Client) {
        master.slots &= !(1 << token);
        // A revoked slot's score is its slot's plus drift: like the marker, it runs out after
        // the revoked holder's validity.
        master.revoked_slots &= !(1 << token);
        if master.lock == Some(token) {
            master.lock = None;
        }
        // The marker's TTL is the revoked token's, plus drift: it runs out after the revoked
        // holder's validity, which in the model is after it died (see `revoke`).
        if master.revoked == Some(token) {
            master.revoked = None;
            master.stale = false;
        }
    }

    fn expires_alive(&self, master: &Master, token: Token) -> bool {
        self.force == Some(Force::ShortTtl)
            && (master.revoked == Some(token) || master.revoked_slots & (1 << token) != 0)
    }

    fn woken(&self, client: &mut Client) {
        client.own.woken = true;
    }

    fn listen(&self, client: &mut Client, masters: u8) {
        kept::listen(self.subscription, client, masters);
    }

    fn subscribes(&self, request: Request) -> bool {
        request == Request::Subscribe
    }

    fn may_break(&self, client: &Client, master: usize) -> bool {
        self.can_break(client, master)
    }

    fn broken(&self, client: &mut Client, master: usize, awaited: bool) {
        self.after_break(client, master, awaited);
    }
}
