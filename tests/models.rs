//! The model checks: the fair queue's protocol (`queue_model`) and the readers-writer lock's
//! (`rw_model`), each explored exhaustively by stateright. A binary of their own, apart from the
//! integration tests: they need no Redis, and they are where the CPU time goes.
//!
//! `cargo test --test models -- --nocapture` prints each check's states and time; the larger
//! bounds are `#[ignore]`d (`cargo test --test models -- --ignored`, minutes).

mod model_kit;
mod queue_model;
mod rw_model;
