//! What the checker checks in every state it reaches.

use stateright::Property;

use super::client::Phase;
use super::kept;
use super::protocol::Sleep;
use super::system::{QueueModel, State};

/// The properties checked for `model`.
pub fn of(model: &QueueModel) -> Vec<Property<QueueModel>> {
    let mut properties = vec![
        Property::always(
            "never more holders than the limit",
            |model: &QueueModel, s: &State| holders(s) <= model.kind.limit(),
        ),
        Property::always("first come, first served", first_come_first_served),
        // The model is not vacuous: some run serves everyone.
        Property::sometimes("every client served", |_, s: &State| {
            s.clients
                .iter()
                .all(|c| matches!(c.phase, Phase::Done | Phase::Left | Phase::Crashed))
        }),
    ];
    if model.force.is_some() {
        properties.push(Property::always(COUNTS_ITS_OWN, |_, s: &State| {
            s.clients.iter().all(|c| !c.own.named_stale)
        }));
    }
    // A dead client's lock or place ahead costs a TTL or a lease by design (nothing
    // announces an expiry): the promise is for runs where nobody dies. Nor after a lost
    // request (`Start::StaleMarker`): the waiter's undo that crosses off its own stale marker
    // opens K for it, and a script never wakes its caller, so a waiter first in line may
    // sleep on its backoff (a timer) there, the cost of a lost request that the queue's
    // header states.
    let lost_request = matches!(model.start, super::Start::StaleMarker);
    if !model.crash && !lost_request {
        properties.push(Property::always("no lost wake-up", no_lost_wake_up));
    }
    // Where nobody dies (a dead holder's lock stays until its TTL, by design).
    if model.breaks && !model.crash && !lost_request {
        properties.push(Property::always(
            "nothing taken is left behind",
            nothing_left_behind,
        ));
    }
    if model.breaks {
        // The break is not vacuous: some run leaves its waiter to its heartbeat.
        properties.push(Property::sometimes(
            "a break leaves its waiter to its heartbeat",
            |_, s: &State| {
                !can_move_without_a_timer(s)
                    && s.clients
                        .iter()
                        .any(|c| c.broken && matches!(c.phase, Phase::Sleeping(t) if t.is_timer()))
            },
        ));
    }
    properties
}

/// A holder that stops as revoked names a force that revoked this hold, never one that closed
/// an earlier partial hold of the same token (`Own::named_stale`).
pub const COUNTS_ITS_OWN: &str = "a revocation a holder counts is of its own hold";

fn holders(state: &State) -> usize {
    // A holder that renews still holds.
    let holders = state.clients.iter().filter(|c| c.holds());
    holders.count()
}

/// While the lock (or every slot) is held, no holder arrived after a live waiter that was
/// placed on a majority by then and has not been served yet: a later client never takes the
/// lock, or the last free slot, from an earlier one.
fn first_come_first_served(model: &QueueModel, state: &State) -> bool {
    holders(state) < model.kind.limit()
        || state.clients.iter().filter(|c| c.holds()).all(|holder| {
            state.clients.iter().enumerate().all(|(i, earlier)| {
                holder.behind & (1 << i) == 0
                    || earlier.served
                    || matches!(earlier.phase, Phase::Left | Phase::Crashed)
            })
        })
}

/// Whether anything can happen without a timer: a request or notice on the wire, a notice
/// unread, or a client with a step of its own to take (arrive, subscribe, release, a `Soon`
/// retry).
pub fn can_move_without_a_timer(state: &State) -> bool {
    state.clients.iter().any(|c| {
        c.sent.iter().any(|s| !s.is_empty())
            || c.noticed
            || matches!(
                c.phase,
                Phase::Start | Phase::Joining | Phase::Holding | Phase::Sleeping(Sleep::Soon)
            )
    })
}

/// No wake-up is lost: a state in which nothing can happen without a timer has no client left
/// asleep. (With nothing on the wire and nobody holding, the lock and every slot are free on
/// every master; a waiter asleep there, or a newcomer backing off outside the queue, would
/// wait for a timer.)
/// A waiter whose connection broke may be left to its heartbeat, by design (see `kept`): then
/// it is the first in line of those asleep, and its heartbeat takes the lock.
fn no_lost_wake_up(_: &QueueModel, state: &State) -> bool {
    if can_move_without_a_timer(state) {
        return true;
    }
    if state.clients.iter().any(|c| c.phase == Phase::Outside) {
        return false;
    }
    let asleep = state
        .clients
        .iter()
        .enumerate()
        .filter(|(_, c)| match c.phase {
            Phase::Sleeping(sleep) => sleep.is_timer(),
            _ => false,
        });
    let asleep = asleep.map(|(i, c)| (i as u8, c));
    asleep.clone().next().is_none() || kept::first_asleep_is_broken(asleep)
}

/// Where nothing can happen without a timer (nobody holds), no master keeps a lock or a slot:
/// whatever a turn may have taken where its answer was lost was undone.
fn nothing_left_behind(_: &QueueModel, state: &State) -> bool {
    can_move_without_a_timer(state)
        || state
            .masters
            .iter()
            .all(|m| m.lock.is_none() && m.slots == 0)
}
