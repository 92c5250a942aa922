//! Symmetry reduction over the masters' names. Shared with tests/rw_model, which includes this
//! file by its path: it reads only the shape both models' states have (masters; clients with
//! answers, requests on the wire and subscriptions, per master).

use super::client::MASTERS;
use super::system::State;

/// The masters are interchangeable (same scripts, same start, every client treats them
/// alike): of the states that differ only by a renaming of the masters, one stands for all, so
/// each class is explored once. It is the state with the masters sorted by everything that
/// concerns each one (its keys, and each client's answer from it, requests to it, and
/// subscription there): every renaming of a state sorts to the same one. Properties do not name
/// masters, so they hold for a state exactly when they hold for its representative.
pub fn canonical(state: State) -> State {
    let order = order(&state);
    if order == [0, 1, 2] {
        return state;
    }
    rename(&state, order)
}

/// The renaming `canonical` applies: master `order[m]` of `state` becomes master `m`.
pub fn order(state: &State) -> [usize; MASTERS] {
    let column = |m: usize| {
        let per_client = state
            .clients
            .iter()
            .map(move |c| (c.answers[m], c.sent[m], c.listening >> m & 1));
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

fn rename(state: &State, order: [usize; MASTERS]) -> State {
    let mut renamed = state.clone();
    for (to, &from) in order.iter().enumerate() {
        renamed.masters[to] = state.masters[from];
        for (new, old) in renamed.clients.iter_mut().zip(&state.clients) {
            new.answers[to] = old.answers[from];
            new.sent[to] = old.sent[from];
            new.listening &= !(1 << to);
            new.listening |= (old.listening >> from & 1) << to;
        }
    }
    renamed
}
