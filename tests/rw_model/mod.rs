//! A model of issue 25's readers-writer lock (`--shared`, argued in src/lock/kinds/shared.rs)
//! over three masters, checked exhaustively by stateright: every interleaving of every step,
//! within the bounds each test names. The system around the masters (connections, notices,
//! timers, faults, reductions) is tests/model_kit, shared with tests/queue_model (the fair
//! queue of the lock and the slots).
//!
//! # The Lua it mirrors
//! READ_ACQUIRE, READ_WAIT, READ_EXTEND, READ_RELEASE (src/lock/scripts/shared.rs); the
//! writer's ACQUIRE, EXTEND, RELEASE (src/lock/scripts/lock.rs); WAIT and LEAVE
//! (src/lock/scripts/queue.rs); and what they share, `first_live`, `drop`, `eligible_lock`,
//! `wake_newly` (src/lock/scripts/queue_lua.rs). Each script is one atomic step in `master`.
//!
//! # What is modelled
//! Three masters and two to four clients, each a reader or a writer wanting K once, and in some
//! tests a foreign client.
//! - **A master** (`master`) stores K (free, the readers' marker, a writer's token, or the
//!   foreign client's value), the readers key (who has a live share), the queue (places sorted
//!   by ticket, then token, each with its mode, as the token's `shr-` prefix tells the Lua; a
//!   place is there while its lease runs) and the ticket counter. It runs one script at a time,
//!   atomically: ACQUIRE and READ_ACQUIRE (a newcomer reader takes a share only where nobody
//!   waits and K is free or the marker; the writer's `SET NX` fails where the marker is),
//!   WAIT and READ_WAIT (an eligible waiter takes K, keeping its place until its release),
//!   RELEASE and READ_RELEASE (the marker goes with the last share), their clean-up forms (the
//!   undo), LEAVE, EXTEND and READ_EXTEND (only where the share lives, never re-created), and
//!   the foreign client's `SET K x NX` and `GET`-then-`DEL`. Eligibility is the design's: a
//!   writer waiter iff it is the first live waiter and K is free or its own; a reader waiter
//!   iff every live waiter ahead of it is a reader and K is free or the marker. Every script
//!   that may change who is eligible publishes to each waiter eligible after its writes and not
//!   before, except the caller (`wake_newly`).
//! - **A client** (`client`) is `take::take` and `queue::wait_in_line` for its mode:
//!   ACQUIRE round (`Until::WonOrAllAnswered`; a partial hold is undone; with tickets from 2
//!   refusals it joins, else it backs off outside the queue) -> subscribe on a majority (any of
//!   the three pairs) -> WAIT rounds (won at its quorum, else failed once all answered; a
//!   partial hold is undone) -> asleep until a notice is read or its timer fires -> holding
//!   (renewed at most once: an EXTEND round, confirmed by its quorum or it stops) -> release.
//!   The foreign client sends `SET NX` to every master, holds with a majority of yeses, else
//!   deletes what it got and backs off; it announces nothing.
//! - **The network**: one connection per client and master, run in order (TCP); across
//!   connections any order, so every message may be delayed behind any other. RELEASE, the
//!   undo, LEAVE and DEL are not waited for.
//! - **Notices** are the waiter's coalesced flag: a publish sets it, the next look clears it;
//!   one published where the waiter does not listen, or after its wait ended, is lost.
//! - **Timers** are actions: a heartbeat or backoff may start a turn (or a newcomer's next
//!   attempt) at any moment; each test bounds how many fire in a run. A dead client's lease
//!   and TTL run out as actions too, master by master, at any moments after its death.
//! - **Faults**, where a test enables them: one client dies at any step (what it wrote still
//!   arrives), and one waiter gives up (LEAVE, after an undo when mid-turn).
//!
//! # Properties (`properties`)
//! - **A writer holds alone** (always): never a writer of ours or the foreign client holding
//!   (in its belief: it won its quorum, and it is within its validity) together with any other
//!   holder; readers may hold together, and do: **two readers hold together** (sometimes).
//! - **Every holder keeps K on its quorum** (always): a writer's token, a reader's live share
//!   under the marker, the foreign value, on as many masters as its quorum, for as long as it
//!   holds (so its renewal is always confirmed).
//! - **No reader overtakes a waiting writer**, **no writer overtakes an earlier waiter**
//!   (always): a client that arrived (its first ACQUIRE ran) while another's live place was on
//!   a majority does not hold before that one was served (unless it left or died), except a
//!   reader behind a reader. **Readers from the line enter together** (sometimes): two
//!   readers that waited in line hold at once.
//! - **No lost wake-up** (always; runs without deaths or foreign clients, whose expiries and
//!   DELs announce nothing by design): a state in which nothing can happen without a timer
//!   has no client asleep or backing off. Every path without a timer is finite, so from any
//!   state K is taken again without a timer (queue_model's argument).
//! - **An eligible waiter is woken** (always; the same runs): in a state in which nothing can
//!   happen but timers, releases and renewals, no waiter asleep is eligible on its quorum. So
//!   readers at the head of the line enter while the readers ahead still hold, not at their
//!   heartbeat, and a waiter let in by a quorum is told or took K at its own turn.
//! - **Every client served** (sometimes): the model is not vacuous.
//!
//! # What is abstracted away, and why that is sound
//! - **Time**: leases and TTLs are events that happen only after their owner died (a live
//!   waiter renews its place within a lease, a live holder stops before its validity ends:
//!   Redlock's own argument). So EXTEND changes nothing where the share lives, and what it
//!   must never do (re-create a share) is what **every holder keeps K on its quorum** reads.
//!   The marker's PX (the longest live share) is the event "the last share expired".
//! - **Tokens** are the clients' numbers, tickets small numbers, ties ordered by token.
//! - **What answers carry beyond the decision** (holder records, PTTLs, queue lengths), the
//!   keys' `keep` TTLs, the bounded pruning (at most 4 places here) and mixing with a
//!   semaphore change no decision. Not modelled: timeouts, lost requests, master restarts.
//! - **Starting states** (`start`): a hand-off about to happen (holders; waiters placed
//!   everywhere, asleep, subscribed on any pair; clients about to place themselves; newcomers),
//!   reachable from the empty state, or the empty state itself.
//! - **Reductions**: the masters are interchangeable (`symmetry`), and steps that commute with
//!   every other and change nothing a property reads go first, alone (partial-order
//!   reduction, `model_kit::system`).
//!
//! # Teeth
//! Each known-bad rule (`protocol::Flaw`) breaks a property, and a test asserts that the
//! checker finds the counterexample, printing its shortest trace: a newcomer reader that
//! ignores the queue, and a waiting reader that ignores a writer ahead, overtake the writer;
//! a release that publishes to the first newly eligible reader only leaves the second asleep
//! while the first holds, and after; a reader quorum of one lets a writer in with a reader; a
//! reader's release that deletes the marker while another reader holds lets a foreign
//! `SET NX` in.
//!
//! # Findings
//! The design holds within every bound tried (issue 25's findings). One cost, not a flaw: a
//! reader keeps its place until its release (as the lock's WAIT does), so while a
//! reader that came through the queue holds, every newcomer reader is refused and queues
//! (tickets, a subscription, a join turn that lets it in). The alternative rule, a newcomer
//! reader let in where no writer waits (`Rules::readers_pass_readers`), holds too:
//! `the_alternative_newcomer_rule_holds`.
//!
//! # Bounds and cost
//! `cargo test --test models rw_model -- --nocapture` prints each check's states and time
//! (the whole target: about 8 s in a debug build on a loaded 2-core machine; the largest
//! check, 724 000 states); larger bounds: `the_design_holds_within_larger_bounds` (ignored; 5 minutes).

mod client;
mod master;
mod properties;
mod protocol;
mod revoke;
mod start;
mod system;
mod trace;

use properties::{ALONE, ELIGIBLE_WOKEN, LOST_WAKE_UP, READER_ORDER};
use protocol::Mode::{Foreign as F, Reader as R, Writer as W};
use protocol::{Flaw, Rules};
use start::Start;
use system::RwModel;

use crate::model_kit::check;

/// Checks that every property holds in `model` (and that every `sometimes` is met), telling
/// the path to any counterexample.
fn holds(model: RwModel) {
    check::holds(model, trace::tell);
}

/// Checks that `model` (the design with a flaw) breaks each of `properties`, and tells how.
fn breaks(model: RwModel, properties: &[&'static str]) {
    let full = check::explore(model, 1);
    for &property in properties {
        let path = check::shortest(&model, &full, property);
        println!("{property:?} fails:\n{}", trace::tell(&model, path));
    }
}

fn design(start: Start) -> RwModel {
    RwModel {
        rules: Rules {
            flaw: None,
            readers_pass_readers: false,
        },
        start,
        crash: false,
        leave: false,
        extend: false,
        timers: 0,
    }
}

fn flawed(flaw: Flaw, start: Start) -> RwModel {
    RwModel {
        rules: Rules {
            flaw: Some(flaw),
            ..design(start).rules
        },
        ..design(start)
    }
}

/// Two readers from nothing share K, and renew it.
#[test]
fn readers_share() {
    holds(RwModel {
        extend: true,
        ..design(Start::empty(&[R, R]))
    });
}

/// A writer hands off to two waiting readers, who enter together.
#[test]
fn a_writer_hands_off_to_readers_together() {
    holds(design(Start {
        holding: &[W],
        waiting: &[R, R],
        joining: &[],
        newcomers: &[],
    }));
}

/// A writer waits behind holding readers; a reader arriving behind it queues behind it.
#[test]
fn a_reader_arriving_behind_a_waiting_writer_waits_for_it() {
    holds(design(Start {
        holding: &[R],
        waiting: &[W],
        joining: &[],
        newcomers: &[R],
    }));
}

/// A line of every kind: a reader, a writer, a reader behind the writer holding: the first
/// reader enters alone, then the writer, then the last reader.
#[test]
fn a_mixed_line_is_served_in_order() {
    holds(design(Start {
        holding: &[W],
        waiting: &[R, W, R],
        joining: &[],
        newcomers: &[],
    }));
}

/// Two readers place themselves while the writer releases (partial holds, undos), with two
/// timers firing anywhere.
#[test]
fn readers_joining_during_a_release_enter_together() {
    holds(RwModel {
        timers: 2,
        ..design(Start {
            holding: &[W],
            waiting: &[],
            joining: &[R, R],
            newcomers: &[],
        })
    });
}

/// A writer and a reader place themselves while readers release.
#[test]
fn a_writer_joining_behind_readers_goes_first() {
    holds(design(Start {
        holding: &[R],
        waiting: &[],
        joining: &[W, R],
        newcomers: &[],
    }));
}

/// From nothing: a writer and a reader arrive at any moments, in either order of tokens
/// (which decides ties between equal tickets).
#[test]
fn newcomers_of_both_kinds_from_nothing() {
    holds(RwModel {
        timers: 1,
        ..design(Start::empty(&[W, R]))
    });
    holds(RwModel {
        timers: 1,
        ..design(Start::empty(&[R, W]))
    });
}

/// A writer and a reader arrive at any moments while a reader holds: the reader may join the
/// holder only until the writer is placed on a majority.
#[test]
fn newcomers_arriving_while_a_reader_holds() {
    holds(design(Start {
        holding: &[R],
        waiting: &[],
        joining: &[],
        newcomers: &[W, R],
    }));
}

/// A writer waiting between readers gives up at any moment: the reader behind it is woken.
#[test]
fn a_writer_that_leaves_lets_the_readers_behind_it_in() {
    holds(RwModel {
        leave: true,
        ..design(Start {
            holding: &[R],
            waiting: &[W, R],
            joining: &[],
            newcomers: &[],
        })
    });
}

/// A client dies at any step (its place lapses, its K or share expires, master by master):
/// never a writer with another holder, and the order kept among the living; a writer waits
/// for a dead reader's share to expire, not for the living.
#[test]
fn a_death_breaks_nothing() {
    holds(RwModel {
        crash: true,
        ..design(Start {
            holding: &[R, R],
            waiting: &[W],
            joining: &[],
            newcomers: &[],
        })
    });
    holds(RwModel {
        crash: true,
        ..design(Start {
            holding: &[R],
            waiting: &[W],
            joining: &[],
            newcomers: &[],
        })
    });
}

/// Issue 25's item 4: a foreign client (`SET K x NX` on every master) never holds with
/// readers, nor they with it, also when a reader dies and its share expires master by master;
/// from nothing, with renewals.
#[test]
fn a_foreign_client_is_excluded_by_readers() {
    holds(RwModel {
        crash: true,
        ..design(Start {
            holding: &[R, R],
            waiting: &[],
            joining: &[],
            newcomers: &[F],
        })
    });
    holds(RwModel {
        extend: true,
        ..design(Start::empty(&[R, F]))
    });
}

/// A foreign client holds while readers and a writer wait: they take K after its DEL (which
/// announces nothing: its waiters' timers start their turns).
#[test]
fn a_foreign_holder_excludes_readers_and_writers() {
    holds(RwModel {
        timers: 2,
        ..design(Start {
            holding: &[F],
            waiting: &[R, W],
            joining: &[],
            newcomers: &[],
        })
    });
}

/// The alternative newcomer rule (a newcomer reader takes a share where no writer waits,
/// rather than only where nobody waits) keeps every property too: a reader never passes a
/// waiting writer, and nobody's wake-up is lost.
#[test]
fn the_alternative_newcomer_rule_holds() {
    let alternative = |start| RwModel {
        rules: Rules {
            readers_pass_readers: true,
            ..design(start).rules
        },
        ..design(start)
    };
    holds(alternative(Start {
        holding: &[R],
        waiting: &[W],
        joining: &[],
        newcomers: &[R],
    }));
    holds(alternative(Start {
        holding: &[W],
        waiting: &[R],
        joining: &[],
        newcomers: &[R],
    }));
    holds(RwModel {
        crash: true,
        ..alternative(Start {
            holding: &[R, R],
            waiting: &[W],
            joining: &[],
            newcomers: &[],
        })
    });
}

// The model has teeth: each known-bad rule below breaks a property, and the checker says how
// (the shortest trace is printed: `cargo test --test models rw_model::flaw -- --nocapture`).

/// A newcomer reader that takes K while readers hold it, ignoring the queue, enters before the
/// writer that waits there.
#[test]
fn flaw_newcomer_reader_ignoring_the_queue_overtakes_a_writer() {
    breaks(
        flawed(
            Flaw::NewcomerReaderIgnoresTheQueue,
            Start {
                holding: &[R],
                waiting: &[W],
                joining: &[],
                newcomers: &[R],
            },
        ),
        &[READER_ORDER],
    );
}

/// A waiting reader that takes K while readers hold it, ignoring the writer ahead, enters
/// before it at its next heartbeat.
#[test]
fn flaw_waiting_reader_ignoring_a_writer_ahead_overtakes_it() {
    let start = Start {
        holding: &[R],
        waiting: &[W, R],
        joining: &[],
        newcomers: &[],
    };
    breaks(
        RwModel {
            timers: 1,
            ..flawed(Flaw::WaitingReaderIgnoresWritersAhead, start)
        },
        &[READER_ORDER],
    );
}

/// A release that publishes to the first newly eligible reader only leaves the second asleep
/// until its timer: while the first holds (it should have entered with it), and after.
#[test]
fn flaw_waking_the_first_only_loses_a_reader() {
    breaks(
        flawed(
            Flaw::WakesTheFirstOnly,
            Start {
                holding: &[W],
                waiting: &[R, R],
                joining: &[],
                newcomers: &[],
            },
        ),
        &[LOST_WAKE_UP, ELIGIBLE_WOKEN],
    );
}

/// A reader quorum below the majority does not intersect the writer's: both hold.
#[test]
fn flaw_reader_quorum_of_one_lets_a_writer_in() {
    breaks(
        flawed(Flaw::ReaderQuorumOfOne, Start::empty(&[R, W])),
        &[ALONE],
    );
}

/// A reader's release that deletes the marker while another reader holds lets a foreign
/// `SET NX` in.
#[test]
fn flaw_release_deleting_the_marker_lets_a_foreign_client_in() {
    breaks(
        flawed(
            Flaw::ReleaseDeletesTheMarker,
            Start {
                holding: &[R, R],
                waiting: &[],
                joining: &[],
                newcomers: &[F],
            },
        ),
        &[ALONE],
    );
}

/// Larger bounds than CI can afford (5 minutes in a debug build on a loaded machine, 25
/// million states for the last): deaths in longer lines, with a leave; a reader and a foreign
/// client arriving while a reader renews; two readers arriving while a writer holds; readers
/// joining during a release, with a leave and two timers; a mixed line with a leave and a
/// timer. (Three newcomers from nothing did not finish in 5 minutes.)
#[test]
#[ignore]
fn the_design_holds_within_larger_bounds() {
    holds(design(Start {
        holding: &[W],
        waiting: &[],
        joining: &[],
        newcomers: &[R, R],
    }));
    holds(RwModel {
        crash: true,
        ..design(Start {
            holding: &[W],
            waiting: &[R, R],
            joining: &[],
            newcomers: &[],
        })
    });
    holds(RwModel {
        crash: true,
        leave: true,
        ..design(Start {
            holding: &[W],
            waiting: &[R, W],
            joining: &[],
            newcomers: &[],
        })
    });
    holds(RwModel {
        crash: true,
        leave: true,
        ..design(Start {
            holding: &[R],
            waiting: &[W, R],
            joining: &[],
            newcomers: &[],
        })
    });
    holds(RwModel {
        crash: true,
        ..design(Start {
            holding: &[W],
            waiting: &[R],
            joining: &[],
            newcomers: &[R],
        })
    });
    holds(RwModel {
        extend: true,
        timers: 1,
        ..design(Start {
            holding: &[R],
            waiting: &[],
            joining: &[],
            newcomers: &[F, R],
        })
    });
    holds(RwModel {
        leave: true,
        timers: 2,
        ..design(Start {
            holding: &[W],
            waiting: &[],
            joining: &[R, R],
            newcomers: &[],
        })
    });
    holds(RwModel {
        leave: true,
        timers: 1,
        ..design(Start {
            holding: &[W],
            waiting: &[R, W, R],
            joining: &[],
            newcomers: &[],
        })
    });
}
