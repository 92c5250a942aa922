//! The Redlock algorithm, and nothing else: no processes, no command line.
//!
//! Five layers, each a folder that names only the layers before it (`tests/module_graph.rs`
//! checks this, and that no import circle exists anywhere in the crate):
//!
//! 1. `wire`: one request to one master and its answer (RESP, pipes, connections, URLs and
//!    TLS, Redis Cluster routing, release notices, why a master failed). Private: no caller
//!    outside `lock` sends anything itself.
//! 2. `scripts`: the Lua each master runs with the typed decoding of its reply, the key layout
//!    and the holder record. Public as [`scripts`] and [`keys`]: the protocol other clients read.
//! 3. `quorum`: one request to every master at once, and the decision (the tally, the round,
//!    the outcomes, who holds a lock or a semaphore).
//! 4. `read`: what masters hold and say, taking nothing (`doctor`'s probe, `list`'s scan).
//! 5. `kinds`: the lock, the fair queue, the semaphore, the shared lock and fencing;
//!    [`Redlock`] and its one wait loop, and each kind one seam the engine calls.
//!
//! This file is the API: what the commands use is re-exported below, and nothing else of the
//! layers is visible outside `lock`. Where each safety argument lives: docs/architecture.md.
//!
//! No type of redis-rs appears in this module's public items: redis-rs only parses server
//! URLs, inside `wire::master`.

mod kinds;
mod quorum;
mod read;
pub mod scripts;
mod wire;

pub use kinds::cancel::Cancel;
pub use kinds::client::Redlock;
pub use kinds::fence::FenceError;
pub use kinds::held::{Kind, Lock, Timing};
pub use kinds::in_turn::{Steps, TakeError, TakeObserver, Taken};
pub use kinds::order::OrderError;
pub use kinds::revoke::Forced;
pub use kinds::seam::Request;
pub use kinds::wakeup::Wakeup;
pub use quorum::outcome::QueuedWaiter;
pub use quorum::outcome::{
    AcquireError, AttemptFailure, Conflict, ExtendError, Inspection, Mark, MasterFailure,
    MasterState, Released, Superseded,
};
pub use quorum::reader_verdict::{Reader, count_readers};
pub use quorum::slot_verdict::{SemaphoreState, SemaphoreVerdict, SlotHolder, SlotsInspection};
pub use quorum::verdict::{InLine, Verdict};
pub use read::history::{KeyHistory, Turn as HistoryTurn, TurnEnd};
pub use read::key::KeyRead;
pub use read::key::state::{HolderSeen, KeyState, ReadersSeen, Seen, SemaphoreSeen};
pub use read::probe::{ClusterFacts, Probe, ServerFacts, ShardFacts};
pub use read::scan::{
    FenceRead, FoundLock, LockRead, MAX_KEYS as MAX_SCAN_KEYS, Malformed, MasterScan,
    OversizedName, QueueRead, ReadersRead, STATUS_SHARES, STATUS_SLOTS, STATUS_WAITERS, Scan,
    ScanEnd, ScanOptions, SlotsRead, StrayKey, StrayName, TEXT_COUNTER, Ttl,
};
pub use read::watch::FALLBACK as WATCH_FALLBACK;
pub use read::watch::changes::{Change, Observation};
pub use scripts::history::{Ending, History};
pub use scripts::holder::{Holder, MAX_NOTE, cut_bytes};
pub use scripts::keys;
pub use scripts::markers::Marker;
pub use scripts::order::MAX_ORDER;
pub use scripts::queue_lua::SHARED_MARKER;
pub use scripts::revoke::{REVOKED_MARKER, Revocation, Revoked};
pub use scripts::shared::{Share, Shares};
pub use scripts::slots::{REVOKED_SLOT_PREFIX, Slot, Slots};
pub use scripts::supersede::SUPERSEDE_POLICY;
pub use scripts::tokens::Nesting;
pub use wire::cause::Cause;
pub use wire::master::{BadUrl, Identity, Master, redact_quoted, redact_url};
pub use wire::node::NodeError;
pub use wire::resp::MAX_REPLY_BYTES;

#[cfg(test)]
mod tests;
