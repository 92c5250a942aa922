//! A path the checker found, told step by step in the terms of the issue (the replay is
//! `model_kit::trace`'s).

use std::fmt::Write;

use stateright::Path;

use super::client::{Client, Phase};
use super::kept::Subscription;
use super::master::{Answer, Master, Ran, Request};
use super::protocol::{Kind, Sleep};
use super::system::{Action, QueueModel, State};
use crate::model_kit::trace::{self, listed, publishes};

/// One line per step, between the state the path starts in and the one it ends in.
pub fn tell(model: &QueueModel, path: Path<State, Action>) -> String {
    trace::tell(model, path, |s, a, r, n| step(model, s, a, r, n), describe)
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
        Action::Listen { client, masters } => {
            let on = listed('m', masters);
            match model.subscription {
                Subscription::Separate => {
                    format!(
                        "c{client} subscribes on {on}, then WAIT (its join turn) to every master"
                    )
                }
                Subscription::Kept => format!(
                    "c{client} writes SUBSCRIBE on its kept connections to {on}, and awaits the confirmations"
                ),
                Subscription::KeptAfterTurn => format!(
                    "c{client} sends WAIT (its join turn) to every master, then SUBSCRIBE on its kept connections to {on}"
                ),
            }
        }
        Action::Break { client, master, .. } => {
            let ran = match ran {
                Some(ran) => {
                    let sent = state.clients[client as usize].sent[master].oldest();
                    let request = sent.expect("a request").request;
                    let told = outcome(model.kind, request, ran);
                    let published =
                        publishes::<QueueModel>(state, ran.woke, master, |c| format!("c{c}"));
                    format!(
                        ", after its {} ran there ({told}{published}; answer lost)",
                        request_name(request)
                    )
                }
                None => String::new(),
            };
            let unread = state.clients[client as usize].unread_from & (1 << master) != 0;
            let subscription = match (model.subscription, unread) {
                (Subscription::Separate, _) => "",
                (_, false) => " and its subscription there",
                (_, true) => " and its subscription there, with the notice unread from there",
            };
            format!(
                "c{client}'s connection to m{master} breaks{ran}: what was on the wire there is gone{subscription}"
            )
        }
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
        Action::Extend(c) => format!("c{c} renews: EXTEND to every master"),
        Action::Release(c) => format!("c{c} releases: RELEASE to every master"),
        Action::Leave(c) => format!("c{c} gives up: LEAVE to every master"),
        Action::Crash(c) => format!("c{c} dies"),
        Action::Lapse { client, master } => format!("c{client}'s place lapses on m{master}"),
        Action::Expire { client, master } => {
            format!("c{client}'s lock, slot or revocation marker expires on m{master}")
        }
        Action::Run { client, master } => {
            let sent = state.clients[client as usize].sent[master].oldest();
            let request = sent.expect("a request").request;
            let ran = ran.expect("a script ran");
            let mut line = format!("m{master} runs c{client}'s {}: ", request_name(request));
            line += &outcome(model.kind, request, ran);
            line += &publishes::<QueueModel>(state, ran.woke, master, |c| format!("c{c}"));
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
        Request::Force => "FORCE (release --force)",
        Request::Extend => "EXTEND",
        Request::Subscribe => "SUBSCRIBE",
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
        (_, Some(Answer::Forced)) => "revokes whoever holds it there".into(),
        (_, Some(Answer::Subscribed)) => "subscribed".into(),
        (_, Some(Answer::Lost)) => "no answer".into(),
        (_, Some(Answer::Renewed { extended: true, .. })) => "extends".into(),
        (_, Some(Answer::Renewed { revoked: true, .. })) => "refused: revoked, by whom".into(),
        (_, Some(Answer::Renewed { .. })) => "refused".into(),
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
        _ if master.revoked.is_some() => {
            format!("revoked from c{}", master.revoked.expect("revoked"))
        }
        (Some(t), _) => format!("lock held by c{t}"),
        (None, 0) if master.revoked_slots == 0 => "free".to_string(),
        (None, 0) => format!("slots revoked from {}", listed('c', master.revoked_slots)),
        (None, slots) if master.revoked_slots != 0 => format!(
            "slots held by {}, revoked from {}",
            listed('c', slots),
            listed('c', master.revoked_slots)
        ),
        (None, slots) => format!("slots held by {}", listed('c', slots)),
    };
    let queue: Vec<String> = master
        .queue
        .iter()
        .map(|p| format!("c{} (ticket {})", p.token, p.ticket))
        .collect();
    format!("{lock}, queue [{}]", queue.join(", "))
}
