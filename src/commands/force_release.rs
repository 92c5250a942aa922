//! `redlock release --force`: break glass. Revokes whoever holds the lock (the lock's holder,
//! every reader, every slot of a semaphore), without their token; the protocol and why it
//! never makes two holders (nor L + 1) are in the lock's `revoke`.

use crate::cli::{ForceArgs, GlobalArgs, MetricsArgs, TokenArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{Forced, Holder, Kind, Revoked};
use crate::metrics::{Observations, Outcome};
use crate::plural::counted;

use super::{bounded, open_client, wording};

pub fn force_release(
    global: &GlobalArgs,
    args: &TokenArgs,
    force: &ForceArgs,
    metrics_args: MetricsArgs,
) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let settings = config::force_settings(args, force, &context.defaults)?;
    let metrics_file = config::metrics_file(&metrics_args, &context.defaults)?;
    context.warn();
    let key = &settings.key;
    // Not the whole command line: it may carry a password (`--server redis://:pw@host`), and
    // the record is kept by every master and printed by `status` and `list`.
    let program = std::env::args()
        .next()
        .unwrap_or_else(|| "redlock".to_string());
    let words = [
        program,
        "release".into(),
        "--force".into(),
        "--key".into(),
        key.clone(),
    ];
    let by = Holder::this_process(&words).with_note(settings.reason.clone());
    let client = open_client(&context)?;
    let forced = client.force_release(key, &by, settings.timing);
    let mut seen = Observations::new(key);
    if matches!(forced, Forced::Revoked { .. }) {
        seen.outcomes.push(Outcome::Forced);
    }
    // No signal handlers here: a signal ends `release` by its default action.
    bounded::record_metrics(None, metrics_file.as_deref(), &seen);
    match forced {
        Forced::Revoked {
            revoked,
            partial,
            earlier,
            confirmed,
            closed_for,
        } => {
            // Tokens say what they hold: a semaphore's slots are `sem<L>-...`.
            let slots = revoked
                .iter()
                .chain(earlier.iter().flat_map(|e| &e.revoked))
                .any(|r| Kind::of_token(&r.token).limit().is_some());
            let whom = if revoked.is_empty() {
                match earlier {
                    Some(earlier) => format!(
                        "it was revoked already, by {} (nothing more to revoke)",
                        earlier.describe()
                    ),
                    None => "it was revoked already (nothing more to revoke)".to_string(),
                }
            } else {
                let named: Vec<String> = revoked.iter().map(described).collect();
                format!("revoked {}", named.join("; "))
            };
            let closed = closed_for.map_or_else(String::new, |closed| {
                format!(
                    " or for {} at most",
                    humantime::format_duration(std::time::Duration::from_millis(
                        closed.as_millis() as u64
                    ))
                )
            });
            let (what, stays) = if slots {
                (
                    "semaphore",
                    "each revoked slot stays taken until its holder stops and says so",
                )
            } else {
                (
                    "lock",
                    "it stays closed until the revoked holder stops and says so",
                )
            };
            println!(
                "{what} {key:?}: {whom}, on {}; {stays}{closed}{}",
                counted(confirmed, "master"),
                partial_holds(&partial)
            );
            log::info!(event = "forced", key = key.as_str(), outcome = "revoked"; "revoked {key:?}");
            Ok(exit::OK)
        }
        Forced::NothingHeld { partial: 0 } => Err(Failure::new(
            exit::NOTHING_HELD,
            format!("lock {key:?} is not held on a majority of masters: nothing was revoked"),
        )),
        Forced::NothingHeld { partial } => Err(Failure::new(
            exit::NOTHING_HELD,
            format!(
                "lock {key:?} is not held on a majority of masters: nobody held it; it is \
                 revoked on {} all the same (a partial hold, closed there until its TTL, or \
                 until its holder releases it)",
                counted(partial, "master")
            ),
        )),
        Forced::Unconfirmed {
            confirmed,
            needed,
            revoked,
            failures,
        } => {
            let mut failure = wording::masters_failed(
                &format!(
                    "cannot revoke lock {key:?} on a majority: the force reached {} (it needs \
                     {needed})",
                    counted(confirmed, "master")
                ),
                &failures,
            );
            // Asking again helps only where a master did not answer: one that answered (a key
            // of another type, out of memory, a refused permission) says the same again until
            // what its advice names is done.
            let again = if failures.iter().any(|f| !f.error.answered()) {
                ", run it again when the masters answer"
            } else {
                ""
            };
            failure.message.push_str(&if revoked.is_empty() {
                format!("; nothing was revoked{again}")
            } else {
                format!(
                    "; the holder was not revoked and keeps the lock while its renewals reach a \
                     majority (where the force landed, or lands late, the lock stays closed \
                     until its TTL){}",
                    again.replacen(',', ";", 1)
                )
            });
            Err(failure)
        }
    }
}

/// What the force also closed: tokens it found on too few masters to hold, named as what they
/// are (a waiter's or a newcomer's partial hold), never as holders; empty when none.
fn partial_holds(partial: &[Revoked]) -> String {
    if partial.is_empty() {
        return String::new();
    }
    let named: Vec<String> = partial
        .iter()
        .map(|revoked| crate::escape::visible(&revoked.token).into_owned())
        .collect();
    format!(
        "; also closed a partial hold that held nowhere (a waiter's turn or a newcomer's \
         attempt that took the key on too few masters, token {}): closed there until its TTL \
         or its owner's undo, not revoked",
        named.join(", ")
    )
}

/// A revoked holder, as the force names it: its record, or its token where it had none.
fn described(revoked: &Revoked) -> String {
    match &revoked.holder {
        Some(holder) => format!("the holder {}", holder.describe()),
        None => format!(
            "the holder with token {} (no holder record: another client's)",
            crate::escape::visible(&revoked.token)
        ),
    }
}
