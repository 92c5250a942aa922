//! The Redlock algorithm, and nothing else: no processes, no command line.
//!
//! What a caller uses:
//! - `client`: [`Redlock`], the operations (acquire, extend, release, inspect, fence).
//! - `held`: a held [`Lock`] and the [`Timing`] that bounds its validity.
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
//! - `cancel`: ending a wait from a signal handler.
//! - the transport: `node` (one kept connection per master: connecting, logging in, running
//!   scripts; `lua` is a script as it runs them), `pipe` (a connection's ordered requests
//!   and answers, and proof of what was sent), `resp` (the Redis protocol), `notices`
//!   (release notices), [`master`] (server URLs, redaction, identity).

mod cancel;
mod cause;
mod client;
mod fence;
mod held;
mod holder;
pub mod keys;
mod lua;
pub mod master;
mod node;
mod notices;
mod outcome;
mod pipe;
mod probe;
mod quorum;
mod resp;
mod round;
pub mod scripts;
mod verdict;

pub use cancel::Cancel;
pub use cause::Cause;
pub use client::Redlock;
pub use fence::FenceError;
pub use held::{Lock, Timing};
pub use holder::Holder;
pub use master::Master;
pub use node::NodeError;
pub use outcome::{
    AcquireError, AttemptFailure, ExtendError, Inspection, MasterFailure, MasterState, Released,
};
pub use probe::{Probe, ServerFacts};
pub use verdict::{Verdict, judge};
