//! A path the checker found, told step by step: the replay and the renaming every model's
//! trace needs; what a step and a state look like is each model's.

use std::fmt::Write;

use stateright::Path;

use super::system::{Action, AnswerOf, Protocol, Ran, StateOf, apply};
use super::{MASTERS, Token, symmetry};

/// One line per step (`step` says it, from the state before, what ran and the state after),
/// between the state the path starts in and the one it ends in (`describe` says them). A path
/// of a reduced model goes through representatives, whose masters are renamed at every step:
/// it is told with the names of its start throughout.
pub fn tell<P: Protocol>(
    model: &P,
    path: Path<StateOf<P>, Action>,
    step: impl Fn(&StateOf<P>, Action, Option<Ran<AnswerOf<P>>>, &StateOf<P>) -> String,
    describe: impl Fn(&StateOf<P>) -> String,
) -> String {
    let steps = path.into_vec();
    let mut state = steps[0].0.clone();
    let mut told = format!("from:\n{}", describe(&state));
    // Master `m` of the path's state is master `order[m]` of `state`.
    let mut order = [0, 1, 2];
    for (n, (representative, action)) in steps.iter().enumerate() {
        if n > 0 && model.bounds().reduced {
            order = symmetry::order(&state);
            assert_eq!(&symmetry::canonical(state.clone()), representative);
        }
        let Some(action) = *action else {
            let _ = write!(told, "then:\n{}", describe(&state));
            continue;
        };
        let action = named(action, order);
        let mut next = state.clone();
        let ran = apply(model, &mut next, action);
        let _ = writeln!(told, "{:3}. {}", n + 1, step(&state, action, ran, &next));
        state = next;
    }
    told
}

/// `action` of a representative, on the state it stands for.
fn named(action: Action, order: [usize; MASTERS]) -> Action {
    match action {
        Action::Run { client, master } => Action::Run {
            client,
            master: order[master],
        },
        Action::Listen { client, masters } => Action::Listen {
            client,
            masters: (0..MASTERS)
                .filter(|m| masters & (1 << m) != 0)
                .fold(0, |bits, m| bits | 1 << order[m]),
        },
        Action::Lapse { client, master } => Action::Lapse {
            client,
            master: order[master],
        },
        Action::Expire { client, master } => Action::Expire {
            client,
            master: order[master],
        },
        Action::Break {
            client,
            master,
            ran,
        } => Action::Break {
            client,
            master: order[master],
            ran,
        },
        other => other,
    }
}

/// The names of the clients or masters (`prefix` c or m) whose bits are set.
pub fn listed(prefix: char, bits: u8) -> String {
    let names: Vec<String> = (0..8)
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| format!("{prefix}{i}"))
        .collect();
    names.join(" and ")
}

/// Whom a script that ran on `master` published to (`woke`), and whether each heard it:
/// `; publishes to c1; publishes to c2, which does not listen there: lost`.
pub fn publishes<P: Protocol>(
    state: &StateOf<P>,
    woke: u8,
    master: usize,
    name: impl Fn(Token) -> String,
) -> String {
    let mut told = String::new();
    for (woken, waiter) in state.clients.iter().enumerate() {
        if woke & (1 << woken) != 0 {
            let heard = waiter.listening & (1 << master) != 0;
            let lost = if heard {
                ""
            } else {
                ", which does not listen there: lost"
            };
            told += &format!("; publishes to {}{lost}", name(woken as Token));
        }
    }
    told
}
