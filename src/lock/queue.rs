//! The fair queue: waiters take the lock in the order they came, and a release wakes only the
//! next one.
//!
//! Without it every release woke every waiter, all of them raced on every master, and the
//! losers had to undo their partial holds: the work per hand-off grew with the number of
//! waiters, and who won was luck. The queue decides who may *try*; the lock itself is taken
//! exactly as before.
//!
//! # How it works
//! 1. **The uncontended path is unchanged.** ACQUIRE (see `scripts`) checks whether the queue
//!    key exists, and when it does not, does `SET NX PX` as before: one round trip, no clock,
//!    no ticket, no queue.
//! 2. **Joining.** A newcomer that will wait (`--wait` > 0) and is refused, because the lock
//!    is held or because others are queued, draws a ticket in the same script: `INCR` of the
//!    key's ticket counter on each master that refused. Its ticket is the highest number among
//!    the answers, which must come from at least N − q + 1 masters (else it stays out of the
//!    queue and retries like any refused attempt). It then subscribes to its own wake channel
//!    (`keys::wake_channel`) on N − q + 1 masters (see [`listen_on`]), and only then places
//!    itself, with WAIT, on every master: its token scored by that same ticket, a lease (the master's own time when the place lapses),
//!    and a record of who it is. WAIT also raises each master's counter to the ticket.
//! 3. **Waiting.** WAIT is also the heartbeat and the attempt: on each master it drops places
//!    whose lease lapsed, renews the caller's lease, and, when the caller is the first live
//!    waiter there and the lock is free, takes the lock with `SET` (keeping the place until the
//!    release). The lock is ours when a majority did so in time (validity and drift exactly as
//!    for ACQUIRE).
//!    The first waiter polls with the jittered backoff, at most once per [`HEARTBEAT`] while
//!    the lock has a TTL; the others only renew their place, once per [`HEARTBEAT`].
//! 4. **Hand-off.** RELEASE drops the releaser's place, and publishes on the
//!    wake channel of the first live waiter only. That waiter tries at once. The others hear
//!    nothing, so a hand-off costs the same with 4 waiters or 64. A lost notice costs the
//!    first waiter up to one [`HEARTBEAT`].
//! 5. **Leaving.** A waiter that is interrupted or gives up removes its place on every master
//!    (LEAVE); if it was first and the lock is free, the next is woken. A waiter that dies or is
//!    stopped stops renewing: its place lapses after [`lease`] by each master's clock.
//!
//! # Why it is sound
//! - **Safety is the lock's, unchanged.** Whoever holds the lock holds `SET NX` on a majority
//!   within its validity, as before. The queue only adds refusals (a newcomer may not take a
//!   free lock while others wait; a waiter may try only when first), never a grant, so no
//!   queue state, however inconsistent between masters, can let two holders in. Other Redlock
//!   clients (redlock-py, node-redlock, redsync, an earlier redlock) do `SET NX` on the lock
//!   key and know nothing of the queue: they are not queued, they may take a free lock ahead of
//!   queued waiters, and safety holds for them as for everyone.
//! - **One order on every master.** A waiter's place has the same score (its ticket) on every
//!   master, and Redis orders equal scores by member, the token: every master orders any two
//!   waiters the same way. Tickets need not be unique (two waiters joining at once may draw the
//!   same number; the token breaks the tie), only later for later arrivals: if A was placed on
//!   a majority before B drew its ticket, B's INCR reached at least N − q + 1 masters, one of
//!   which is in A's majority and had its counter at A's ticket or more, so B's ticket is
//!   greater. (This is why a plain INCR suffices here, unlike fencing, which needs uniqueness.)
//! - **No deadlock when masters disagree.** A live waiter re-adds its place, with its one
//!   ticket, on every master that lacks it, at every heartbeat (a master that restarted empty,
//!   or one that was unreachable when it joined), so within one heartbeat every live waiter is
//!   on every master it can reach. Dead places lapse within a lease. Then the live waiter with
//!   the smallest (ticket, token) is first on every reachable master: with a majority reachable
//!   it takes the lock as soon as the lock is free. Before that, a master may name a different
//!   first waiter (a dead one whose lease runs, a waiter it has not heard from yet): that only
//!   delays, by at most a lease and a heartbeat, never blocks.
//! - **A lapsed place is not re-added.** A waiter re-adds only while its place is certainly
//!   still alive on the majority that confirmed it (less than a lease, minus a heartbeat and
//!   a node timeout, since that confirmation). A waiter that was stopped longer, or cut off
//!   from a majority, finds its place gone and joins again at the back with a new token and
//!   ticket, after removing what is left of the old place. "Since" is measured on the monotonic
//!   clock, which does not count a suspended host: a turn that finds it had to make its place
//!   again on more masters than the quorum can spare (it had lapsed there) also sends the
//!   waiter to the back. So a stopped waiter loses its place and does not get it back by
//!   returning. (One gap: if that very turn finds the lock free and the waiter first, it
//!   takes it; order only, never safety.)
//! - **Nothing is left behind.** Every queue key gets a TTL of two leases on every write (see
//!   `queue_scripts`), places lapse by lease, and a winner's place goes with its release on
//!   every master (or lapses, if it dies holding the lock).
//!
//! Clocks: a lease is measured by each master's own clock (`TIME`), never compared between
//! machines. A master whose clock jumps forward drops live places early; their waiters re-add
//! them at the next heartbeat with the same ticket.
//!
//! # Assumes
//! Safety assumes only what the lock assumes (see `held`): the queue adds refusals, never a
//! grant. The order and the hand-off also assume:
//! - **Masters keep the queue's keys for a lease.** A master that restarts empty or evicts them
//!   forgets places and the ticket counter: each live waiter puts its place back at its next
//!   heartbeat, but a ticket drawn while the masters that kept the counter are unreachable may
//!   put a newcomer ahead of an earlier waiter (order, not safety). `doctor`: *persistence* and
//!   *eviction*.
//! - **Master clocks do not jump.** Forward, live places lapse early (put back at the next
//!   heartbeat); backward, a dead waiter's place outlives its lease by the size of the jump
//!   and delays the hand-off as long. `doctor`: *clock*.
//! - **Clock rates drift less than the drift factor.** A lease (three heartbeats and two node
//!   timeouts) is timed by the master and renewed by the waiter's monotonic clock; a 1% rate
//!   difference is far inside its margin. No `doctor` check measures rates.

use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::client::{release_token, retry_delay};
use super::endpoint::Endpoint;
use super::held::{Kind, Lock, Timing};
use super::holder::Holder;
use super::keys::Names;
use super::lua::Lua;
use super::node::NodeError;
use super::notices::Notices;
use super::outcome::{AttemptFailure, Conflict};
use super::queue_scripts::{LEAVE, Turn, WAIT, turn, wait_vote};
use super::quorum::{Decision, Loss, Vote};
use super::resp::Reply;
use super::round::{Masters, Until};
use super::semaphore;

/// How often a waiter that is not first renews its place.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a place lasts without a heartbeat: three heartbeats, plus room for two slow
/// requests.
pub(super) fn lease(timing: &Timing) -> Duration {
    3 * HEARTBEAT + 2 * timing.node_timeout
}

/// How long the queue's keys live after the last write: longer than any place in them.
pub(super) fn keep(timing: &Timing) -> Duration {
    2 * lease(timing)
}

/// A newcomer that was refused and drew a ticket.
pub(super) struct Waiter<'a> {
    pub key: &'a str,
    pub names: &'a Names,
    pub token: String,
    pub ticket: u64,
    /// When the ticket round started: the place is counted from then.
    pub since: Instant,
    pub timing: Timing,
    pub holder: Option<&'a Holder>,
    /// What it waits for: the lock, or a slot of a semaphore (see `semaphore`).
    pub kind: Kind,
}

/// How a wait in line ended.
pub(super) enum InLine {
    Took(Lock),
    /// The wait budget ran out (the place was given up).
    GaveUp(AttemptFailure),
    Cancelled,
    /// The place lapsed on a majority (the waiter was stopped or cut off): join again.
    LostPlace,
    /// The key turned out to be in use otherwise (see [`Conflict`]); the place was given up.
    Conflict(Conflict),
}

/// Waits in the queue until the lock is ours, the budget runs out, or `cancel` fires.
pub(super) async fn wait_in_line(
    masters: &Masters,
    waiter: Waiter<'_>,
    give_up_at: Option<Instant>,
    cancel: &Cancel,
    on_retry: &mut dyn FnMut(&AttemptFailure),
) -> InLine {
    let timing = waiter.timing;
    // Listen first: a release right after we are placed must find us listening.
    let channel = super::keys::wake_channel(waiter.key, &waiter.token);
    let deadline = Instant::now() + timing.node_timeout;
    let deadline = give_up_at.map_or(deadline, |at| at.min(deadline));
    let mut notices = tokio::select! {
        notices = Notices::subscribe(listen_on(masters), &channel, deadline) => notices,
        () = cancel.cancelled() => return InLine::Cancelled,
    };
    log::debug!(
        "listening for release notices of {:?} on {} of {} (queued with ticket {})",
        waiter.key,
        notices.subscribed(),
        crate::plural::counted(masters.nodes.len(), "master"),
        waiter.ticket
    );
    let turns = Turns::new(&waiter);
    // The start of the last round after which a majority had our place.
    let mut confirmed = waiter.since;
    let mut attempt = 0u32;
    let mut woken = false;
    let mut first_turn = true;
    loop {
        if cancel.is_cancelled() {
            leave(masters, &waiter).await;
            return InLine::Cancelled;
        }
        let join = confirmed.elapsed() + HEARTBEAT + timing.node_timeout < lease(&timing);
        let start = Instant::now();
        let polled = tokio::select! {
            polled = turns.take(masters, join) => Some(polled),
            () = cancel.cancelled() => None,
        };
        let Some(polled) = polled else {
            // The interrupted turn may have taken the lock somewhere.
            undo(masters, &waiter).await;
            leave(masters, &waiter).await;
            return InLine::Cancelled;
        };
        let failure = match polled.outcome {
            Ok(lock) => return InLine::Took(lock),
            Err(failure) => failure,
        };
        if polled.partial || polled.conflict.is_some() {
            undo(masters, &waiter).await;
        }
        if let Some(conflict) = polled.conflict {
            leave(masters, &waiter).await;
            return InLine::Conflict(conflict);
        }
        let spare = masters.nodes.len() - masters.quorum();
        // After the turn that made our places, one made again on more masters than the quorum
        // can spare means the place had lapsed on a majority: we were away (stopped, or the
        // host suspended, which the monotonic clock does not count) longer than `join`
        // believed. Join again at the back.
        let lapsed = !first_turn && polled.remade > spare;
        first_turn = false;
        if lapsed {
            log::debug!("our place in the queue for {:?} had lapsed", waiter.key);
            leave(masters, &waiter).await;
            return InLine::LostPlace;
        }
        if polled.placed >= masters.quorum() {
            confirmed = start;
        } else if !join && polled.placeless > spare {
            log::debug!("lost our place in the queue for {:?}", waiter.key);
            leave(masters, &waiter).await;
            return InLine::LostPlace;
        }
        let now = Instant::now();
        if give_up_at.is_some_and(|at| now >= at) {
            leave(masters, &waiter).await;
            return InLine::GaveUp(failure);
        }
        on_retry(&failure);
        let delay = if !polled.first {
            // Not first: only keep the place (jittered, so heartbeats do not bunch up).
            HEARTBEAT.mul_f64(0.75 + fastrand::f64() * 0.25)
        } else if woken {
            // Woken and beaten to it (by a client outside the queue): look again soon.
            Duration::from_millis(fastrand::u64(1..=5))
        } else {
            let backoff = retry_delay(attempt);
            attempt = attempt.saturating_add(1);
            match failure {
                // Held until its TTL runs out, unless released first (and then we hear).
                AttemptFailure::Held {
                    expires_in: Some(ttl),
                    ..
                } => backoff.max(ttl.min(HEARTBEAT)),
                _ => backoff,
            }
        }
        .min(give_up_at.map_or(Duration::MAX, |at| at - now));
        woken = false;
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = notices.next() => {
                log::debug!("woken by a release notice of {:?}: our turn", waiter.key);
                woken = true;
                attempt = 0;
            }
            () = cancel.cancelled() => {
                leave(masters, &waiter).await;
                return InLine::Cancelled;
            }
        }
    }
}

/// The masters a waiter listens on for its wake-up: N − q + 1 of them, drawn at random. A
/// release is announced by every master where it deleted the lock, at least the q of the
/// holder's majority, and any q masters and these N − q + 1 share one: with every master up,
/// one notice always reaches the waiter. With masters down or restarted (a subscription is
/// not made again once broken) a notice can be missed, and the first waiter's poll, at most a
/// [`HEARTBEAT`] later, covers it. Listening on all N would cost every master a connection and
/// a subscription per waiter, a third of the CPU of a contended hand-off (BENCHMARKS.md).
fn listen_on(masters: &Masters) -> Vec<&Endpoint> {
    let mut nodes: Vec<&Endpoint> = masters.nodes.iter().collect();
    fastrand::shuffle(&mut nodes);
    nodes.truncate(masters.nodes.len() - masters.quorum() + 1);
    nodes
}

/// What one turn found.
pub(super) struct Polled {
    pub outcome: Result<Lock, AttemptFailure>,
    /// Some master gave us the lock although the turn failed: undo it.
    pub partial: bool,
    /// Masters that have our place (or gave us the lock).
    pub placed: usize,
    /// Of those, the masters where this very turn made the place (it had lapsed there).
    pub remade: usize,
    /// Masters that answered that they have no place for us.
    pub placeless: usize,
    /// Some master names us first (for a slot: in a position the free slots leave room for).
    pub first: bool,
    /// A master found the key in use otherwise (a slot's turn only).
    pub conflict: Option<Conflict>,
}

/// The arguments of a waiter's WAIT, built once.
pub(super) struct Turns<'a> {
    pub waiter: &'a Waiter<'a>,
    pub ttl_ms: Vec<u8>,
    pub record: String,
    pub ticket: String,
    pub waiting_record: String,
    pub lease_ms: String,
    pub keep_ms: String,
}

impl<'a> Turns<'a> {
    fn new(waiter: &'a Waiter<'a>) -> Turns<'a> {
        let record = waiter
            .holder
            .map(|h| h.record(&waiter.token))
            .unwrap_or_default();
        // The same record, dated from when the wait began.
        let waiting_record = waiter
            .holder
            .map(|h| {
                Holder {
                    since_ms: super::holder::unix_millis(std::time::SystemTime::now()),
                    ..h.clone()
                }
                .record(&waiter.token)
            })
            .unwrap_or_default();
        Turns {
            waiter,
            ttl_ms: waiter.timing.ttl_ms(),
            record,
            ticket: waiter.ticket.to_string(),
            waiting_record,
            lease_ms: lease(&waiter.timing).as_millis().to_string(),
            keep_ms: keep(&waiter.timing).as_millis().to_string(),
        }
    }

    /// One turn on every master.
    async fn take(&self, masters: &Masters, join: bool) -> Polled {
        let waiter = self.waiter;
        if let Kind::Slot { limit } = waiter.kind {
            return self.take_slot(masters, join, limit).await;
        }
        let names = waiter.names;
        let keys = names.lock_keys(waiter.key);
        let args: [&[u8]; 8] = [
            waiter.token.as_bytes(),
            &self.ttl_ms,
            self.record.as_bytes(),
            self.ticket.as_bytes(),
            self.waiting_record.as_bytes(),
            self.lease_ms.as_bytes(),
            self.keep_ms.as_bytes(),
            if join { b"1" } else { b"" },
        ];
        self.turn(masters, masters.quorum(), 1, (&WAIT, &keys, &args), turn)
            .await
    }

    /// One turn (`request`: the script, keys and arguments of WAIT or a slot's WAIT_SLOT, each
    /// answer read by `decode`), decided by `quorum`; a waiter whose position is below `room`
    /// somewhere may take it at its next turn (1 for the lock; L for a slot).
    pub(super) async fn turn(
        &self,
        masters: &Masters,
        quorum: usize,
        room: usize,
        (script, keys, args): (&Lua, &[&str], &[&[u8]]),
        decode: fn(&Result<Reply, NodeError>) -> Option<Turn>,
    ) -> Polled {
        let waiter = self.waiter;
        let start = Instant::now();
        let round = masters
            .round_with(
                quorum,
                start + waiter.timing.node_timeout,
                // Not `Decided`: a turn that fails must hear every master, or undo what one it
                // did not hear from may have given it (no partial holds). A lost turn is not
                // urgent; a won one still returns at quorum.
                Until::WonOrAllAnswered,
                wait_vote,
                |node| node.eval(script, keys, args),
            )
            .await;
        let elapsed = start.elapsed();
        masters.trace("turn", waiter.key, &round, elapsed);
        let mut polled = Polled {
            outcome: Err(AttemptFailure::TooSlow { elapsed }),
            // Anything but a refusal from every master may have left the key with us.
            partial: round.tally.no() < masters.nodes.len(),
            placed: 0,
            placeless: 0,
            remade: 0,
            first: false,
            conflict: None,
        };
        let mut held = Held::default();
        for answer in round.answers.iter().flatten() {
            match decode(answer) {
                Some(Turn::Taken) => polled.placed += 1,
                Some(Turn::NoPlace) => polled.placeless += 1,
                Some(Turn::Conflict(conflict)) => polled.conflict = Some(conflict),
                Some(Turn::Waiting(place)) => {
                    polled.placed += 1;
                    polled.remade += usize::from(!place.placed_before);
                    polled.first |= place.position < room;
                    held.place = held.place.max(place.position + 1);
                    held.waiters = held.waiters.max(place.waiters);
                    held.free &= place.refusal.free;
                    held.holder = held.holder.take().or(place.refusal.holder);
                    if let Some(ttl) = place.refusal.expires_in {
                        held.expires_in = Some(held.expires_in.map_or(ttl, |t| t.max(ttl)));
                    }
                }
                None => {}
            }
        }
        polled.outcome = match round.tally.decision() {
            Decision::Won if elapsed + waiter.timing.drift() < waiter.timing.ttl => {
                log::info!(
                    event = "acquired", key = waiter.key, outcome = "turn",
                    elapsed_ms = elapsed.as_micros() as f64 / 1000.0,
                    confirmed = round.tally.yes(), masters = masters.nodes.len();
                    "acquired {:?} in turn in {elapsed:.1?}", waiter.key
                );
                polled.partial = false;
                let mut refusals = round.failures(masters);
                refusals.retain(|f| f.cause().is_configuration());
                Ok(Lock {
                    kind: waiter.kind,
                    key: waiter.key.to_string(),
                    token: waiter.token.clone(),
                    timing: waiter.timing,
                    validity_end: waiter.timing.validity_end(start),
                    refusals,
                })
            }
            Decision::Won => Err(AttemptFailure::TooSlow { elapsed }),
            Decision::Lost(Loss::Refused) => Err(match waiter.kind {
                Kind::Lock => AttemptFailure::Held {
                    holder: held.holder.map(Box::new),
                    expires_in: held.expires_in,
                    free: held.free,
                    waiters: held.waiters,
                    place: (held.place > 0).then_some(held.place),
                },
                Kind::Slot { limit } => AttemptFailure::Full {
                    limit,
                    holders: Vec::new(),
                    frees_in: held.expires_in,
                    waiters: held.waiters,
                    place: (held.place > 0).then_some(held.place),
                },
            }),
            Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                Err(AttemptFailure::Unreachable {
                    needed: quorum,
                    failures: round.failures(masters),
                })
            }
        };
        polled
    }
}

/// What the masters that refused a turn said, merged.
struct Held {
    holder: Option<Holder>,
    expires_in: Option<Duration>,
    free: bool,
    waiters: usize,
    place: usize,
}

impl Default for Held {
    fn default() -> Held {
        Held {
            holder: None,
            expires_in: None,
            free: true,
            waiters: 0,
            place: 0,
        }
    }
}

/// Removes whatever a failed or interrupted turn took, waking nobody.
async fn undo(masters: &Masters, waiter: &Waiter<'_>) {
    let (key, token, timing) = (waiter.key, &waiter.token, waiter.timing);
    match waiter.kind {
        Kind::Lock => {
            release_token(masters, key, waiter.names, token, timing, false).await;
        }
        Kind::Slot { limit } => {
            semaphore::release_slot(masters, key, token, limit, timing, false).await;
        }
    }
}

/// Removes the waiter's place on every master (waking the next waiter where it was first and
/// the lock is free). Bounded by one node timeout.
async fn leave(masters: &Masters, waiter: &Waiter<'_>) {
    let names = waiter.names;
    let keys = names.lock_keys(waiter.key);
    let keys = &keys;
    let start = Instant::now();
    let round = masters
        .round(
            start + waiter.timing.node_timeout,
            Until::DecidedAndSent,
            |answer| match answer {
                Ok(Reply::Int(_)) => Vote::Yes,
                _ => Vote::Error,
            },
            move |node| async move {
                let args: [&[u8]; 4] = [
                    waiter.token.as_bytes(),
                    node.publish_command().as_bytes(),
                    names.wake_prefix.as_bytes(),
                    names.wake_suffix.as_bytes(),
                ];
                node.eval(&LEAVE, keys, &args).await
            },
        )
        .await;
    masters.trace("leave", waiter.key, &round, start.elapsed());
}
