//! What the models share: the system they explore (masters, clients, connections that delay
//! and reorder, wake notices, timers, deaths, leaves, lapses and expiries: `system`), a
//! client's state machine and its connections (`client`, `wire`), the queue a master stores
//! (`queue`), the reductions (`symmetry`; the partial-order one in `system`), running the
//! checker (`check`) and telling a path (`trace`). Each model (tests/queue_model,
//! tests/rw_model) says what its masters store and run, the Lua it mirrors, how its clients
//! decide, and what it checks: one `system::Protocol` each.

pub mod check;
pub mod client;
pub mod queue;
pub mod symmetry;
pub mod system;
pub mod trace;
pub mod wire;

/// The masters of every model: the smallest N where a minority can fail.
pub const MASTERS: usize = 3;

/// The majority: the lock's quorum, the writer's and the reader's, and the queue's own
/// (tickets, places).
pub const MAJORITY: usize = MASTERS / 2 + 1;

/// A newcomer joins the queue with tickets from N - majority + 1 masters (see
/// src/lock/kinds/queue.rs).
pub const TICKETS: usize = MASTERS - MAJORITY + 1;

/// A client's token; tokens are never reused, so a client has one for its whole life.
pub type Token = u8;
