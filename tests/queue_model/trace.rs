//! A path the checker found, told step by step in the terms of the issue.

use std::fmt::Write;

use stateright::Path;

use super::client::{Client, MASTERS, Phase};
use super::master::{Answer, Master, Ran, Request};
use super::protocol::{Kind, Sleep};
use super::symmetry;
use super::system::{Action, QueueModel, State};

/// One line per step, then the state the path ends in. A path of a reduced model goes through
/// representatives, whose masters are renamed at every step: it is told with the names of its
/// start throughout.
pub fn tell(model: &QueueModel, path: Path<State, Action>) -> String {
    let mut told = String::new();
    let steps = path.into_vec();
    let mut state = steps[0].0.clone();
    // Master `m` of the path's state is master `order[m]` of `state`.
    let mut order = [0, 1, 2];
    for (n, (representative, action)) in steps.iter().enumerate() {
        if n > 0 && model.reduced {
            order = symmetry::order(&state);
            assert_eq!(&symmetry::canonical(state.clone()), representative);
        }
        let Some(action) = *action else {
            let _ = writeln!(told, "then:\n{}", describe(&state));
            continue;
        };
        let action = named(action, order);
        let mut next = state.clone();
        let ran = model.apply(&mut next, action);
        let _ = writeln!(
            told,
            "{:3}. {}",
            n + 1,
            step(model, &state, action, ran, &next)
        );
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
        other => other,
    }
}

fn step(
    model: &QueueModel,
    state: &State,
    action: Action,
    ran: Option<Ran>,
    next: &State,
) -> String {
    let after = |c: u8| phase(&next.clients[c as usize]);
    match action {
        Action::Arrive(c) => format!("c{c} arrives: ACQUIRE to every master"),
        Action::Listen { client, masters } => format!(
            "c{client} subscribes on {}, then WAIT (its join turn) to every master",
            listed('m', masters)
        ),
        Action::Wake(c) => {
            format!("c{c} reads its notices (all of them, one flag): WAIT to every master")
        }
        Action::Timer(c) => match state.clients[c as usize].phase {
            Phase::Sleeping(Sleep::Soon) => {
                format!("c{c} looks again (1-5 ms): WAIT to every master")
            }
            Phase::Sleeping(Sleep::Backoff) => {
                format!("c{c}'s backoff fires: WAIT to every master")
            }
            _ => format!("c{c}'s heartbeat fires: WAIT to every master"),
        },
        Action::Release(c) => format!("c{c} releases: RELEASE to every master"),
        Action::Leave(c) => format!("c{c} gives up: LEAVE to every master"),
        Action::Crash(c) => format!("c{c} dies"),
        Action::Lapse { client, master } => format!("c{client}'s place lapses on m{master}"),
        Action::Expire { client, master } => {
            format!("c{client}'s lock or slot expires on m{master}")
        }
        Action::Run { client, master } => {
            let sent = state.clients[client as usize].sent[master].oldest();
            let request = sent.expect("a request").request;
            let ran = ran.expect("a script ran");
            let mut line = format!("m{master} runs c{client}'s {}: ", request_name(request));
            line += &outcome(model.kind, request, ran);
            for (woken, waiter) in state.clients.iter().enumerate() {
                if ran.woke & (1 << woken) != 0 {
                    let heard = waiter.listening & (1 << master) != 0;
                    let lost = ", which does not listen there: lost";
                    line += &format!("; publishes to c{woken}{}", if heard { "" } else { lost });
                }
            }
            let before = phase(&state.clients[client as usize]);
            if before != after(client) {
                line += &format!("; c{client} is now {}", after(client));
            }
            line
        }
    }
}

fn request_name(request: Request) -> &'static str {
    match request {
        Request::Acquire => "ACQUIRE",
        Request::Wait { .. } => "WAIT",
        Request::Release { announce: true, .. } => "RELEASE",
        Request::Release { reseat: None, .. } => "undo (RELEASE, clean-up)",
        Request::Release {
            reseat: Some(_), ..
        } => "undo (clean-up, place put back)",
        Request::Leave => "LEAVE",
    }
}

fn outcome(kind: Kind, request: Request, ran: Ran) -> String {
    let (it, taken, untaken) = match kind {
        Kind::Lock => ("the lock", "lock held", "lock free"),
        Kind::Slots { .. } => ("a slot", "slots taken", "no slot taken"),
    };
    match (request, ran.answer) {
        (_, Some(Answer::Taken)) => format!("takes {it}"),
        (_, Some(Answer::Refused { ticket })) => format!("refused, ticket {ticket}"),
        (_, Some(Answer::TakenWithTicket { ticket })) => format!("takes {it}, ticket {ticket}"),
        (_, Some(Answer::Waiting { first, held })) => format!(
            "refused ({}, {})",
            if first { "first in line" } else { "not first" },
            if held { taken } else { untaken }
        ),
        (Request::Release { .. }, None) if ran.released => format!("gives back {it}"),
        (Request::Release { .. }, None) => format!("{it} is not its own there"),
        _ => "done".into(),
    }
}

fn phase(client: &Client) -> String {
    match client.phase {
        Phase::Sleeping(Sleep::Soon) => "asleep for 1-5 ms".into(),
        Phase::Sleeping(Sleep::Backoff) => "asleep until its backoff (or a notice)".into(),
        Phase::Sleeping(Sleep::Heartbeat) => "asleep until its heartbeat (or a notice)".into(),
        phase => format!("{phase:?}").to_lowercase(),
    }
}

/// The names of the clients or masters (`prefix` c or m) whose bits are set.
fn listed(prefix: char, bits: u8) -> String {
    let names: Vec<String> = (0..8)
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| format!("{prefix}{i}"))
        .collect();
    names.join(" and ")
}

/// The masters' keys and where each client is.
fn describe(state: &State) -> String {
    let mut told = String::new();
    for (m, master) in state.masters.iter().enumerate() {
        let _ = writeln!(told, "     m{m}: {}", keys(master));
    }
    for (c, client) in state.clients.iter().enumerate() {
        let _ = writeln!(
            told,
            "     c{c}: {}{}",
            phase(client),
            if client.noticed {
                ", a notice unread"
            } else {
                ""
            }
        );
    }
    told
}

fn keys(master: &Master) -> String {
    let lock = match (master.lock, master.slots) {
        (Some(t), _) => format!("lock held by c{t}"),
        (None, 0) => "free".to_string(),
        (None, slots) => format!("slots held by {}", listed('c', slots)),
    };
    let queue: Vec<String> = master
        .queue
        .iter()
        .map(|p| format!("c{} (ticket {})", p.token, p.ticket))
        .collect();
    format!("{lock}, queue [{}]", queue.join(", "))
}
