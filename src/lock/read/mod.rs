//! The read side: what masters hold and what they say about themselves, without taking
//! anything. Above the quorum (it reads in rounds), below the kinds (the client offers it).
//!
//! Holds: `probe` (what one master, or each shard of a cluster, says about itself, for
//! `doctor`: INFO, clock, scripts, pub/sub), `scan` (every lock at once, for `list`: SCAN
//! for redlock's own keys, then read rounds in batches), `key` (one key, in one round, for
//! `status` and everything that judges a key as it does, and the records every judge reads,
//! `list`'s too) and `watch` (one key's changes of holder, for `status --watch`: reads and
//! subscriptions) and `history` (one key's past turns, merged across the masters, for
//! `redlock history`).
//!
//! Promises: nothing here writes a lock key (a watch only reads and subscribes); `probe` writes
//! only scratch keys of its own, each with a TTL; memory in `scan` is bounded by one batch of
//! reads.

pub(super) mod history;
pub(super) mod key;
pub(super) mod probe;
pub(super) mod scan;
pub(super) mod watch;
