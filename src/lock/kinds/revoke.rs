//! Breaking glass: `release --force` revokes whoever holds K, without their token, and never
//! makes two holders (nor L + 1 of a semaphore's slots). The Lua and the record it leaves are
//! in `scripts::revoke` (a semaphore's: `scripts::slots`, its `revoke`); this is the round
//! over the masters, what it decides, and why it is safe. It serves every kind alike (the
//! engine's): the lock, every reader, every slot.
//!
//! **The protocol.**
//! 1. FORCE is sent to every master at once; on each, atomically, a `K` that holds a token
//!    (or the readers' marker, with live shares) is given
//!    [`REVOKED_MARKER`](crate::lock::scripts::revoke::REVOKED_MARKER) in its place, and the
//!    holder record becomes the revocation record (who, from which host, why, when, whom),
//!    both with a TTL of the remaining TTL there (the longest share's) plus drift; the
//!    readers' shares and records go. A free master is
//!    left free; a master already revoked is left as it is (the force sent again counts).
//! 2. The force counts once a majority holds the revocation ([`Forced::Revoked`]). It names
//!    as revoked holders only the tokens it found on enough masters to hold (a majority,
//!    counting those it did not hear); a token found on fewer is a partial hold (a waiter at
//!    the head of the line whose turn took K, for a moment, on a master that had lost the
//!    holder's token; what is left of an expired hold), revoked where it was found all the
//!    same (closed there until its TTL, or until its owner's undo acknowledges it), and named
//!    as a partial hold, never as a second holder. Its owner, which keeps its token and may
//!    take the lock properly later, is never told that this force revoked that later hold:
//!    a hold counts a revocation only from a master known to have given it K in the round
//!    that took it (`Lock::granted_by`, see `renewal`), and the master that kept the marker
//!    refused that round.
//!    The count is a report, not a safety rule (every token found is revoked where it is,
//!    named or not), and not exact: the force's scripts run at different moments on each
//!    master, so a waiter whose partial holds of two rounds it caught on two masters (an
//!    attempt's on one, the next turn's on another; the queue's model finds it in 28 steps)
//!    is counted on a majority and named. A per-round identity in the holder record would
//!    tell them apart.
//!    With the revocation on fewer than a majority ([`Forced::Unconfirmed`]), the holder was not revoked: it keeps the lock if its renewals
//!    still reach a majority; where the force landed, K stays closed until that TTL (so the
//!    partial force is as safe as a partial hold), and the same force sent again completes it.
//! 3. The revoked holder's next renewal finds the marker where its token was: refused by a
//!    majority, it reads the record and stops its command as for a lost lock (`run`: exit 70,
//!    naming who revoked it, from where, and why). Then its release, sent with its token as
//!    always, says so: the last revoked token crossed off opens K, and RELEASE's hand-off wakes
//!    the first waiter by its notice. Each master where it said so answers with the record it
//!    acknowledged instead of a bare 1 ([`released`]): the round counts it as done, exactly as
//!    a deletion, and the releaser (`release --token`) is told who revoked it. The round
//!    listens until it can tell whether the force had taken the hold away (`Until::Released`,
//!    by a renewal's rule): a `run` whose command ended before its next renewal learns of the
//!    force there (`supervise::revoked`).
//!
//! **Why it never makes two holders.** On every master, K holds a live token, the marker, or
//! nothing; the marker lasts at least as long as the token it replaced would have. So to any
//! newcomer (ours, or a foreign client's `SET K x NX`), a revoked master looks exactly as if
//! the revoked holder still held it, until one of two things: the TTL the holder had runs out
//! there, or the holder's own release crosses its token off. The first is Redlock's own
//! argument (`held`): the holder's validity ends before its token's TTL on a majority,
//! measured on its own clock with drift, and the marker adds drift on top. The second happens
//! only once the holder stopped using the lock: `run` releases after its command was reaped
//! and its group killed, and anyone else who releases with a token gives it up by doing so.
//! Meanwhile the holder cannot make its validity longer: every extension compares its token,
//! which the marker replaced, so once the force holds a majority no renewal of the revoked
//! holder can reach one; a holder paused through the force and resumed finds the same. A
//! newcomer therefore needs a majority on which the revoked holder's validity has surely
//! ended or which it gave back: never two holders, by force or not. The model in
//! `tests/queue_model` checks the same rules (a revoked holder renewing late, a waiter woken
//! by the acknowledgment), and that freeing K at once on force lets two in.
//!
//! **How each kind is revoked.** The lock: as above, one token per master. Readers
//! (`shared`): K's readers' marker becomes the revocation marker, every live share (KEYS[9],
//! with its record from KEYS[10]) is named in `revoked` (the first 100; the rest counted in
//! `unlisted`, so that K never opens early while one of them may still read), and both keys
//! go; the TTL is the longest share's plus drift. READ_EXTEND answers `{'revoked', record}` as
//! EXTEND does; READ_RELEASE crosses its token off (`cross_off`, the record keeping K's TTL),
//! and the last one opens K and wakes whoever that lets in (`eligible_lock`: readers and
//! writers alike). The model in `tests/rw_model` checks it (revoked readers and a waiting
//! writer, a revoked writer and a waiting reader) and that freeing K at once lets a writer in
//! beside a reader.
//!
//! **A semaphore's slots** (`semaphore`; K free, its slots key there). On each master FORCE
//! renames every live slot (its token behind a fixed prefix) and scores it by the time the
//! slot had left there plus drift, with a revocation record of its own that names that one
//! token; nothing is freed. EXTEND_SLOT, not finding its token, finds the renamed one and
//! answers `{'revoked', record}`; RELEASE_SLOT (the revoked holder's release, after its
//! command is dead, or its undo) removes the renamed slot, and its hand-off wakes whoever the
//! freed slot lets in, by notice. Why never more than L hold, even by force: the semaphore's
//! argument (`semaphore`) counts, at an instant when L + 1 clients each believe they hold,
//! (L + 1)·q live slots on N masters that hold at most L·N. A revoked holder inside its
//! validity still has its q slots counted: on each of its q masters its slot is either still
//! its own or renamed, and the renamed slot lives at least as long as the slot did (score
//! plus drift; the holder's validity ends before each score, by the semaphore's argument),
//! unless the holder's own release removed it, which it sends only once its command is dead.
//! The renamed slot cannot be extended (the member is not its token), so the holder's
//! validity cannot grow: with the force on a majority, at most N − majority masters keep its
//! own slot, fewer than q (q > N/2 ≥ N − majority), so no renewal reaches q. A force that reached fewer masters
//! is as safe (every slot stays counted) but may leave the holder renewing. The model in
//! `tests/queue_model` (its `revoke_slots`) checks it with limit 2 on 3 masters, and that
//! freeing the slots at once lets 3 in.
//!
//! **What it assumes.** What Redlock assumes (bounded drift, masters that keep their keys): a
//! master that restarts empty loses the marker as it would lose the token. A `K` set without a
//! TTL by another client has no validity to wait out: it is kept closed for the force's TTL
//! (`--ttl`'s default), its holder being no Redlock client. A slot scored within the last
//! drift's worth of a year ahead is kept to that horizon (`LONGEST`), as every slot is.

use std::time::{Duration, Instant};

use super::held::Timing;
use crate::lock::quorum::outcome::{MasterFailure, Released};
use crate::lock::quorum::round::{Masters, Round, Until};
use crate::lock::quorum::tally::{Decision, Loss};
use crate::lock::scripts::FORCE;
use crate::lock::scripts::calls::args::{Force, Recorded};
use crate::lock::scripts::history::History;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::revoke::{
    ForceAnswer, Revocation, Revoked, acknowledged_reply, force_answer, force_vote,
};

/// What a forced release found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forced {
    /// A majority holds the revocation: K is closed until the revoked holders said they
    /// stopped, or for `closed_for` at most.
    Revoked {
        /// The holders this force revoked (each once, with its record where it had one):
        /// those it found on enough masters to hold (with the masters it did not hear).
        revoked: Vec<Revoked>,
        /// The tokens it found on too few masters to hold: partial holds (a waiter's turn or
        /// a newcomer's attempt that took K on some master for a moment, what is left of an
        /// expired hold), closed there until their TTL or their owner's undo, and named as
        /// such, not as holders.
        partial: Vec<Revoked>,
        /// An earlier force found in place on some masters, if any.
        earlier: Option<Revocation>,
        /// How many masters hold the revocation.
        confirmed: usize,
        /// The longest any of them keeps K closed.
        closed_for: Option<Duration>,
    },
    /// A majority had nothing to revoke: K is free. `partial`: the masters where it revoked a
    /// partial hold all the same (a failed attempt, or what is left of an expired lock), closed
    /// there until that TTL or the partial holder's release.
    NothingHeld { partial: usize },
    /// Neither: the force reached `confirmed` masters, fewer than a majority.
    Unconfirmed {
        confirmed: usize,
        needed: usize,
        revoked: Vec<Revoked>,
        failures: Vec<MasterFailure>,
    },
}

/// Sends FORCE for `key` to every master, as `by` (its note the reason), and waits for every
/// answer (one node timeout at most): a force must reach all the masters it can.
pub(in crate::lock) async fn force(
    masters: &Masters,
    key: &str,
    by: &Holder,
    timing: Timing,
) -> Forced {
    let names = Names::of(key);
    let layout = names.keys(key);
    let args = Recorded {
        args: Force {
            // The record without its token: FORCE sets it to the marker.
            record: by.to_json().to_string(),
            factor: timing.drift_factor.to_string(),
            grace_ms: timing.ttl.as_millis().to_string(),
            // Where it revokes, FORCE announces on the release channel (for `status --watch`).
            channel: keys::released_channel(key),
        },
        // Each revoked turn is recorded (a force is no take: it trims to the ceiling only).
        history: History::default().spec(),
    };
    let start = Instant::now();
    let round = masters
        .round(
            start + timing.node_timeout,
            Until::AllAnswered,
            force_vote,
            |node| FORCE.run(node, &layout, &args),
        )
        .await;
    masters.trace("force", key, &round, start.elapsed());
    let answers: Vec<ForceAnswer> = round
        .answers
        .iter()
        .flatten()
        .filter_map(|answer| answer.as_ref().ok().and_then(force_answer))
        .collect();
    // Each token found, and on how many masters.
    let mut found: Vec<(Revoked, usize)> = Vec::new();
    let mut earlier = None;
    let mut closed_for: Option<Duration> = None;
    for answer in answers {
        let closed = match answer {
            ForceAnswer::Forced {
                revoked: here,
                closed_for,
            } => {
                for Revoked { token, holder } in here {
                    match found.iter_mut().find(|(r, _)| r.token == token) {
                        Some((known, on)) => {
                            known.holder = known.holder.take().or(holder);
                            *on += 1;
                        }
                        None => found.push((Revoked { token, holder }, 1)),
                    }
                }
                Some(closed_for)
            }
            ForceAnswer::Already {
                revocation,
                closed_for,
            } => {
                earlier = earlier.or(revocation);
                closed_for
            }
            ForceAnswer::Free => None,
        };
        if let Some(closed) = closed {
            closed_for = Some(closed_for.map_or(closed, |c| c.max(closed)));
        }
    }
    let (yes, no, quorum) = (round.tally.yes(), round.tally.no(), masters.quorum());
    // Every kind's holder holds on a majority at least (a slot on its quorum, which is more):
    // a token found on fewer, counting the masters not heard as its own, holds nowhere.
    let unheard =
        masters.nodes.len() - round.answers.iter().flatten().filter(|a| a.is_ok()).count();
    let (held, partial): (Vec<_>, Vec<_>) = found
        .into_iter()
        .partition(|(_, on)| on + unheard >= quorum);
    let revoked: Vec<Revoked> = held.into_iter().map(|(r, _)| r).collect();
    let partial: Vec<Revoked> = partial.into_iter().map(|(r, _)| r).collect();
    if yes >= quorum {
        Forced::Revoked {
            revoked,
            partial,
            earlier,
            confirmed: yes,
            closed_for,
        }
    } else if no >= quorum {
        Forced::NothingHeld { partial: yes }
    } else {
        Forced::Unconfirmed {
            confirmed: yes,
            needed: quorum,
            revoked: revoked.into_iter().chain(partial).collect(),
            failures: round.failures(masters),
        }
    }
}

/// What a release round of `token` (counted by `scripts::revoke::release_vote`) found: done
/// ([`Released::Acknowledged`] where some master acknowledged a revocation of it, naming who
/// revoked it from the first record that names `token`), refused, or unknown. A deletion and
/// an acknowledgement count alike: each gives up what the token held there.
pub(in crate::lock) fn released(round: &Round, masters: &Masters, token: &str) -> Released {
    match round.tally.decision() {
        Decision::Won => {
            let acknowledged: Vec<Option<Revocation>> = round
                .answers
                .iter()
                .flatten()
                .filter_map(|answer| acknowledged_reply(answer.as_ref().ok()?))
                .collect();
            if acknowledged.is_empty() {
                return Released::Yes;
            }
            let on = acknowledged.len();
            let by = acknowledged
                .into_iter()
                .flatten()
                .find(|revocation| revocation.names(token))
                .map(Box::new);
            Released::Acknowledged {
                by,
                on,
                taken: round.taken(),
            }
        }
        Decision::Lost(Loss::Refused) => Released::NotHeld,
        _ => Released::Unknown {
            failures: round.failures(masters),
        },
    }
}
