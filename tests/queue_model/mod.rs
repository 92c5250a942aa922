//! A model of the fair queue's protocol (src/lock/kinds/queue.rs), checked exhaustively by
//! stateright: every interleaving of every step, within the bounds each test names.
//!
//! # The Lua it mirrors
//! ACQUIRE, RELEASE (src/lock/scripts/lock.rs); WAIT, LEAVE (src/lock/scripts/queue.rs); the
//! slots' ACQUIRE_SLOT, WAIT_SLOT, RELEASE_SLOT, LEAVE_SLOT (src/lock/scripts/slots.rs); the
//! functions they share, `first_live`, `drop`, `eligible_lock`, `wake_newly`
//! (src/lock/scripts/queue_lua.rs), and the slots' `eligible_slots`; with a forcer, FORCE,
//! EXTEND and RELEASE's `acknowledges` (src/lock/scripts/revoke.rs, `revoke`). Each script is one atomic
//! step in `master` and `slots`, line for line in what decides who holds, who is first and who
//! is told. The system around the masters (connections, notices, timers, faults, reductions)
//! is tests/model_kit, shared with tests/rw_model.
//!
//! # What is modelled
//! Three masters and a few clients, each wanting the lock once (or a slot of a semaphore of
//! limit 2, whose holder needs all three masters: `Kind::Slots`).
//! - **A master** (`master`, `slots`) stores the lock `K` (which token holds it) or the slots
//!   (which tokens hold one), the queue (places sorted by ticket, then token; a place is there
//!   while its lease runs, gone once it lapsed) and the ticket counter. It runs one script at
//!   a time, atomically, as Redis does: ACQUIRE, RELEASE (and its clean-up form, the undo),
//!   WAIT and LEAVE, or their slot forms, keeping each line of Lua that decides who holds, who
//!   is first or who is told (`first_live`, `drop`, `wake_first`; for the fix,
//!   `eligible_lock`, `eligible_slots` and `wake_newly`).
//! - **A client** (`client`) is `take::take` and `queue::wait_in_line` as a state machine:
//!   ACQUIRE round (over when its `Until` says, `Rules::newcomer_decided`; a partial hold is
//!   undone; with tickets from 2 refusals it joins, else it backs off outside the queue and
//!   arrives again) -> subscribe (`listen_on`: any of the sets it may draw) -> WAIT rounds
//!   (won at the quorum, else failed once all answered, `Until::WonOrAllAnswered`; a partial
//!   hold is undone) -> sleep (heartbeat, backoff, or today's 1-5 ms retry, chosen as
//!   `wait_in_line` chooses) until a notice is read or the timer fires -> holding -> RELEASE
//!   -> done.
//! - **The network**: each client has one connection per master, and a master runs a
//!   connection's requests in the order they were written (TCP); across connections, and so
//!   across masters and clients, any order. A round writes one request per master, each its
//!   own message. An answer reaches the client as its script runs: a slower answer is the same
//!   run as a later script, as the client does nothing meanwhile but wait. RELEASE, undo and
//!   LEAVE are not waited for (`Until::DecidedAndSent`: what they answer changes nothing the
//!   model tracks; the client goes on at once, which only allows more orders).
//! - **Notices** are the waiter's coalesced flag (`Notices::next` takes every notice that
//!   arrived, at once): a publish sets it, the next look clears it. A notice still on the wire
//!   counts as unread: how long it travels is how long the waiter takes to look. A notice is
//!   lost exactly where the real system loses one without a fault: published on a master the
//!   waiter does not listen on, or after its wait ended (it took the lock, left, or died).
//! - **Timers** are actions: a sleep may end at any moment, so a heartbeat or backoff may start
//!   a turn in the middle of any hand-off. Each test bounds how many timers fire in one run.
//! - **A forced release**, where a test enables it (`revoke`): a forcer sends FORCE at any
//!   moment; holders renew once, at any moment, and stop and release when a majority refuses
//!   (or any master says revoked). For slots, FORCE keeps each revoked slot counted until its
//!   holder's release (`slots`, `revoke_slots`); one of the two slot holders renews.
//! - **Faults**, where a test enables them: one client dies at any step (what it wrote still
//!   arrives; its subscriptions end; later its place lapses and its lock or slot expires,
//!   master by master, at any moments), and one waiter gives up or is interrupted (LEAVE,
//!   after an undo when mid-turn). Where a test enables it, one waiter's connection to one
//!   master breaks (`kept`).
//! - **Where the subscription rides** (`kept`): a subscribed connection of its own per master
//!   (as above, and a RESP2 server's after issue 53), or the connection the waiter keeps for
//!   its requests there (RESP3): SUBSCRIBE in that connection's order, confirmed before the
//!   join turn, ending with that connection.
//!
//! # Properties
//! - **Never more holders than the limit**: at most one client believes it holds the lock
//!   (at most L a slot).
//! - **First come, first served**: a client that arrived (its first ACQUIRE ran somewhere)
//!   while another's live place was on a majority of masters never holds the lock (or the last
//!   free slot) before that one was served (unless that one left or died).
//! - **No lost wake-up** (runs without deaths): in every state where nothing can happen
//!   without a timer (no request on the wire, no notice unread, no client with a step of its
//!   own such as a release or today's quick retry), no live client is asleep. Nothing on the
//!   wire and nobody holding means the lock (every slot) is free on every master, so a waiter
//!   asleep there is queued behind a free lock that only a timer can start again (and a
//!   newcomer backing off outside the queue, one that only its backoff brings back).
//!   Checked as a state invariant, which stateright checks exhaustively (its `eventually` is
//!   sound only on acyclic paths, and heartbeats make cycles). Every path without a timer is
//!   finite, so it ends in such a state: each client arrives, subscribes, releases and leaves
//!   at most once, and a turn needs a notice, which only a RELEASE, a LEAVE or an undo
//!   publishes, an undo only to a waiter that placed itself ahead of the undoer since its turn
//!   (once per join). So the invariant means: from any state, the lock is taken again without
//!   a timer firing. Where a waiter's connection broke (`kept`), that waiter may be left to its
//!   heartbeat, by design: then it is the first in line of those asleep.
//!
//! # What is abstracted away, and why that is sound
//! - **Time.** Leases and TTLs are events, not clocks: a place lapses and a lock or slot
//!   expires only after its owner died. A live waiter renews its place every heartbeat, well
//!   within a lease; a live holder stops before its validity ends (Redlock's own argument,
//!   which the queue does not touch: it only ever adds refusals). So the `join` flag is always
//!   set and a place is never made again later (`LostPlace`): those paths need a waiter
//!   stopped for a lease, which is a death here.
//! - **Tokens** are the clients' numbers (tokens are random and never reused), tickets small
//!   numbers. Equal tickets are ordered by token, which the model fixes as client order; only
//!   clients that start alike (two newcomers, two joining) can draw equal tickets, so which of
//!   them has the smaller token is only a naming.
//! - **What answers carry beyond the decision** (holder records, PTTL values, queue lengths)
//!   and what keeps keys from being left behind (`keep` TTLs, refreshed by every write while
//!   anything lives) change no decision.
//! - **Not modelled**: timeouts, lost requests, master restarts and broken subscriptions
//!   (faults whose cost, a heartbeat, the module header of queue.rs states; but for one: a
//!   waiter's connection to a master that breaks, with its subscription there where that rides
//!   on it, the kept connection of issue 53: see `kept`), clients outside
//!   the queue (other Redlock clients), a key in use as the other kind, a second limit. One
//!   lost request's aftermath is a start of its own (`Start::StaleMarker`, see `revoke`).
//! - **Starting states.** `Start::HandOff` starts at a hand-off about to happen (holders;
//!   waiters placed everywhere and asleep, or about to place themselves; newcomers not yet
//!   arrived), a state reachable from the empty one, chosen so that three or four clients fit
//!   in seconds; `Start::Empty` starts from nothing.
//! - **Reductions** (`QueueModel::reduced`), which lose no state that breaks a property: the
//!   masters are interchangeable, so states that differ only by their names are explored once
//!   (`model_kit::symmetry`), and a step that commutes with every other and changes nothing a
//!   property reads (a request that is a no-op where it runs, now and ever; an arrival or a
//!   subscription while nobody can die) is taken first, alone (partial-order reduction, see
//!   `model_kit::system`). A trace is told with the names of its start.
//!
//! # Findings
//! Today's protocol loses wake-ups, three ways (`todays_*`). The fix of issue 23 (as specified
//! for this model) holds for the lock within every bound tried. For slots its first version
//! left one gap: a newcomer refused by one master only (a holder needs all 3) and granted by
//! the others drew one ticket where it needed 2, and backed off outside the queue. The fix now
//! draws a waiting newcomer a ticket from every master that answers, a slot given too, and
//! the model checks that it holds: `fixed_slots_queue_a_newcomer_refused_by_one_master`.
//!
//! # Bounds and cost
//! Each test names its clients and how many timers may fire; every client wants the lock once,
//! at most one dies and one leaves. The tests print how many states they explored and how long
//! it took: `cargo test --test models queue_model -- --nocapture`. Larger bounds:
//! `fixed_protocol_holds_within_larger_bounds` (ignored; minutes). The kept connection's
//! runs, a connection break among them, and their sizes: `kept`.

mod client;
mod kept;
mod master;
mod orders;
mod policies;
mod properties;
mod protocol;
mod revoke;
mod slots;
mod start;
mod supersede;
mod system;
mod trace;

use stateright::Checker;

use crate::model_kit::check;

use protocol::{Kind, Protocol};
use start::Start;
use system::QueueModel;

/// Checks that every property of the fixed protocol holds in `model` (and that some run
/// serves everyone), telling the path to any counterexample.
fn holds(model: QueueModel) {
    check::holds(model, trace::tell);
}

fn fixed(start: Start) -> QueueModel {
    QueueModel {
        protocol: Protocol::Fixed,
        kind: Kind::Lock,
        start,
        crash: false,
        leave: false,
        timers: 0,
        reduced: true,
        force: None,
        subscription: kept::Subscription::Separate,
        breaks: false,
    }
}

/// A holder, then `waiters` placed and asleep, `joining` about to place themselves, and
/// `newcomers` yet to arrive (see `Start::HandOff`).
fn hand_off(waiters: usize, joining: usize, newcomers: usize) -> Start {
    Start::HandOff {
        waiters,
        joining,
        newcomers,
    }
}

/// Checks that today's protocol loses a wake-up in `model`, tells how, and returns the state
/// it ends in.
fn loses_a_wake_up(model: QueueModel) -> system::State {
    // One thread: the same counterexample every run (the last one the checker visits: see
    // `check::shortest`).
    let checker = check::explore(model, 1);
    let path = checker.assert_any_discovery("no lost wake-up");
    let last = path.last_state().clone();
    println!("{}", trace::tell(&model, path));
    assert!(!properties::can_move_without_a_timer(&last));
    assert!(last.masters.iter().all(|m| m.lock.is_none()));
    // The flaw is the wake-up alone: the lock and the order hold.
    checker.assert_no_discovery("never more holders than the limit");
    checker.assert_no_discovery("first come, first served");
    last
}

/// Issue 23's hand-off: the new holder took its turn on 2 masters while the previous holder's
/// release was still on its way to the third, where it kept its place, first. Its release
/// reaches one master and wakes the next waiter, whose turn overtakes the release elsewhere and
/// fails; the release then frees the rest, but it announces only where it deleted a lock, on
/// a master the waiter does not listen on. The waiter sleeps until its heartbeat. (Found with
/// the masters' names kept, so that the trace reads as the issue does.)
#[test]
fn todays_protocol_loses_a_wake_up() {
    loses_a_wake_up(QueueModel {
        protocol: Protocol::Today,
        reduced: false,
        ..fixed(hand_off(2, 0, 0))
    });
}

/// The second path (issue 23's "other paths to a heartbeat-started turn"): two waiters place
/// themselves while the holder releases; the later one, not yet behind the earlier on one master,
/// takes it there, fails, and its undo frees that master for the earlier one without a notice.
#[test]
fn todays_protocol_loses_a_wake_up_to_an_undo() {
    loses_a_wake_up(QueueModel {
        protocol: Protocol::Today,
        ..fixed(hand_off(0, 2, 0))
    });
}

/// Hand-offs through two waiters, with up to two heartbeats or backoffs firing anywhere.
#[test]
fn fixed_protocol_hands_off_without_a_timer() {
    holds(QueueModel {
        timers: 2,
        ..fixed(hand_off(2, 0, 0))
    });
}

/// Two waiters place themselves while the holder releases (partial holds, undos).
#[test]
fn fixed_protocol_wakes_past_an_undo() {
    holds(fixed(hand_off(0, 2, 0)));
}

/// A newcomer arrives at any moment of a hand-off to a waiter.
#[test]
fn fixed_protocol_queues_a_newcomer_behind_a_hand_off() {
    holds(fixed(hand_off(1, 0, 1)));
}

/// Two newcomers from nothing: both try the uncontended path at once, tickets tie or not.
#[test]
fn fixed_protocol_serves_newcomers_in_order() {
    holds(QueueModel {
        timers: 2,
        ..fixed(Start::Empty { newcomers: 2 })
    });
}

/// A waiter gives up at any moment of a hand-off: whoever its going lets in is woken.
#[test]
fn fixed_protocol_wakes_past_a_waiter_that_leaves() {
    holds(QueueModel {
        leave: true,
        ..fixed(hand_off(2, 0, 0))
    });
}

/// A client dies at any step (and a waiter may leave): never two holders, and the order kept
/// among the living.
#[test]
fn fixed_protocol_survives_a_death() {
    holds(QueueModel {
        crash: true,
        leave: true,
        timers: 2,
        ..fixed(hand_off(1, 0, 0))
    });
    holds(QueueModel {
        crash: true,
        ..fixed(Start::Empty { newcomers: 2 })
    });
}

fn fixed_slots(start: Start) -> QueueModel {
    QueueModel {
        kind: Kind::Slots { limit: 2 },
        ..fixed(start)
    }
}

/// Slots (limit 2, so a holder needs all 3 masters) today: both holders' releases reach two
/// masters first; the waiter, woken there, fails on the third, and the releases then land on
/// the third, where it does not listen (it listens on N - q + 1 = 2 masters, with q the
/// majority). Its undos also leave its place missing where its turns took a slot.
#[test]
fn todays_slots_lose_a_wake_up() {
    loses_a_wake_up(QueueModel {
        protocol: Protocol::Today,
        ..fixed_slots(hand_off(1, 0, 0))
    });
}

/// Slot hand-offs to two waiters.
#[test]
fn fixed_slots_hand_off_without_a_timer() {
    holds(fixed_slots(hand_off(2, 0, 0)));
}

/// Two slot waiters place themselves while the holders release: a waiter's undo puts its
/// place back, and wakes whoever it lets in.
#[test]
fn fixed_slots_wake_past_an_undo() {
    holds(fixed_slots(hand_off(0, 2, 0)));
}

/// A slot holder or waiter dies at any step, a waiter may leave.
#[test]
fn fixed_slots_survive_a_death() {
    holds(QueueModel {
        crash: true,
        leave: true,
        ..fixed_slots(hand_off(1, 0, 0))
    });
}

/// The flaw the model found in the first version of the fix: a slot newcomer loses once a
/// single master refuses it (a holder needs all 3), but joined the queue only with tickets
/// from 2 refusals; refused by one and granted by two, it was left outside the queue, unheard,
/// to its backoff, with every slot free. Now every answer draws a waiting newcomer a ticket,
/// a slot given too (ACQUIRE_SLOT's `{'taken', ticket}`): it is queued, and nothing is lost.
/// (The shortest trace of the flaw started here: two holders, a waiter, a newcomer.)
#[test]
fn fixed_slots_queue_a_newcomer_refused_by_one_master() {
    holds(fixed_slots(hand_off(1, 0, 1)));
}

/// Larger bounds than CI can afford (minutes in a debug build): two waiters racing their joins
/// with a leave or a timer, a newcomer against a joining waiter, a death among three, two
/// newcomers arriving while the holder releases.
#[test]
#[ignore]
fn fixed_protocol_holds_within_larger_bounds() {
    holds(QueueModel {
        leave: true,
        ..fixed(hand_off(0, 2, 0))
    });
    holds(fixed(hand_off(0, 1, 1)));
    holds(QueueModel {
        crash: true,
        ..fixed(hand_off(2, 0, 0))
    });
    holds(QueueModel {
        timers: 1,
        ..fixed(hand_off(0, 2, 0))
    });
    holds(fixed(hand_off(0, 0, 2)));
    holds(QueueModel {
        leave: true,
        ..fixed_slots(hand_off(2, 0, 0))
    });
    holds(QueueModel {
        timers: 1,
        ..fixed_slots(hand_off(2, 0, 0))
    });
    holds(QueueModel {
        crash: true,
        leave: true,
        timers: 1,
        ..fixed_slots(hand_off(1, 0, 0))
    });
}
