//! The Redlock algorithm, and nothing else: no processes, no command line.
//!
//! - [`quorum`]: the decision as a pure function of per-master answers.
//! - [`client`]: the fan-out rounds (acquire, extend, release, inspect) over real masters.
//! - [`node`]: one kept-open connection per master: connecting, logging in, running scripts.
//! - [`pipe`]: a connection's ordered requests and answers, and proof of what was sent.
//! - [`resp`]: encoding commands and framing replies of the Redis protocol.
//! - [`notices`]: release notices that wake waiters at once.
//! - [`scripts`]: the Lua each master runs.
//! - [`keys`]: the key layout: the names of redlock's own keys, none of which a lock key can be.
//! - [`master`]: server URLs, redaction, identity.
//! - [`holder`]: the record of who holds a lock.
//! - [`fence`]: fencing tokens, a number per lock that only goes up.
//! - [`verdict`]: who holds a lock, judged from all masters' states.

pub mod client;
pub mod fence;
pub mod holder;
pub mod keys;
pub mod master;
pub mod node;
pub mod notices;
pub mod pipe;
pub mod quorum;
pub mod resp;
pub mod scripts;
pub mod verdict;

pub use client::{
    AcquireError, AttemptFailure, Cancel, ExtendError, Inspection, Lock, MasterFailure,
    MasterState, Redlock, Released, Timing,
};
pub use fence::FenceError;
pub use holder::Holder;
pub use master::Master;
pub use node::NodeError;
pub use verdict::{Verdict, judge};
