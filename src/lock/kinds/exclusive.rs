//! The lock: the kind that holds K alone (why at most one holder is argued in `held`; how
//! waiters line up, in `queue`). Its seam ([`Exclusive`]) and its rounds as a newcomer takes
//! and gives back the whole lock: the attempt (ACQUIRE, with a ticket for the queue when
//! refused), the release (RELEASE, also the clean-up of a partial hold), and what the refusals
//! say of the holder. A reader's share of K (`shared`) takes the same rounds with its own
//! scripts ([`Rounds`]), and the same turn but for its WAIT.

use std::time::Duration;

use super::fence::FenceError;
use super::held::Kind;
use super::seam::{
    Call, Giving, Holding, InTheWay, Leaving, Line, Newcomer, Queued, Seam, Seat, Wait,
};
use super::supersede;
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::{Round, Until};
use crate::lock::scripts::calls::Script;
use crate::lock::scripts::calls::args::{
    Departure, Ended, Extend, Leave, Recorded, Release, Take, Wake,
};
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::lock::{self, acquire_vote};
use crate::lock::scripts::queue::turn;
use crate::lock::scripts::{ACQUIRE, EXTEND, LEAVE, RELEASE, WAIT};

/// The lock's seam (see `seam`): the majority, ACQUIRE, WAIT, EXTEND, RELEASE and LEAVE, and
/// a refusal means the lock is held.
pub(in crate::lock) struct Exclusive;

impl Seam for Exclusive {
    fn kind(&self) -> Kind {
        Kind::Lock
    }

    fn newcomer(&self, key: &str, take: Take, history: String, _: usize) -> Newcomer {
        newcomer(Rounds::lock(), key, take, history)
    }

    fn conflict(&self, round: &Round, won: bool) -> Option<Conflict> {
        in_use_as_semaphore(round, won)
    }

    fn refused(&self, round: &Round, tickets_needed: usize) -> (AttemptFailure, Option<u64>) {
        held_by(round, tickets_needed)
    }

    fn release(&self, holding: Holding<'_>, purpose: Purpose, _: Option<&Seat<'_>>) -> Giving {
        release_call(Rounds::lock(), holding, purpose)
    }

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
    pub acquire: &'static Script<Recorded<Take>>,
    pub release: &'static Script<Ended>,
    /// What is taken, as the log says it ("a share of " K, or K).
    pub what: &'static str,
}

impl Rounds {
    fn lock() -> Rounds {
        Rounds {
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

/// A newcomer's attempt over K with `rounds`' scripts (the lock's ACQUIRE, or a reader's
/// READ_ACQUIRE, see `shared`): SET NX PX on all masters unless others are queued, decided by
/// the majority. A caller that will wait hears every master when refused, as a waiter's turn
/// does: its refusal is not urgent (it joins the line next, and that turn waits for every
/// master anyway), and a refusal from every master needs no undo, where a round that stopped
/// at a majority of refusals had to send one (a script per master: a fifth of the masters'
/// scripts in a contended section, BENCHMARKS.md).
pub(in crate::lock) fn newcomer(
    rounds: Rounds,
    key: &str,
    take: Take,
    history: String,
) -> Newcomer {
    Newcomer {
        call: Call::new(
            rounds.acquire,
            Recorded {
                args: take,
                history,
            },
        ),
        vote: acquire_vote,
        waiting: Until::WonOrAllAnswered,
        trace: "acquire",
        what: format!("{}{key:?}", rounds.what),
    }
}

/// A newcomer's conflict at K: some master says the key is in use as a semaphore (with its
/// limit, where it says it; see SEMAPHORE_CHECK), unless the majority granted the lock.
pub(in crate::lock) fn in_use_as_semaphore(round: &Round, won: bool) -> Option<Conflict> {
    if won {
        return None;
    }
    semaphore(round).map(|limit| Conflict::IsSemaphore { limit })
}

/// Deletes our key on every master (`rounds`: a reader's, removes our share, see READ_RELEASE).
/// A real release ([`Purpose::Release`], not the clean-up of a failed or interrupted attempt)
/// also gives up what is left of our place in the queue and tells the next waiter (see
/// RELEASE). The clean-up is sent again when the attempt may overtake it (see `undo`).
pub(in crate::lock) fn release_call(
    rounds: Rounds,
    holding: Holding<'_>,
    purpose: Purpose,
) -> Giving {
    let args = Ended {
        args: release_args(holding, purpose),
        how: holding.how.to_string(),
        history: holding.history.spec(),
    };
    Giving {
        call: Call::new(rounds.release, args),
        trace: "release",
    }
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
pub(in crate::lock) fn held_by(
    round: &Round,
    tickets_needed: usize,
) -> (AttemptFailure, Option<u64>) {
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
