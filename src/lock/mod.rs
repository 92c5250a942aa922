//! The Redlock algorithm, and nothing else: no processes, no command line.
//!
//! What a caller uses:
//! - `client`: [`Redlock`], the operations (acquire, extend, release, inspect, fence).
//! - `held`: a held [`Lock`] (the lock, or a semaphore slot: its [`Kind`]) and the [`Timing`]
//!   that bounds its validity.
//! - `semaphore`: at most L holders at once (`--limit`): why it is sound, and its operations
//!   (its scripts in `semaphore_scripts`, who holds it in `semaphore_verdict`).
//! - `shared`: many readers or one writer (`--shared`): why it is sound, and its operations
//!   (its scripts in `shared_scripts`).
//! - `outcome`: what the operations report, and `cause`: why a master failed, in terms a user
//!   can act on; `probe`: what masters say about themselves.
//! - [`keys`]: the key layout: the names of redlock's own keys, none of which a lock key can be.
//! - [`scripts`]: the Lua each master runs, each with the decoding of its reply.
//!
//! How it works inside:
//! - `round`: one request to every master at once, a decision at quorum.
//! - `quorum`: that decision as a pure function of per-master answers.
//! - `fence`: fencing tokens, a number per lock that only goes up.
//! - `verdict`: who holds a lock, judged from all masters' states.
//! - `holder`: the record of who holds a lock.
//! - `queue`: the fair queue waiters take turns in, `queue_turn` one turn in it, `wakeup` why
//!   a turn starts, and `queue_scripts`, its Lua (`queue_lua`: the Lua functions every
//!   queue-aware script shares, the lock's and the slots' too).
//! - `slot_refusals`: what a round's refusals of a slot mean (a conflict, or full, with the
//!   ticket to queue with).
//! - `cancel`: ending a wait from a signal handler; `undo`: removing what a failed or
//!   interrupted attempt took, without being overtaken by it.
//! - `scan`: every lock at once (for `list`): SCAN for redlock's own keys, then one read round.
//! - the transport, private to this module, one path for every request: `endpoint` (one
//!   master as the rounds see it: a server, or a whole Redis Cluster routed by `cluster`),
//!   `node` (every connection to a server: connecting, logging in, running scripts,
//!   subscribing; `lua` is a script as it runs them), `pipe` (a connection's ordered requests
//!   and answers, proof of what was sent, coalesced pushes), `resp` (the Redis protocol, both
//!   ways, and the reply value), `notices` (release notices), `master` (server URLs,
//!   redaction, identity; what of it the configuration needs is re-exported below; `scheme`
//!   reads the TLS and cluster schemes).
//!
//! No type of redis-rs appears in this module's public items: redis-rs only parses server
//! URLs, inside `master`.

mod cancel;
mod cause;
mod client;
mod cluster;
mod endpoint;
mod fence;
mod held;
mod holder;
pub mod keys;
mod lua;
mod master;
mod node;
mod notices;
mod outcome;
mod pipe;
mod probe;
mod queue;
mod queue_lua;
mod queue_scripts;
mod queue_turn;
mod quorum;
mod resp;
mod round;
mod scan;
mod scheme;
pub mod scripts;
mod semaphore;
mod semaphore_scripts;
mod semaphore_verdict;
mod shared;
mod shared_scripts;
mod slot_refusals;
mod undo;
mod verdict;
mod wakeup;

pub use cancel::Cancel;
pub use cause::Cause;
pub use client::Redlock;
pub use fence::FenceError;
pub use held::{Kind, Lock, Timing};
pub use holder::Holder;
pub use master::{BadUrl, Identity, Master, redact_quoted, redact_url};
pub use node::NodeError;
pub use outcome::QueuedWaiter;
pub use outcome::{
    AcquireError, AttemptFailure, Conflict, ExtendError, Inspection, MasterFailure, MasterState,
    Released,
};
pub use probe::{ClusterFacts, Probe, ServerFacts, ShardFacts};
pub use scan::{
    FenceRead, FoundLock, LockRead, MAX_KEYS as MAX_SCAN_KEYS, MasterScan, QueueRead, ReadersRead,
    Scan, ScanEnd, ScanOptions, StrayKey, StrayName, Ttl,
};
pub use scripts::INSPECTED_WAITERS;
pub use semaphore::quorum as slot_quorum;
pub use semaphore_scripts::{Slot, Slots};
pub use semaphore_verdict::{
    SemaphoreState, SemaphoreVerdict, SlotHolder, SlotsInspection, judge_slots,
};
pub use shared::{Reader, ReadersInspection, SHARED_MARKER, judge_readers};
pub use shared_scripts::{Share, Shares};
pub use verdict::{InLine, Verdict, judge, line};
pub use wakeup::Wakeup;
