//! A superseding line (`--supersede`): a newer waiter evicts the older waiters of the lock's
//! line; the evicted leave at once and never run; the holder is never touched. CI deploy
//! queues want it: once pipeline 103 waits, 101 and 102 are stale, and deploying them first
//! only delays 103.
//!
//! The lock is the lock (its seam, `exclusive`, takes, renews and releases it): superseding
//! is the line's policy, asked for by the request (`seam::Line`), not a kind. Only a
//! waiter's turn differs: in a superseding line the lock's seam sends WAIT_SUPERSEDE
//! ([`wait`], its Lua in `scripts::supersede`) where a waiter of the lock sends WAIT. "Newer" is (order, ticket, token), the same on every master
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
//! exits as superseded, naming its evictor. A superseding waiter makes its place in its first
//! turn only (`Line::rejoins`: later turns are sent without `join`); one that finds it
//! gone on more masters than the quorum can spare (it lapsed while the waiter was stopped or
//! cut off, or it was evicted and the mark has expired: the waiter cannot tell which) leaves
//! without running, but does not say it was superseded: nobody newer is known to deploy, so
//! it exits with its own code (82, `AcquireError::LostPlace`), which CI retries, where 80
//! means "a newer waiter deploys". Rejoining instead, when no mark names it, would not do:
//! an expired mark names nobody (see "Why it holds").
//!
//! # One policy per line
//! Each master decides a line's policy by itself: the first waiter placed there sets it (the
//! policy key, or a first-come, first-served place), and one of the other policy is refused
//! there (`{'policy', theirs}`): a FIFO writer and a reader by WAIT's and READ_WAIT's
//! `FIFO_POLICY_CHECK`, a superseding waiter by step 2. Waiters of both policies arriving at
//! once may each be first on some masters, so a refusal is a vote, not a verdict
//! (`queue::wait_in_line`): a waiter refused for its policy on more masters than the quorum
//! can spare (its refusals and its missing places together) cannot make a quorum in that
//! line and leaves; it exits 64 when the masters that did not place it are enough for the
//! other policy to win (a quorum), else (an even N split in halves, or masters that did not
//! answer) it leaves and comes again after a jittered delay, as a split vote of the lock
//! itself. A waiter refused on fewer masters waits on with the places it has. Each master
//! places exactly one of two waiters that reach it, so with an odd N heard whole one of them
//! has a quorum and the other is refused: one policy wins (when every master refused on
//! sight, as before, both could be refused). The model checks it (`Rule::AnyPolicyRefusal`).
//! The reader's turn checks the policy too: without it, a reader joined a superseding line
//! and the superseding waiters ahead of it left as superseded by it.
//!
//! # Why it holds
//! - **An evicted waiter never takes the lock afterwards.** A turn takes K on a master only
//!   from the first place in line there (WAIT's body: no place, no take); W's place is made
//!   only by W's first turn, the one sent with `join`, which runs there at most once. Before
//!   it runs, W has no place there to evict; after an eviction dropped W's place on a master,
//!   nothing makes it again, so no turn of W takes K there again, however late it arrives.
//!   Let E's turns have dropped W's place on a set M of masters: a winning turn needs K on a
//!   majority, which meets M, so once M is a majority no later turn of W wins. What this
//!   allows is a turn of W, already on its way, that took K on the masters of M it counts
//!   before the evictions there (which then skip it, the holder of K there): W won before
//!   E's eviction was done, and it is the holder.
//!   No clock is involved: not the marks' TTL, not the lease, not this host's monotonic
//!   clock (which does not count a suspended host), not the masters' clocks by which Redis
//!   expires keys (which may drift or jump), not how late a request arrives.
//!   The marks tell W who evicted it: a master checks them before anything else (step 1)
//!   and writes nothing for W there, so W's next turn hears of the eviction, gives up what
//!   it took elsewhere, and exits naming its evictor (as outdated when that one waited first
//!   with a higher order).
//!   A time limit on making the place again would not do. It would count from W's last
//!   confirmed turn, and have to end, with the turn's own trip (up to W's node timeout),
//!   before the marks do: six heartbeats after the eviction on that master, at the least.
//!   The queue's limit (two heartbeats and the node timeout) does not: with
//!   `--node-timeout 10s`, W stopped 7 s came back after its evictor's marks expired and
//!   deployed, on real masters. A shorter one would leave a waiter with a node timeout over
//!   6 s no time at all, and still fail, for nothing ties an eviction on one master to W's
//!   last confirmed turn: only an eviction renews a master's marks, not the evictor's other
//!   turns. E may drop W's place on master 1 while cut off from master 2, and on 2 only
//!   seconds later; W, confirmed meanwhile by 2 and 3 (1's refusals unheard) and then
//!   stopped, comes back after E ran and 1's marks expired, and its place, made again on 1
//!   and kept on 3, wins.
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
//! that dies mid-eviction, masters that saw the waiters in different orders, and marks that
//! expire at any moment; its waiters make their place in their first turn only, as here. It
//! catches a waiter that makes its place again at a later turn (evicted, its marks expired,
//! it joins the empty line and runs), a turn that does not check the marks (the evicted
//! waiter then says it lost its place, not who evicted it), and an eviction by a master's own
//! arrival order. On real masters, tests/supersede_late.rs stops (SIGSTOP) the evicted
//! waiter while its evictor evicts it on every master, runs and releases, so that the line is
//! empty and the lock free when it resumes.
//! `an_evicted_waiter_whose_turn_comes_after_its_evictor_ran` resumes it while the marks
//! last: step 1 refuses its late turn, naming its evictor.
//! `an_evicted_waiter_back_after_its_marks_expired_does_not_join_again` resumes it once they
//! are gone: it finds no place and exits 82 (before the first-turn rule, that turn joined
//! the empty line, took the lock on every master and deployed again).
//!
//! # Assumes
//! The queue's assumptions (see `queue`), and: **masters do not lose writes**. A master that
//! restarts empty forgets the marks but also the place, which is not made again (W may then
//! say it lost its place rather than name its evictor); one that restarts from a copy older
//! than the eviction gives W its place back. `doctor`: *persistence*. And the first turn
//! places the waiter where it can: a master that did not have its place then (unreachable),
//! or lost it since (a restart, a clock jump that lapsed it), never gets it; with more of
//! those than the quorum can spare, the waiter exits 82 having lost its place (liveness,
//! never safety: a place missing only refuses).
//! Marks accumulate in one hash while evictions follow each other less than the queue's TTL
//! apart (about 6 s by default); they go with it when the line is quiet that long.

use super::seam::{Call, Queued, Wait};
use crate::lock::scripts::WAIT_SUPERSEDE;
use crate::lock::scripts::calls::args::{SupersedingTurn, Wake};
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::queue::turn;

/// A superseding waiter's turn at the lock: WAIT's, which also evicts the older waiters and
/// wakes them (`names`: the layout of the key, where they are told). Its answers read as
/// WAIT's, one place at the head of the line.
pub(in crate::lock) fn wait(queued: &Queued, join: bool, names: &Names) -> Wait {
    let args = SupersedingTurn {
        turn: queued.recorded_turn(join),
        wake: Wake::of(names),
    };
    Wait {
        call: Call::new(&WAIT_SUPERSEDE, args),
        room: 1,
        decode: turn,
    }
}
