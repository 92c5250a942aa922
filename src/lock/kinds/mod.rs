//! The kinds: the lock, the fair queue, the semaphore, the shared lock and fencing, built from
//! rounds. The top layer of `lock/`: it names every layer below, and only `lock/mod.rs` names
//! it.
//!
//! One engine, and each kind one seam it calls (`seam`: the trait, with how to add a kind).
//! Holds, bottom up: `held` (a held lock of any kind, the validity that bounds it, and
//! [`Kind`], read back from a token only there), `cancel`, `wakeup` (why a turn starts),
//! `undo` (removing a failed attempt's partial hold without being overtaken by it), `attempt`
//! (why an attempt failed; the backoff), `fence` (fencing tokens), `order` (`--order`: the
//! highest order that took the lock), `seam` (what the engine asks of a kind, the
//! [`seam::Request`] to take one, and the line's policy it waits in), `waiter` (a waiter and
//! its lease), `supersede` (the superseding line: the lock's turn in it, and why an evicted
//! waiter never runs); the kinds, each one implementation of the seam: `exclusive` (the lock,
//! and the rounds a reader shares), `shared` (a reader's share, and why readers and writers
//! exclude each other over a majority), `semaphore` (a slot, and why at most L hold) with its
//! rounds in `slots`; and the engine: `queue_turn` and `queue` (waiting in line), `take` (the
//! one wait loop), `renewal`, `late` (refusals that come after the decision), `revoke` (a
//! forced release, and why it never makes two holders), and `client` ([`client::Redlock`],
//! the one `impl Redlock`), with `in_turn` (what its take in turn returns: the take with its
//! `--order` and `--fence` steps, in their one order, as `run` and `acquire` take a lock).
//!
//! Promises (each argued in its module's header): at most one holder of a lock, at most L of a
//! semaphore, no reader beside a writer, each within its validity; waiters served in arrival
//! order; a wake-up for every hand-off; nothing left without a TTL.

pub(super) mod attempt;
pub(super) mod cancel;
pub(super) mod client;
pub(super) mod exclusive;
pub(super) mod fence;
pub(super) mod held;
pub(super) mod in_turn;
pub(super) mod late;
pub(super) mod newcomer;
pub(super) mod order;
pub(super) mod queue;
pub(super) mod queue_turn;
pub(super) mod release;
pub(super) mod renewal;
pub(super) mod revoke;
pub(super) mod seam;
pub(super) mod semaphore;
pub(super) mod shared;
pub(super) mod slots;
pub(super) mod supersede;
pub(super) mod take;
pub(super) mod undo;
pub(super) mod waiter;
pub(super) mod wakeup;

use held::Kind;

/// The seam of `kind` (see `seam`): the one place a kind, known from the request or read back
/// from a token (`Kind::of_token`), becomes the code that serves it.
pub(in crate::lock) fn seam(kind: Kind) -> Box<dyn seam::Seam> {
    match kind {
        Kind::Lock => Box::new(exclusive::Exclusive),
        Kind::Reader => Box::new(shared::Reader),
        Kind::Slot { limit } => Box::new(semaphore::Slot { limit }),
    }
}
