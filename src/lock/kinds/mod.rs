//! The kinds: the lock, the fair queue, the semaphore, the shared lock and fencing, built from
//! rounds. The top layer of `lock/`: it names every layer below, and only `lock/mod.rs` names
//! it.
//!
//! Holds, bottom up: `held` (a held lock or slot and the validity that bounds it), `cancel`,
//! `wakeup` (why a turn starts), `undo` (removing a failed attempt's partial hold without
//! being overtaken by it), `attempt` (why an attempt failed; the backoff), `waiter` (a waiter
//! and its lease), `exclusive` and `slots` (a newcomer's rounds for the lock and for a slot),
//! `queue_turn` and `queue` (waiting in line), `late` (refusals that come after the decision),
//! `client` ([`client::Redlock`]: the one wait loop
//! each kind plugs into, and the lock's operations), `semaphore` (a slot's operations and why
//! they are sound), `shared` (a reader's operations, and why readers and writers exclude each
//! other over a majority), `fence` (fencing tokens).
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
pub(super) mod late;
pub(super) mod queue;
pub(super) mod queue_turn;
pub(super) mod semaphore;
pub(super) mod shared;
pub(super) mod slots;
pub(super) mod undo;
pub(super) mod waiter;
pub(super) mod wakeup;
