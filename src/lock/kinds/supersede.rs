//! A superseding line (`--supersede`): a newer waiter evicts the older waiters of the lock's
//! line; the evicted leave at once and never run; the holder is never touched. CI deploy
//! queues want it: once pipeline 103 waits, 101 and 102 are stale, and deploying them first
//! only delays 103.
//!
//! The lock is the lock (its seam, `exclusive`, takes, renews and releases it); only a
//! waiter's turn differs: [`Supersede`] sends WAIT_SUPERSEDE (`scripts::supersede`) where a
//! waiter of the lock sends WAIT. "Newer" is (order, ticket, token), the same on every master
//! (see `scripts::supersede`): with `--order`, a higher order; among equal orders (a retry of
//! the same pipeline, or no orders at all), the later arrival. So a retry of pipeline 103
//! evicts its own earlier attempt if that one still waits, and one of them runs.
//!
//! # The protocol, per master (each step one atomic script)
//! 1. A superseding turn first reads the marks: a waiter a mark names is refused there for
//!    good (`superseded`), before any join or take.
//! 2. The line's policy (a key beside the queue, with its TTL) must be `supersede`, or the
//!    line empty of others: a waiter asking for the other policy is refused (exit 64), and a
//!    first-come, first-served waiter (WAIT) is refused where the key says `supersede`.
//! 3. Among the places in line, skipping the holder's (K's token there), the caller evicts
//!    every older one (drops it, marks it with the caller's ticket and record, publishes on its
//!    wake channel) or, when a newer one is there, marks and drops itself instead.
//! 4. Then WAIT's own body: the heartbeat, and the take when the caller is first and K free.
//!
//! And per client: any `superseded` answer ends the wait, whatever else the turn won: what it
//! took is undone, its place left everywhere (LEAVE, which wakes whoever that lets in), and it
//! exits as superseded, naming its evictor. A superseding waiter whose place lapsed while it
//! was away (stopped, or cut off) does not join again ([`Supersede::rejoins`]): the mark that
//! would have told it may have expired with the queue's keys meanwhile.
//!
//! # Why it holds
//! - **An evicted waiter never takes the lock afterwards.** Let E's turns have marked W on a
//!   set M of masters. A master checks the mark before it lets W join or take (step 1), and
//!   marks are only written, never removed, while anyone turns (their TTL is the queue's, set
//!   again at each eviction, and a live waiter turns at least once a heartbeat, well within
//!   it). So from the moment M is a majority, every turn of W is refused on a master of every
//!   majority: no later turn of W wins, however late the notice that started it. And a turn of
//!   W that hears any mark gives up what it took: W never runs once it learned of a mark.
//!   What a mark on a minority allows is a turn of W, already on its way, that wins on a
//!   majority without the marked masters: W then took the lock before E's eviction was done,
//!   and it is the holder.
//! - **A holder is never evicted.** Step 3 skips K's token: the master where a waiter holds K
//!   never marks it. A run holds the lock on a majority; at most the minority where it did
//!   not take K can mark it, and a holder's renewals and release (EXTEND, RELEASE) read no
//!   marks. (A waiter that supersedes itself may hold K on that master from a partial hold
//!   of its own turn: it never won, and its undo, sent as it leaves, removes it. The model
//!   first flagged this as a holder evicted; it is a waiter leaving.)
//! - **No waiter is evicted that is newer than its evictor.** A mark is written by the caller
//!   only on places older than itself (step 3), by one order every master computes alike from
//!   the same tickets and records, whatever order the waiters reached each master in.
//! - **No lost wake-up.** An eviction publishes to each evicted waiter, which learns of it at
//!   its next turn (at once: a notice; else its heartbeat). It changes who may take K on that
//!   master only by removing places ahead of the caller (who goes on to take in the same
//!   script) or, when the caller supersedes itself, ahead of a newer waiter, which `hand_off`
//!   then wakes as LEAVE would; every other waiter newly let in is woken (`wake_newly`). An
//!   evicted waiter's LEAVE on the masters its evictor did not reach wakes whoever its going
//!   lets in there (`queue`, "Hand-off"). An evictor that dies mid-eviction leaves marks on
//!   some masters: the waiters those name leave at their next turn (they are older than a
//!   waiter that was in line: a deploy that is stale all the same), and the dead evictor's
//!   place lapses within a lease, as any dead waiter's does; a newer waiter evicts it at once.
//! - **Safety of the lock is untouched**: the line only adds refusals and evictions, never a
//!   grant (see `queue`, "Why it is sound").
//!
//! The model in tests/queue_model/supersede.rs checks these with a late notice, an evictor
//! that dies mid-eviction, and masters that saw the waiters in different orders; it catches a
//! turn that does not check the marks, and an eviction by a master's own arrival order. On
//! real masters, tests/supersede.rs `an_evicted_waiter_whose_turn_comes_after_its_evictor_ran`
//! forces the first: the evicted waiter is stopped (SIGSTOP) while its evictor evicts it on
//! every master, runs and releases; its late turn finds the line empty and the lock free, and
//! only step 1 refuses it (without it, that turn takes the lock on every master).
//!
//! # Assumes
//! The queue's assumptions (see `queue`), and: **masters keep the marks for the queue's
//! TTL**. A master that restarts empty forgets them: a waiter evicted only there (its evictor
//! reached no other master) may take the lock there again. `doctor`: *persistence*.
//! And **node timeouts of a like size on every host**: a waiter back from a stop or a cut
//! within two heartbeats and its node timeout of its last turn joins again (see `queue`), and
//! the marks last two of the evictor's leases (six heartbeats and four of its node timeouts)
//! after the eviction. A waiter whose `--node-timeout` is over 4 s plus four times its
//! evictor's can come back after the marks expired and take the lock (seen on real masters:
//! 10 s against 250 ms, stopped 7 s). A derived node timeout (at most 1 s) cannot.
//! Marks accumulate in one hash while evictions follow each other less than the queue's TTL
//! apart (about 6 s by default); they go with it when the line is quiet that long.

use super::attempt::Refused;
use super::exclusive::{Exclusive, turn_args};
use super::fence::FenceError;
use super::held::{Kind, Lock};
use super::seam::{Boxed, Call, Holding, InTheWay, Queued, Request, Seam, Seat, Wait};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Released};
use crate::lock::quorum::round::Masters;
use crate::lock::scripts::keys::{ALL_KEYS, Names};
use crate::lock::scripts::queue::turn;
use crate::lock::scripts::supersede::WAIT_SUPERSEDE;

/// The lock, taken by a superseding waiter: everything is the lock's (`Exclusive`) but the
/// turn (WAIT_SUPERSEDE) and a lapsed place, which is not made again.
pub(in crate::lock) struct Supersede;

/// The lock's seam, which does the rest.
const LOCK: &Exclusive = &Exclusive;

impl Seam for Supersede {
    fn kind(&self) -> Kind {
        LOCK.kind()
    }

    fn new_token(&self) -> String {
        LOCK.new_token()
    }

    fn quorum(&self, n: usize) -> usize {
        LOCK.quorum(n)
    }

    fn attempt<'a>(
        &'a self,
        masters: &'a Masters,
        request: &'a Request<'a>,
        names: &'a Names,
        token: &'a str,
    ) -> Boxed<'a, Result<Lock, Refused>> {
        LOCK.attempt(masters, request, names, token)
    }

    fn release<'a>(
        &'a self,
        masters: &'a Masters,
        holding: Holding<'a>,
        purpose: Purpose,
        seat: Option<&'a Seat<'a>>,
    ) -> Boxed<'a, Released> {
        LOCK.release(masters, holding, purpose, seat)
    }

    fn wait(&self, queued: &Queued, join: bool) -> Wait {
        Wait {
            call: Call {
                script: &WAIT_SUPERSEDE,
                keys: ALL_KEYS,
                args: turn_args(queued, join),
            },
            room: 1,
            decode: turn,
            publishes: true,
        }
    }

    fn refused_turn(&self, in_the_way: InTheWay, first: bool) -> (AttemptFailure, bool) {
        LOCK.refused_turn(in_the_way, first)
    }

    fn outsiders(&self) -> bool {
        LOCK.outsiders()
    }

    fn extend(&self, token: &str, ms: &[u8]) -> Call {
        LOCK.extend(token, ms)
    }

    fn leave(&self) -> Call {
        LOCK.leave()
    }

    fn fence(&self) -> Result<(), FenceError> {
        LOCK.fence()
    }

    fn rejoins(&self) -> bool {
        false
    }
}
