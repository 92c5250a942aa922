//! The lock's own rounds, as a newcomer takes and gives back a whole lock, or a reader its share
//! of one (`shared`: the same rounds with the readers' scripts, chosen by the token): the
//! attempt (ACQUIRE or READ_ACQUIRE, with a ticket for the queue when refused), its release
//! (RELEASE or READ_RELEASE, also the clean-up of a partial hold), and what the refusals say of
//! the holder. Free functions over the
//! masters, so that the client, the queue and the semaphore's clean-ups all share them without
//! naming one another.

use std::time::{Duration, Instant};

use crate::plural::counted;

use super::attempt::Refused;
use super::held::{Kind, Lock, Timing};
use super::undo::{self, Purpose};
use super::waiter::keep;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict, Released};
use crate::lock::quorum::round::{Masters, Round, Until};
use crate::lock::quorum::tally::{Decision, Loss};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::lock::{self, ACQUIRE, Lua, RELEASE, acquire_vote, binary_vote};
use crate::lock::scripts::shared::{READ_ACQUIRE, READ_RELEASE};

/// One attempt as a newcomer: SET NX PX on all masters unless others are queued (a reader's
/// token: a share, see `shared`), decide at quorum, and on failure remove whatever partial hold it
/// left so that contenders do not split the vote until the TTL runs out. A refused caller that
/// `will_wait` also gets its ticket for the queue, when enough masters drew one (see `queue`).
pub(in crate::lock) async fn attempt(
    masters: &Masters,
    key: &str,
    names: &Names,
    token: &str,
    timing: Timing,
    holder: Option<&Holder>,
    will_wait: bool,
) -> Result<Lock, Refused> {
    let record = holder.map(|h| h.record(token)).unwrap_or_default();
    let start = Instant::now();
    let kind = Kind::of_token(token);
    let (lock_keys, reader_keys) = (names.lock_keys(key), names.reader_keys(key));
    let (script, keys): (&Lua, &[&str]) = match kind {
        Kind::Reader => (&READ_ACQUIRE, &reader_keys),
        _ => (&ACQUIRE, &lock_keys),
    };
    let ttl_ms = timing.ttl_ms();
    let keep_ms = keep(&timing).as_millis().to_string();
    let args: [&[u8]; 5] = [
        token.as_bytes(),
        &ttl_ms,
        record.as_bytes(),
        if will_wait { b"1" } else { b"" },
        keep_ms.as_bytes(),
    ];
    let round = masters
        .round(
            start + timing.node_timeout,
            // A caller that will wait needs a ticket from N - q + 1 refusals (see `queue`):
            // a master that fails fast must not end the round before they are in.
            if will_wait {
                Until::Conclusive
            } else {
                Until::Decided
            },
            acquire_vote,
            |node| node.eval(script, keys, &args),
        )
        .await;
    let elapsed = start.elapsed();
    masters.trace("acquire", key, &round, elapsed);
    let failure = match round.tally.decision() {
        Decision::Won if elapsed + timing.drift() < timing.ttl => {
            // The round stops listening at quorum: say what is known, not more.
            let n = masters.nodes.len();
            let yes = round.tally.yes();
            let so_far = if round.tally.pending() > 0 {
                " so far"
            } else {
                ""
            };
            let what = if kind.is_reader() { "a share of " } else { "" };
            log::info!(
                event = "acquired", key = key, outcome = "won",
                elapsed_ms = elapsed.as_micros() as f64 / 1000.0, confirmed = yes, masters = n;
                "acquired {what}{key:?} in {elapsed:.1?}: {yes} of {} confirmed{so_far}",
                counted(n, "master")
            );
            let mut refusals = round.failures(masters);
            refusals.retain(|f| f.cause().is_configuration());
            return Ok(Lock {
                kind,
                key: key.to_string(),
                token: token.to_string(),
                timing,
                validity_end: timing.validity_end(start),
                refusals,
                woken_by: None,
            });
        }
        Decision::Won => AttemptFailure::TooSlow { elapsed },
        _ if semaphore(&round).is_some() => {
            release_token(masters, key, names, token, timing, Purpose::Undo).await;
            let limit = semaphore(&round).flatten();
            return Err(Refused::Conflict(Conflict::IsSemaphore { limit }));
        }
        Decision::Lost(Loss::Refused) => {
            let needed = masters.nodes.len() - masters.quorum() + 1;
            let (failure, ticket) = held_by(&round, needed);
            // A master the round did not wait for may have said yes: undo unless every
            // master refused (no partial holds).
            if round.tally.no() < masters.nodes.len() {
                release_token(masters, key, names, token, timing, Purpose::Undo).await;
            }
            return Err(Refused::Failed(failure, ticket.filter(|_| will_wait)));
        }
        Decision::Lost(Loss::Unreachable) | Decision::Undecided => AttemptFailure::Unreachable {
            needed: masters.quorum(),
            failures: round.failures(masters),
        },
    };
    release_token(masters, key, names, token, timing, Purpose::Undo).await;
    Err(Refused::Failed(failure, None))
}

/// Deletes our key on every master (a reader's token: removes our share, see READ_RELEASE).
/// A real release ([`Purpose::Release`], not the clean-up of a failed or interrupted attempt)
/// also gives up what is left of our place in the queue and tells the next waiter (see
/// RELEASE). The clean-up is sent again when the attempt may overtake it (see `undo`).
pub(in crate::lock) async fn release_token(
    masters: &Masters,
    key: &str,
    names: &Names,
    token: &str,
    timing: Timing,
    purpose: Purpose,
) -> Released {
    let start = Instant::now();
    let (lock_keys, reader_keys) = (names.lock_keys(key), names.reader_keys(key));
    let (script, keys): (&Lua, &[&str]) = match Kind::of_token(token) {
        Kind::Reader => (&READ_RELEASE, &reader_keys),
        _ => (&RELEASE, &lock_keys),
    };
    let channel = if purpose.announces() {
        keys::released_channel(key)
    } else {
        String::new()
    };
    let (token, channel) = (token.as_bytes(), channel.as_bytes());
    let round = undo::guarded(masters, &timing, purpose, |until| {
        masters.round(
            Instant::now() + timing.node_timeout,
            until,
            binary_vote,
            move |node| async move {
                let args: [&[u8]; 5] = [
                    token,
                    channel,
                    node.publish_command().as_bytes(),
                    names.wake_prefix.as_bytes(),
                    names.wake_suffix.as_bytes(),
                ];
                node.eval(script, keys, &args).await
            },
        )
    })
    .await;
    masters.trace("release", key, &round, start.elapsed());
    match round.tally.decision() {
        Decision::Won => Released::Yes,
        Decision::Lost(Loss::Refused) => Released::NotHeld,
        _ => Released::Unknown {
            failures: round.failures(masters),
        },
    }
}

/// The limit of the semaphore some master says the key is in use as (see SEMAPHORE_CHECK).
fn semaphore(round: &Round) -> Option<Option<String>> {
    round
        .answers
        .iter()
        .flatten()
        .filter_map(|answer| answer.as_ref().ok())
        .find_map(lock::semaphore_in_use)
}

/// The holder named by the masters that refused (its record, where it belongs to the token now
/// in the lock), the longest remaining TTL among them, the queue they saw, and the ticket: the
/// highest drawn, when at least `tickets_needed` masters drew one (see `queue`).
fn held_by(round: &Round, tickets_needed: usize) -> (AttemptFailure, Option<u64>) {
    let mut holder = None;
    let mut expires_in: Option<Duration> = None;
    let mut free = true;
    let mut shared = false;
    let mut waiters = 0;
    let mut tickets = 0;
    let mut ticket = 0;
    for refusal in round
        .answers
        .iter()
        .flatten()
        .filter_map(|a| a.as_ref().ok())
    {
        let Some(refusal) = lock::refusal(refusal) else {
            continue;
        };
        holder = holder.or(refusal.holder);
        if let Some(ttl) = refusal.expires_in {
            expires_in = Some(expires_in.map_or(ttl, |t| t.max(ttl)));
        }
        free &= refusal.free;
        shared |= refusal.shared;
        waiters = waiters.max(refusal.waiters);
        if let Some(drawn) = refusal.ticket {
            tickets += 1;
            ticket = ticket.max(drawn);
        }
    }
    let failure = AttemptFailure::Held {
        holder: holder.map(Box::new),
        expires_in,
        free,
        shared,
        waiters,
        place: None,
    };
    (failure, (tickets >= tickets_needed).then_some(ticket))
}
