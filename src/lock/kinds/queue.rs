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
//!    (`keys::wake_channel`) on q masters (see [`listen_on`]), and only then places itself,
//!    with WAIT, on every master: its token scored by that same ticket, a lease (the master's
//!    own time when the place lapses), and a record of who it is. WAIT also raises each
//!    master's counter to the ticket.
//! 3. **Waiting.** WAIT is also the heartbeat and the attempt: on each master it drops places
//!    whose lease lapsed, renews the caller's lease, and, when the caller is the first live
//!    waiter there and the lock is free, takes the lock with `SET` (keeping the place until the
//!    release). The lock is ours when a majority did so in time (validity and drift exactly as
//!    for ACQUIRE). After a failed turn a waiter sleeps until a notice, or until its timer
//!    (see `wakeup`): a waiter that is not first renews its place once per [`HEARTBEAT`]; the
//!    first one waits for the holder's release at most a [`HEARTBEAT`] (or the lock's TTL),
//!    and polls with the jittered backoff only where no notice will come (a lock held by a
//!    client outside the queue, masters out of reach). Each turn records what started it.
//! 4. **Hand-off.** Every script that changes who may take the lock on a master (RELEASE,
//!    also where the releaser held only its place; the clean-up of a partial hold; LEAVE; the
//!    slot scripts alike) publishes, on that master, to each waiter it newly lets in there,
//!    never to the caller (`queue_lua::FUNCTIONS`). A release thus wakes the first waiter
//!    alone, once per master; the others hear nothing, so a hand-off costs the same with 4
//!    waiters or 64.
//! 5. **Leaving.** A waiter that is interrupted or gives up removes its place on every master
//!    (LEAVE); whoever that lets in is woken. A waiter that dies or is stopped stops renewing:
//!    its place lapses after [`lease`] by each master's clock.
//!
//! # No wake-up is lost
//! The race this rules out (issue 23): H took its turn on masters 1-3 while the previous
//! holder's release was still on its way to 4 and 5, where H kept its place, first. H's release
//! reached 1 and 2 first; the waiter W, woken there, overtook it on 3 (H's lock) and 4, 5 (H's
//! place): 2 of 5, undone. Then H's release freed 3, 4 and 5, but only 3 deleted a lock, and
//! only a deleted lock was announced: W, not listening on 3, slept a heartbeat. Now:
//! - **Fault-free, a notice follows every failed turn** that can be followed by a success.
//!   Let turn T of waiter W fail, and B be the masters that did not let W in when T ran there:
//!   |B| ≥ N − q + 1, or T would have won. On each master of B, W is kept out by a lock or a
//!   place ahead of it (for a slot: the slots taken and the places ahead); each goes away by
//!   a script (a release, a clean-up, a LEAVE), which, as it lets W in, publishes to W, on
//!   that master, after T ran there, hence after W took its notices before T. W listens on q
//!   masters, and q + (N − q + 1) > N: one of them is in B. The join turn is covered too: W
//!   subscribes before its place exists, and nothing publishes to a token without a place. So,
//!   fault-free and with every client a redlock, every turn but the first is started by a notice; a
//!   turn started by a notice may still fail (it overtook the release elsewhere), and then the next
//!   notice comes from B.
//! - **When a lost notice still costs a heartbeat.** Only when, after W's last turn T, on
//!   every master of B among those W listens on, the change that lets W in is not announced to
//!   W: (a) no script makes it: a holder's lock or slot expired by its TTL (the holder died,
//!   was stopped or lost it), a place ahead lapsed (its waiter died or was stopped), a client
//!   outside the queue deleted its lock (DEL, no notice); or (b) the notice does not reach W:
//!   its subscription there ended (the master restarted, the connection was reset: where
//!   the notices ride on the kept connection, a break of it, see `Node::listen`; the
//!   master's `client-output-buffer-limit`; a subscription is not made again; checked by
//!   tests/queue_model/kept.rs), PUBLISH is
//!   denied there (ACL), or the master did not confirm the subscription within a node timeout
//!   when W joined; or (c) T timed out on that master after the master had let W in (no later
//!   change, no notice). Then W's timer starts its next turn: within one [`HEARTBEAT`], or the
//!   holder's TTL if shorter (see `wakeup`), and the turn is counted as a `heartbeat`.
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
//!   a node timeout, since that confirmation; the first turn counts from the end of the
//!   ticket round, before which no place exists). A waiter that was stopped longer, or cut off
//!   from a majority, finds its place gone and joins again at the back with a new token and
//!   ticket, after removing what is left of the old place. "Since" is measured on the monotonic
//!   clock, which does not count a suspended host: a turn that finds it had to make its place
//!   again on more masters than the quorum can spare (it had lapsed there) also sends the
//!   waiter to the back. So a stopped waiter loses its place and does not get it back by
//!   returning. (One gap: if that very turn finds the lock free and the waiter first, it
//!   takes it; order only, never safety.) A superseding waiter never re-adds a place after
//!   its first turn, lapsed or not (see `supersede`).
//! - **Nothing is left behind.** Every queue key gets a TTL of two leases on every write (see
//!   `scripts::queue`), places lapse by lease, and a winner's place goes with its release on
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

use super::attempt::retry_delay;
use super::cancel::Cancel;
use super::held::Lock;
use super::queue_turn::Turns;
use super::release::release;
use super::seam::{Holding, Leaving, Seam};
use super::undo::Purpose;
pub(in crate::lock) use super::waiter::{HEARTBEAT, Waiter, lease};
use super::wakeup::{Found, Wakeup, timer};
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::Masters;
use crate::lock::quorum::tally::Vote;
use crate::lock::scripts::replies::Mark;
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::notices::Notices;
use crate::lock::wire::resp::Reply;

/// How a wait in line ended.
pub(in crate::lock) enum InLine {
    Took(Lock),
    /// The wait budget ran out (the place was given up).
    GaveUp(AttemptFailure),
    Cancelled,
    /// The place lapsed on a majority (the waiter was stopped or cut off): join again.
    Lapsed,
    /// The key turned out to be in use otherwise (see [`Conflict`]), or its line has the other
    /// policy on enough masters to win; the place was given up.
    Conflict(Conflict),
    /// Waiters of both policies arrived at once and neither was placed on a quorum (an even
    /// N split in halves, or masters that did not answer): the place was given up, to be
    /// tried again after a jittered delay, as a split vote for the lock is.
    Split,
    /// A newer waiter evicted this one (`--supersede`, see `supersede`), as its mark says;
    /// whatever the turn took was undone and the place given up everywhere.
    Superseded(Mark),
    /// A superseding waiter's place was gone, after its first turn, on more masters than the
    /// quorum can spare, and no mark named it: it lapsed while the waiter was away (stopped,
    /// cut off, masters restarted without it), or it was evicted and the mark has expired. A
    /// superseding waiter does not make it again (see `supersede`), so it left the line: not
    /// superseded as far as anyone knows, and worth running again.
    LostPlace,
}

/// Waits in the queue until the lock is ours, the budget runs out, or `cancel` fires.
pub(in crate::lock) async fn wait_in_line(
    masters: &Masters,
    waiter: Waiter<'_>,
    give_up_at: Option<Instant>,
    cancel: &Cancel,
    on_retry: &mut dyn FnMut(&AttemptFailure),
) -> InLine {
    let timing = waiter.timing;
    // Listen first: a release right after we are placed must find us listening.
    let channel = crate::lock::scripts::keys::wake_channel(waiter.key, &waiter.token);
    let deadline = Instant::now() + timing.node_timeout;
    let deadline = give_up_at.map_or(deadline, |at| at.min(deadline));
    let listened = listen_on(masters, waiter.seam);
    let subscribed = tokio::select! {
        notices = Notices::subscribe(listened, &channel, deadline) => Some(notices),
        () = cancel.cancelled() => None,
    };
    let Some(mut notices) = subscribed else {
        // The attempt that drew the ticket placed us in line already.
        leave(masters, &waiter, Purpose::Abandon, INTERRUPTED).await;
        return InLine::Cancelled;
    };
    log::debug!(
        "listening for release notices of {:?} on {} of {} ({} on the kept connection; queued \
         with ticket {})",
        waiter.key,
        notices.subscribed(),
        crate::plural::counted(masters.nodes.len(), "master"),
        notices.on_kept_connections(),
        waiter.ticket
    );
    let turns = Turns::new(&waiter);
    // The start of the last round after which a majority had our place.
    let mut confirmed = waiter.since;
    let mut attempt = 0u32;
    let mut cause = Wakeup::Joined;
    loop {
        if cancel.is_cancelled() {
            leave(masters, &waiter, Purpose::Abandon, INTERRUPTED).await;
            return InLine::Cancelled;
        }
        // A superseding waiter makes its place in its first turn only: one gone later may
        // have been evicted, its mark since expired (see `supersede`).
        let join = if waiter.line.rejoins() {
            confirmed.elapsed() + HEARTBEAT + timing.node_timeout < lease(&timing)
        } else {
            cause == Wakeup::Joined
        };
        log::info!(
            event = "turn", key = waiter.key, cause = cause.label();
            "turn in line for {:?}, started by {}", waiter.key, describe(cause)
        );
        let start = Instant::now();
        let polled = tokio::select! {
            polled = turns.take(masters, join, cause) => Some(polled),
            () = cancel.cancelled() => None,
        };
        let Some(polled) = polled else {
            // The interrupted turn may have taken the lock somewhere.
            undo(masters, &turns, Purpose::Abandon).await;
            leave(masters, &waiter, Purpose::Abandon, INTERRUPTED).await;
            return InLine::Cancelled;
        };
        if let Some(mark) = polled.superseded {
            // Marked on some master: never run, even where this very turn took the lock
            // (see `supersede`, step 4).
            undo(masters, &turns, Purpose::Undo).await;
            leave(masters, &waiter, Purpose::Undo, "").await;
            return InLine::Superseded(mark);
        }
        let failure = match polled.outcome {
            Ok(mut lock) => {
                lock.woken_by = Some(cause);
                return InLine::Took(lock);
            }
            Err(failure) => failure,
        };
        if polled.partial || polled.conflict.is_some() {
            undo(masters, &turns, Purpose::Undo).await;
        }
        if let Some(conflict) = polled.conflict {
            leave(masters, &waiter, Purpose::Undo, "").await;
            return InLine::Conflict(conflict);
        }
        let spare = masters.nodes.len() - masters.quorum();
        // One policy per line: refused by more masters than it can spare, the waiter cannot
        // make a quorum in this line (see the module header).
        if let Some(policy) = polled.policy
            && polled.policy_refusals + polled.placeless > spare
        {
            undo(masters, &turns, Purpose::Undo).await;
            leave(masters, &waiter, Purpose::Undo, "refused").await;
            let theirs_may_win =
                polled.policy_refusals + polled.placeless + polled.unheard >= masters.quorum();
            if theirs_may_win {
                return InLine::Conflict(policy);
            }
            return InLine::Split;
        }
        // After the turn that made our places, one made again on more masters than the quorum
        // can spare means the place had lapsed on a majority: we were away (stopped, or the
        // host suspended, which the monotonic clock does not count) longer than `join`
        // believed. Join again at the back.
        let lapsed = cause != Wakeup::Joined && polled.remade > spare;
        let lost = if lapsed {
            log::debug!("our place in the queue for {:?} had lapsed", waiter.key);
            true
        } else if polled.placed >= masters.quorum() {
            confirmed = start;
            false
        } else if !join && polled.placeless > spare {
            log::debug!("lost our place in the queue for {:?}", waiter.key);
            true
        } else {
            false
        };
        if lost {
            leave(masters, &waiter, Purpose::Undo, "lost its place").await;
            if !waiter.line.rejoins() {
                return InLine::LostPlace;
            }
            return InLine::Lapsed;
        }
        let now = Instant::now();
        if give_up_at.is_some_and(|at| now >= at) {
            leave(masters, &waiter, Purpose::Undo, "gave up").await;
            return InLine::GaveUp(failure);
        }
        on_retry(&failure);
        let found = Found {
            failure: &failure,
            first: polled.first,
            outsider: polled.outsider,
        };
        // Jittered, so that the heartbeats of many waiters do not bunch up.
        let keep_alive = HEARTBEAT.mul_f64(0.75 + fastrand::f64() * 0.25);
        let (delay, timer_cause) = timer(&found, keep_alive, HEARTBEAT, retry_delay(attempt));
        if timer_cause == Wakeup::Backoff {
            attempt = attempt.saturating_add(1);
        }
        let delay = delay.min(give_up_at.map_or(Duration::MAX, |at| at - now));
        tokio::select! {
            () = tokio::time::sleep(delay) => cause = timer_cause,
            () = notices.next() => {
                cause = Wakeup::Notice;
                attempt = 0;
            }
            () = cancel.cancelled() => {
                leave(masters, &waiter, Purpose::Abandon, INTERRUPTED).await;
                return InLine::Cancelled;
            }
        }
    }
}

/// How a waiter that a signal interrupted leaves, as the history says it.
const INTERRUPTED: &str = "interrupted";

/// What started a turn, for the log line.
fn describe(cause: Wakeup) -> &'static str {
    match cause {
        Wakeup::Joined => "joining the queue",
        Wakeup::Notice => "a release notice",
        Wakeup::Heartbeat => "the heartbeat (no notice came)",
        Wakeup::Backoff => "the backoff (no notice expected)",
    }
}

/// The masters a waiter listens on for its wake-ups: as many as the quorum it waits for (the
/// majority for the lock, a slot's quorum for a slot), drawn at random. Each change that lets
/// it in is announced by the master where it happens; a failed turn was refused by at least
/// N − q + 1 masters, and these q share one with them: fault-free, a notice always follows a
/// failed turn (see the module header). Listening on all N would cost every master a
/// connection and a subscription per waiter, a third of the CPU of a contended hand-off
/// (BENCHMARKS.md); for an odd N and the lock, q = N − q + 1, as many as before.
fn listen_on<'a>(masters: &'a Masters, seam: &dyn Seam) -> Vec<&'a Endpoint> {
    let quorum = seam.quorum(masters.nodes.len());
    let mut nodes: Vec<&Endpoint> = masters.nodes.iter().collect();
    fastrand::shuffle(&mut nodes);
    nodes.truncate(quorum);
    nodes
}

/// Removes whatever a failed or interrupted turn took. A slot's undo puts the waiter's place
/// back where the slot had taken it, so nobody behind passes it there (see RELEASE_SLOT); the
/// undo wakes nobody, the waiter itself being the one its going lets in.
async fn undo(masters: &Masters, turns: &Turns<'_>, purpose: Purpose) {
    let waiter = turns.waiter;
    let holding = Holding {
        key: waiter.key,
        names: waiter.names,
        token: &waiter.token,
        timing: waiter.timing,
        history: waiter.history,
        how: "",
    };
    let seat = turns.queued.seat();
    release(waiter.seam, masters, holding, purpose, Some(&seat)).await;
}

/// Removes the waiter's place on every master (waking the waiters its going lets in there).
/// Bounded by one node timeout; after a signal ([`Purpose::Abandon`]), by getting onto the
/// wire (see `undo`).
/// `how`: why, as the key's history records it (`gave up`, [`INTERRUPTED`]; empty: not
/// recorded, the reason is told elsewhere).
async fn leave(masters: &Masters, waiter: &Waiter<'_>, purpose: Purpose, how: &str) {
    let why = Leaving {
        how,
        history: waiter.history,
    };
    let call = waiter.seam.leave(&waiter.token, waiter.names, why);
    let layout = waiter.names.keys(waiter.key);
    let start = Instant::now();
    let round = masters
        .round(
            start + waiter.timing.node_timeout,
            purpose.until(),
            |answer| match answer {
                Ok(Reply::Int(_)) => Vote::Yes,
                _ => Vote::Error,
            },
            |node| call.run(node, &layout),
        )
        .await;
    masters.trace("leave", waiter.key, &round, start.elapsed());
}
