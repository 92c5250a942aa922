//! The scripts: the Lua each master runs, each with the typed decoding of its reply, and the
//! names of the keys they touch. Above the wire (it runs them), below the quorum (which counts
//! their answers).
//!
//! Holds: `keys` (the key layout: every name redlock writes, all in the lock's cluster slot),
//! `holder` (the record of who holds a lock), `replies` (what one master says, typed: a vote,
//! a lock's state, a conflict, a queued waiter), `lock` (the lock's scripts: ACQUIRE, EXTEND,
//! RELEASE, INSPECT, FENCE), `queue` (the fair queue's: WAIT, LEAVE), `slots` (the semaphore's),
//! `shared` (the readers': their shares, and the marker K holds while they do), and
//! `queue_lua` (the Lua functions every queue-aware script shares).
//!
//! Promises: each script is atomic on its master, writes a TTL on every key it writes, and
//! answers in a shape its decoder checks (an unexpected reply is an error naming the master,
//! never a guess). Public (`lock::scripts`, `lock::keys`): the layout and the scripts are the
//! protocol other clients read (see docs/protocol.md).

pub(super) mod holder;
pub mod keys;
pub mod lock;
pub(super) mod queue;
pub(super) mod queue_lua;
pub(super) mod replies;
pub(super) mod shared;
pub(super) mod slots;
