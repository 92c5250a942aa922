//! What the checker checks in every state it reaches.

use stateright::Property;

use super::client::{Client, Phase};
use super::master::{Key, Master, Token};
use super::protocol::Mode;
use super::system::{RwModel, State};

/// The names of the properties, as the tests and traces use them.
pub const ALONE: &str = "a writer holds alone";
pub const KEPT: &str = "every holder keeps K on its quorum";
pub const READER_ORDER: &str = "no reader overtakes a waiting writer";
pub const WRITER_ORDER: &str = "no writer overtakes an earlier waiter";
pub const LOST_WAKE_UP: &str = "no lost wake-up";
pub const ELIGIBLE_WOKEN: &str = "an eligible waiter is woken";
pub const READERS_SHARE: &str = "two readers hold together";
pub const LINE_SHARES: &str = "readers from the line enter together";
pub const FOREIGN_HOLDS: &str = "the foreign client holds";
pub const ALL_SERVED: &str = "every client served";

/// The properties checked for `model`.
pub fn of(model: &RwModel) -> Vec<Property<RwModel>> {
    let mut properties = vec![
        Property::always(ALONE, |_, s: &State| writer_alone(s)),
        Property::always(KEPT, |model: &RwModel, s: &State| {
            holding(s).all(|(t, c)| {
                let kept = s.masters.iter().filter(|m| has_k(m, t, c.own.mode)).count();
                kept >= model.rules.quorum(c.own.mode)
            })
        }),
        Property::always(READER_ORDER, |_, s: &State| {
            let readers = holding(s).filter(|(_, c)| c.own.mode == Mode::Reader);
            readers.clone().all(|(_, c)| {
                let writers = earlier(s, c).filter(|e| e.own.mode == Mode::Writer);
                writers.clone().all(|e| e.served || !e.is_alive())
            })
        }),
        Property::always(WRITER_ORDER, |_, s: &State| {
            let writers = holding(s).filter(|(_, c)| c.own.mode == Mode::Writer);
            writers
                .clone()
                .all(|(_, c)| earlier(s, c).all(|e| e.served || !e.is_alive()))
        }),
        // The model is not vacuous: some run serves everyone.
        Property::sometimes(ALL_SERVED, |_, s: &State| {
            s.clients.iter().all(|c| !c.is_alive())
        }),
    ];
    if model.start.readers_may_share() {
        properties.push(Property::sometimes(READERS_SHARE, |_, s: &State| {
            holding(s)
                .filter(|(_, c)| c.own.mode == Mode::Reader)
                .count()
                >= 2
        }));
    }
    if model.start.line_may_share() {
        properties.push(Property::sometimes(LINE_SHARES, |_, s: &State| {
            let readers = holding(s).filter(|(_, c)| c.own.mode == Mode::Reader && c.own.queued);
            readers.count() >= 2
        }));
    }
    let foreign = model.start.clients().any(|m| m == Mode::Foreign);
    if foreign {
        properties.push(Property::sometimes(FOREIGN_HOLDS, |_, s: &State| {
            holding(s).any(|(_, c)| c.own.mode == Mode::Foreign)
        }));
    }
    if !model.crash && !foreign {
        // A dead client's K or place ahead costs a TTL or a lease by design (nothing announces
        // an expiry), and so does a foreign holder's DEL: the promise is for runs of redlocks
        // where nobody dies.
        properties.push(Property::always(LOST_WAKE_UP, |_, s: &State| {
            no_lost_wake_up(s)
        }));
        properties.push(Property::always(ELIGIBLE_WOKEN, eligible_woken));
    }
    properties
}

fn holding(state: &State) -> impl Iterator<Item = (Token, &Client)> + Clone {
    let clients = state.clients.iter().enumerate();
    clients
        .filter(|(_, c)| c.holds())
        .map(|(t, c)| (t as Token, c))
}

/// The clients that had a live place on a majority when `client` arrived.
fn earlier<'a>(state: &'a State, client: &'a Client) -> impl Iterator<Item = &'a Client> + Clone {
    let clients = state.clients.iter().enumerate();
    clients
        .filter(|(i, _)| client.behind & (1 << i) != 0)
        .map(|(_, c)| c)
}

/// Whether `token` (of `mode`) has K on `master`: K is its token (the foreign client's value),
/// or, for a reader, K is the marker and its share lives.
fn has_k(master: &Master, token: Token, mode: Mode) -> bool {
    // Revoked (`release --force`): the marker keeps K closed for it until it says it stopped.
    if master.key == Key::Revoked && master.revoked & (1 << token) != 0 {
        return true;
    }
    match mode {
        Mode::Writer => master.key == Key::Writer(token),
        Mode::Foreign => master.key == Key::Foreign,
        Mode::Forcer => false,
        Mode::Reader => master.key == Key::Marker && master.readers & (1 << token) != 0,
    }
}

/// Never a writer (ours or the foreign client) holding at the same time as any other holder;
/// readers may hold together.
fn writer_alone(state: &State) -> bool {
    let alone = holding(state)
        .filter(|(_, c)| c.own.mode != Mode::Reader)
        .count();
    alone == 0 || (alone == 1 && holding(state).count() == 1)
}

/// Whether anything can happen without a timer, a release or a renewal: a request or notice
/// on the wire, a notice unread, or a client about to arrive or subscribe.
fn unsettled(state: &State) -> bool {
    state.clients.iter().any(|c| {
        c.sent.iter().any(|s| !s.is_empty())
            || c.noticed
            || matches!(c.phase, Phase::Start | Phase::Joining)
    })
}

/// Whether anything can happen without a timer: `unsettled`, or a holder that will release.
pub fn can_move_without_a_timer(state: &State) -> bool {
    unsettled(state) || state.clients.iter().any(Client::holds)
}

/// No wake-up is lost: a state in which nothing can happen without a timer has no client left
/// asleep. (With nothing on the wire and nobody holding, K is free on every master; a waiter
/// asleep there, or a newcomer backing off outside the queue, would wait for a timer.)
fn no_lost_wake_up(state: &State) -> bool {
    can_move_without_a_timer(state)
        || !state
            .clients
            .iter()
            .any(|c| matches!(c.phase, Phase::Sleeping(_) | Phase::Outside))
}

/// A waiter eligible on its quorum is told, or took K at its own turn: in a state where nothing
/// but a timer, a release or a renewal can happen, no waiter asleep is eligible on a quorum of
/// masters. (So readers at the head of the line enter while the readers ahead still hold, not
/// at the next heartbeat.)
fn eligible_woken(model: &RwModel, state: &State) -> bool {
    unsettled(state)
        || state.clients.iter().enumerate().all(|(t, c)| {
            let eligible = state
                .masters
                .iter()
                .filter(|m| m.eligible() & (1 << t) != 0);
            !matches!(c.phase, Phase::Sleeping(_))
                || eligible.count() < model.rules.quorum(c.own.mode)
        })
}
