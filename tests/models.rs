//! The model checks: the fair queue's protocol (`queue_model`) and the readers-writer lock's
//! (`rw_model`), each explored exhaustively by stateright. A binary of their own, apart from the
//! integration tests: they need no Redis, and they are where the CPU time goes.
//!
//! `cargo test --test models -- --nocapture` prints each check's states and time; the larger
//! bounds are `#[ignore]`d (`cargo test --test models -- --ignored`, minutes).

mod queue_model;
// rw_model compiles three files of queue_model again over its own types (`wire.rs` names its
// model's `master::Request`, `symmetry.rs` its `system::State`): templates, not shared code.
#[allow(clippy::duplicate_mod)]
mod rw_model;
