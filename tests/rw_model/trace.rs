//! A path the checker found, told step by step (the replay is `model_kit::trace`'s).

use std::fmt::Write;

use stateright::Path;

use super::client::{Client, Phase};
use super::master::{Answer, Key, Master, Ran, Request};
use super::protocol::Mode;
use super::system::{Action, RwModel, State};
use crate::model_kit::trace::{self, listed, publishes};

/// One line per step, between the state the path starts in and the one it ends in.
pub fn tell(model: &RwModel, path: Path<State, Action>) -> String {
    trace::tell(model, path, step, describe)
}

fn step(state: &State, action: Action, ran: Option<Ran>, next: &State) -> String {
    let name = |c: u8| name(&state.clients[c as usize], c);
    match action {
        Action::Arrive(c) => {
            let request = match state.clients[c as usize].own.mode {
                Mode::Foreign => "SET NX",
                Mode::Forcer => "FORCE",
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
        Action::Break { .. } => unreachable!("no connection breaks in the readers-writer model"),
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
            line += &publishes::<RwModel>(state, ran.woke, master, name);
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
    let mode = match client.own.mode {
        Mode::Reader => 'r',
        Mode::Writer => 'w',
        Mode::Foreign => 'f',
        Mode::Forcer => 'x',
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
        Request::Force => "FORCE (release --force)",
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
        Phase::Sleeping(_) => "asleep until its timer (or a notice)".into(),
        phase => format!("{phase:?}").to_lowercase(),
    }
}

/// The masters' keys and where each client is.
fn describe(state: &State) -> String {
    let mut told = String::new();
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
        Key::Revoked => format!("K revoked from {}", names(master.revoked)),
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
