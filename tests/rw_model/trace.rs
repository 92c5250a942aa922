//! A path the checker found, told step by step.

use std::fmt::Write;

use stateright::Path;

use super::client::{Client, MASTERS, Phase};
use super::master::{Answer, Key, Master, Ran, Request};
use super::protocol::Mode;
use super::symmetry;
use super::system::{Action, RwModel, State};

/// One line per step, then the state the path ends in. The path goes through representatives,
/// whose masters are renamed at every step: it is told with the names of its start throughout.
pub fn tell(model: &RwModel, path: Path<State, Action>) -> String {
    let steps = path.into_vec();
    let mut state = steps[0].0.clone();
    let mut told = describe(&state, "from:");
    // Master `m` of the path's state is master `order[m]` of `state`.
    let mut order = [0, 1, 2];
    for (n, (representative, action)) in steps.iter().enumerate() {
        if n > 0 {
            order = symmetry::order(&state);
            assert_eq!(&symmetry::canonical(state.clone()), representative);
        }
        let Some(action) = *action else {
            told += &describe(&state, "then:");
            continue;
        };
        let action = named(action, order);
        let mut next = state.clone();
        let ran = model.apply(&mut next, action);
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
        other => other,
    }
}

fn step(state: &State, action: Action, ran: Option<Ran>, next: &State) -> String {
    let name = |c: u8| name(&state.clients[c as usize], c);
    match action {
        Action::Arrive(c) => {
            let request = match state.clients[c as usize].mode {
                Mode::Foreign => "SET NX",
                _ => "ACQUIRE",
            };
            format!("{} arrives: {request} to every master", name(c))
        }
        Action::Listen { client, masters } => format!(
            "{} subscribes on {}, then WAIT (its join turn) to every master",
            name(client),
            listed('m', masters)
        ),
        Action::Wake(c) => format!("{} reads its notices: WAIT to every master", name(c)),
        Action::Timer(c) if state.clients[c as usize].phase == Phase::Outside => {
            format!("{}'s backoff fires: it arrives again", name(c))
        }
        Action::Timer(c) => format!("{}'s timer fires: WAIT to every master", name(c)),
        Action::Extend(c) => format!("{} renews: EXTEND to every master", name(c)),
        Action::Release(c) => format!("{} releases on every master", name(c)),
        Action::Leave(c) => format!("{} gives up: LEAVE to every master", name(c)),
        Action::Crash(c) => format!("{} dies", name(c)),
        Action::Lapse { client, master } => format!("{}'s place lapses on m{master}", name(client)),
        Action::Expire { client, master } => {
            format!("{}'s K or share expires on m{master}", name(client))
        }
        Action::Run { client, master } => {
            let sent = state.clients[client as usize].sent[master].oldest();
            let request = sent.expect("a request").request;
            let ran = ran.expect("a script ran");
            let mut line = format!(
                "m{master} runs {}'s {}: {}",
                name(client),
                request_name(request),
                outcome(request, ran)
            );
            for (woken, waiter) in state.clients.iter().enumerate() {
                if ran.woke & (1 << woken) != 0 {
                    let heard = waiter.listening & (1 << master) != 0;
                    let lost = ", which does not listen there: lost";
                    let lost = if heard { "" } else { lost };
                    line += &format!("; publishes to {}{lost}", name(woken as u8));
                }
            }
            let (before, after) = (
                &state.clients[client as usize],
                &next.clients[client as usize],
            );
            if phase(before) != phase(after) {
                line += &format!("; {} is now {}", name(client), phase(after));
            }
            line
        }
    }
}

/// A client's name: its number and its mode (r: reader, w: writer, f: the foreign client).
fn name(client: &Client, token: u8) -> String {
    let mode = match client.mode {
        Mode::Reader => 'r',
        Mode::Writer => 'w',
        Mode::Foreign => 'f',
    };
    format!("{mode}{token}")
}

fn request_name(request: Request) -> &'static str {
    match request {
        Request::Acquire => "ACQUIRE",
        Request::Wait { .. } => "WAIT",
        Request::Release { announce: true } => "RELEASE",
        Request::Release { announce: false } => "undo (RELEASE, clean-up)",
        Request::Leave => "LEAVE",
        Request::Extend => "EXTEND",
        Request::Set => "SET NX",
        Request::Del => "DEL (if its own)",
    }
}

fn outcome(request: Request, ran: Ran) -> String {
    match (request, ran.answer) {
        (_, Some(Answer::Taken)) => "yes".into(),
        (_, Some(Answer::Denied)) => "no".into(),
        (_, Some(Answer::Refused { ticket })) => format!("refused, ticket {ticket}"),
        (_, Some(Answer::Waiting { first, held })) => format!(
            "refused ({}, {})",
            if first {
                "only readers ahead or first"
            } else {
                "a writer ahead"
            },
            if held { "K held" } else { "K free" }
        ),
        (Request::Release { .. }, None) if ran.released => "gives back its K or share".into(),
        (Request::Release { .. }, None) => "nothing of its own there".into(),
        _ => "done".into(),
    }
}

fn phase(client: &Client) -> String {
    match client.phase {
        Phase::Sleeping => "asleep until its timer (or a notice)".into(),
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
fn describe(state: &State, title: &str) -> String {
    let mut told = format!("{title}\n");
    for (m, master) in state.masters.iter().enumerate() {
        let _ = writeln!(told, "     m{m}: {}", keys(state, master));
    }
    for (c, client) in state.clients.iter().enumerate() {
        let unread = if client.noticed {
            ", a notice unread"
        } else {
            ""
        };
        let listens = if client.listening != 0 {
            format!(", listens on {}", listed('m', client.listening))
        } else {
            String::new()
        };
        let name = name(client, c as u8);
        let _ = writeln!(told, "     {name}: {}{listens}{unread}", phase(client));
    }
    told
}

fn keys(state: &State, master: &Master) -> String {
    let names = |bits: u8| {
        let tokens = (0..state.clients.len() as u8).filter(|t| bits & (1 << t) != 0);
        let names: Vec<String> = tokens
            .map(|t| name(&state.clients[t as usize], t))
            .collect();
        names.join(" and ")
    };
    let key = match master.key {
        Key::Free => "K free".to_string(),
        Key::Marker => "K the readers' marker".to_string(),
        Key::Writer(t) => format!("K held by {}", names(1 << t)),
        Key::Foreign => "K held by the foreign client".to_string(),
    };
    let shares = match master.readers {
        0 => String::new(),
        readers => format!(", shares of {}", names(readers)),
    };
    let queue: Vec<String> = master
        .queue
        .iter()
        .map(|p| format!("{} (ticket {})", names(1 << p.token), p.ticket))
        .collect();
    format!("{key}{shares}, queue [{}]", queue.join(", "))
}
