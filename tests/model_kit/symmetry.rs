//! Symmetry reduction over the masters' names, for any model: it reads only what every
//! model's state has (masters; clients with answers, the answers a hold won with, requests on
//! the wire, subscriptions and unread notices, per master).

use super::MASTERS;
use super::client::Client;
use super::system::State;

type Of<M, R, A, S, X> = State<M, Client<R, A, S, X>>;

/// The masters are interchangeable (same scripts, same start, every client treats them
/// alike): of the states that differ only by a renaming of the masters, one stands for all, so
/// each class is explored once. It is the state with the masters sorted by everything that
/// concerns each one (its keys, and each client's answer from it, requests to it, and
/// subscription there): every renaming of a state sorts to the same one. Properties do not name
/// masters, so they hold for a state exactly when they hold for its representative.
pub fn canonical<M, R, A, S, X>(state: Of<M, R, A, S, X>) -> Of<M, R, A, S, X>
where
    M: Copy + Ord,
    R: Copy + Ord,
    A: Copy + Ord,
    Client<R, A, S, X>: Clone,
{
    let order = order(&state);
    if order == [0, 1, 2] {
        return state;
    }
    rename(&state, order)
}

/// The renaming `canonical` applies: master `order[m]` of `state` becomes master `m`.
pub fn order<M, R, A, S, X>(state: &Of<M, R, A, S, X>) -> [usize; MASTERS]
where
    M: Copy + Ord,
    R: Copy + Ord,
    A: Copy + Ord,
{
    let column = |m: usize| {
        let per_client = state.clients.iter().map(move |c| {
            let bits = (c.listening >> m & 1, c.unread_from >> m & 1);
            (c.answers[m], c.won_with[m], c.sent[m], bits)
        });
        (state.masters[m], per_client)
    };
    let mut order = [0, 1, 2];
    order.sort_by(|&a, &b| {
        let (master_a, clients_a) = column(a);
        let (master_b, clients_b) = column(b);
        master_a
            .cmp(&master_b)
            .then_with(|| clients_a.cmp(clients_b))
    });
    order
}

fn rename<M, R, A, S, X>(state: &Of<M, R, A, S, X>, order: [usize; MASTERS]) -> Of<M, R, A, S, X>
where
    M: Copy,
    R: Copy,
    A: Copy,
    Client<R, A, S, X>: Clone,
{
    let mut renamed = state.clone();
    for (to, &from) in order.iter().enumerate() {
        renamed.masters[to] = state.masters[from];
        for (new, old) in renamed.clients.iter_mut().zip(&state.clients) {
            new.answers[to] = old.answers[from];
            new.won_with[to] = old.won_with[from];
            new.sent[to] = old.sent[from];
            new.listening &= !(1 << to);
            new.listening |= (old.listening >> from & 1) << to;
            new.unread_from &= !(1 << to);
            new.unread_from |= (old.unread_from >> from & 1) << to;
        }
    }
    renamed
}
