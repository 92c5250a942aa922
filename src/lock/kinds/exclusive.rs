//! The lock: the kind that holds K alone (why at most one holder is argued in `held`; how
//! waiters line up, in `queue`). Its seam ([`Exclusive`]) and its rounds as a newcomer takes
//! and gives back the whole lock: the attempt (ACQUIRE, with a ticket for the queue when
//! refused), the release (RELEASE, also the clean-up of a partial hold), and what the refusals
//! say of the holder. A reader's share of K (`shared`) takes the same rounds with its own
//! scripts ([`Rounds`]), and the same turn but for its WAIT.

use std::time::{Duration, Instant};

use crate::plural::counted;

use super::attempt::Refused;
use super::fence::FenceError;
use super::held::{Kind, Lock};
use super::revoke;
use super::seam::{
    Boxed, Call, Holding, InTheWay, Leaving, Line, Queued, Request, Seam, Seat, Wait,
};
use super::supersede;
use super::undo::{self, Purpose};
use super::waiter::keep;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict, Released};
use crate::lock::quorum::round::{Masters, Refusals, Round, Until};
use crate::lock::quorum::tally::{Decision, Loss};
use crate::lock::scripts::calls::args::{
    Departure, Ended, Extend, Leave, Recorded, Release, Take, Wake,
};
use crate::lock::scripts::calls::{Args, Script};
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::lock::{self, acquire_vote};
use crate::lock::scripts::queue::turn;
use crate::lock::scripts::revoke::release_vote;
use crate::lock::scripts::{ACQUIRE, EXTEND, LEAVE, RELEASE, WAIT};

/// The lock's seam (see `seam`): the majority, ACQUIRE, WAIT, EXTEND, RELEASE and LEAVE, and
/// a refusal means the lock is held.
pub(in crate::lock) struct Exclusive;

impl Seam for Exclusive {
    fn kind(&self) -> Kind {
        Kind::Lock
    }

    fn attempt<'a>(
        &'a self,
        masters: &'a Masters,
        request: &'a Request<'a>,
        names: &'a Names,
        token: &'a str,
    ) -> Boxed<'a, Result<Lock, Refused>> {
        Box::pin(attempt(masters, Rounds::lock(), request, names, token))
    }

    fn release<'a>(
        &'a self,
        masters: &'a Masters,
        holding: Holding<'a>,
        purpose: Purpose,
        _seat: Option<&'a Seat<'a>>,
    ) -> Boxed<'a, Released> {
        Box::pin(release_token(masters, Rounds::lock(), holding, purpose))
    }

    /// WAIT, or in a superseding line WAIT_SUPERSEDE (see `supersede`).
    fn wait(&self, queued: &Queued, join: bool, names: &Names, line: Line) -> Wait {
        match line {
            Line::FirstCome => Wait {
                call: Call::new(&WAIT, queued.recorded_turn(join)),
                room: 1,
                decode: turn,
            },
            Line::Superseding => supersede::wait(queued, join, names),
        }
    }

    fn refused_turn(&self, in_the_way: InTheWay, _first: bool) -> (AttemptFailure, bool) {
        (held(in_the_way), false)
    }

    fn outsiders(&self) -> bool {
        true
    }

    fn extend(&self, token: &str, ms: &[u8]) -> Call {
        Call::new(&EXTEND, extension(token, ms))
    }

    fn leave(&self, token: &str, names: &Names, why: Leaving<'_>) -> Call {
        Call::new(&LEAVE, departure(token, names, why))
    }

    fn fence(&self) -> Result<(), FenceError> {
        Ok(())
    }
}

/// The scripts of a newcomer's rounds over K: the lock's, or a reader's (see `shared`).
#[derive(Clone, Copy)]
pub(in crate::lock) struct Rounds {
    pub kind: Kind,
    pub acquire: &'static Script<Recorded<Take>>,
    pub release: &'static Script<Ended>,
    /// What is taken, as the log says it ("a share of " K, or K).
    pub what: &'static str,
}

impl Rounds {
    fn lock() -> Rounds {
        Rounds {
            kind: Kind::Lock,
            acquire: &ACQUIRE,
            release: &RELEASE,
            what: "",
        }
    }
}

/// The arguments of an extension of `token` to `ms` (EXTEND, or a reader's READ_EXTEND).
pub(in crate::lock) fn extension(token: &str, ms: &[u8]) -> Extend {
    Extend {
        token: token.to_string(),
        ms: ms.to_vec(),
    }
}

/// The arguments of leaving the line at K (LEAVE, which a reader's leaving takes too).
pub(in crate::lock) fn leaving(token: &str, names: &Names) -> Leave {
    Leave {
        token: token.to_string(),
        wake: Wake::of(names),
    }
}

/// The arguments of leaving the line at K for `why` (LEAVE, which a reader's leaving takes
/// too).
pub(in crate::lock) fn departure(token: &str, names: &Names, why: Leaving<'_>) -> Departure {
    Departure {
        args: leaving(token, names),
        how: why.how.to_string(),
        history: if why.how.is_empty() {
            String::new()
        } else {
            why.history.spec()
        },
    }
}

/// What a turn refused by a quorum at K means: K is held (by a writer or by readers).
pub(in crate::lock) fn held(in_the_way: InTheWay) -> AttemptFailure {
    AttemptFailure::Held {
        holder: in_the_way.holder.map(Box::new),
        expires_in: in_the_way.expires_in,
        free: in_the_way.free,
        shared: in_the_way.shared,
        revoked: in_the_way.revoked,
        waiters: in_the_way.waiters,
        place: (in_the_way.place > 0).then_some(in_the_way.place),
    }
}

/// One attempt as a newcomer: SET NX PX on all masters unless others are queued (`rounds`: a
/// reader's, a share, see `shared`), decide at quorum, and on failure remove whatever partial hold it
/// left so that contenders do not split the vote until the TTL runs out. A refused caller that
/// `will_wait` also gets its ticket for the queue, when enough masters drew one (see `queue`).
pub(in crate::lock) async fn attempt(
    masters: &Masters,
    rounds: Rounds,
    request: &Request<'_>,
    names: &Names,
    token: &str,
) -> Result<Lock, Refused> {
    let (key, timing, holder) = (request.key, request.timing, request.holder);
    let will_wait = request.will_wait();
    let record = holder.map(|h| h.record(token)).unwrap_or_default();
    let start = Instant::now();
    let layout = names.keys(key);
    let args = Recorded {
        args: Take {
            token: token.to_string(),
            ttl_ms: timing.ttl_ms(),
            record,
            will_wait,
            keep_ms: keep(&timing).as_millis().to_string(),
        },
        history: request.history.spec(),
    };
    let undone = Holding {
        key,
        names,
        token,
        timing,
        history: request.history,
        how: "",
    };
    let round = masters
        .round(
            start + timing.node_timeout,
            // A caller that will wait needs a ticket from N - q + 1 refusals (see `queue`):
            // a master that fails fast must not end the round before they are in. It hears
            // every master when refused, as a waiter's turn does: its refusal is not urgent
            // (it joins the line next, and that turn waits for every master anyway), and a
            // refusal from every master needs no undo, where a round that stopped at a
            // majority of refusals had to send one (a script per master: a fifth of the
            // masters' scripts in a contended section, BENCHMARKS.md).
            if will_wait {
                Until::WonOrAllAnswered
            } else {
                Until::Decided
            },
            acquire_vote,
            |node| rounds.acquire.run(node, &layout, &args),
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
            let what = rounds.what;
            log::info!(
                event = "acquired", key = key, outcome = "won",
                elapsed_ms = elapsed.as_micros() as f64 / 1000.0, confirmed = yes, masters = n;
                "acquired {what}{key:?} in {elapsed:.1?}: {yes} of {} confirmed{so_far}",
                counted(n, "master")
            );
            let refusals = Refusals::of(&round, masters, elapsed);
            return Ok(Lock {
                kind: rounds.kind,
                key: key.to_string(),
                token: token.to_string(),
                timing,
                validity_end: timing.validity_end(start),
                refusals,
                woken_by: None,
                granted_by: Some(round.granted_by(acquire_vote)),
                history: request.history,
            });
        }
        Decision::Won => AttemptFailure::TooSlow { elapsed },
        _ if semaphore(&round).is_some() => {
            release_token(masters, rounds, undone, Purpose::Undo).await;
            let limit = semaphore(&round).flatten();
            return Err(Refused::Conflict(Conflict::IsSemaphore { limit }));
        }
        Decision::Lost(Loss::Refused) => {
            let needed = masters.nodes.len() - masters.quorum() + 1;
            let (failure, ticket) = held_by(&round, needed);
            // A master the round did not wait for may have said yes: undo unless every
            // master refused (no partial holds).
            if round.tally.no() < masters.nodes.len() {
                release_token(masters, rounds, undone, Purpose::Undo).await;
            }
            return Err(Refused::Failed(failure, ticket.filter(|_| will_wait)));
        }
        Decision::Lost(Loss::Unreachable) | Decision::Undecided => AttemptFailure::Unreachable {
            needed: masters.quorum(),
            failures: round.failures(masters),
        },
    };
    release_token(masters, rounds, undone, Purpose::Undo).await;
    Err(Refused::Failed(failure, None))
}

/// Deletes our key on every master (`rounds`: a reader's, removes our share, see READ_RELEASE).
/// A real release ([`Purpose::Release`], not the clean-up of a failed or interrupted attempt)
/// also gives up what is left of our place in the queue and tells the next waiter (see
/// RELEASE). The clean-up is sent again when the attempt may overtake it (see `undo`).
pub(in crate::lock) async fn release_token(
    masters: &Masters,
    rounds: Rounds,
    holding: Holding<'_>,
    purpose: Purpose,
) -> Released {
    let args = Ended {
        args: release_args(holding, purpose),
        how: holding.how.to_string(),
        history: holding.history.spec(),
    };
    let round = Giving {
        what: "release",
        quorum: masters.quorum(),
        holding,
        purpose,
    };
    release_round(masters, round, rounds.release, &args).await
}

/// A release round, as [`release_round`] runs it: what the trace calls it, the quorum that
/// decides it, what it gives back and why.
pub(in crate::lock) struct Giving<'a> {
    pub what: &'static str,
    pub quorum: usize,
    pub holding: Holding<'a>,
    pub purpose: Purpose,
}

/// The one release round, of any kind (`script`: RELEASE and its kin, with `args`): sent to
/// every master, bounded by one node timeout, sent again when the attempt it undoes may
/// overtake it (see `undo`), and read for a revocation of the token (see `revoke`).
pub(in crate::lock) async fn release_round<A: Args>(
    masters: &Masters,
    giving: Giving<'_>,
    script: &Script<A>,
    args: &A,
) -> Released {
    let Giving {
        what,
        quorum,
        holding,
        purpose,
    } = giving;
    let (key, timing) = (holding.key, holding.timing);
    let start = Instant::now();
    let layout = holding.names.keys(key);
    let round = undo::guarded(masters, &timing, purpose, |until| {
        masters.round_with(
            quorum,
            Instant::now() + timing.node_timeout,
            until,
            release_vote,
            |node| script.run(node, &layout, args),
        )
    })
    .await;
    masters.trace(what, key, &round, start.elapsed());
    revoke::released(&round, masters, holding.token)
}

/// The arguments of giving back what `holding` holds, for `purpose` (a real release
/// announces on the key's release channel; a clean-up does not): the lock's, a reader's, and
/// a slot's first ones (see RELEASE_SLOT).
pub(in crate::lock) fn release_args(holding: Holding<'_>, purpose: Purpose) -> Release {
    Release {
        token: holding.token.to_string(),
        channel: if purpose.announces() {
            keys::released_channel(holding.key)
        } else {
            String::new()
        },
        wake: Wake::of(holding.names),
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
    let mut revoked = false;
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
        revoked |= refusal.revoked;
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
        revoked,
        waiters,
        place: None,
    };
    (failure, (tickets >= tickets_needed).then_some(ticket))
}
