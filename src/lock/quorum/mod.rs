//! The quorum: one request to every master at once, and a decision from their answers. Above the
//! scripts (whose replies it counts), below the kinds (which decide what to ask).
//!
//! Holds: `tally` (the decision as a pure function of votes: won, lost, undecided; the
//! majority and the slot quorum), `round` (the fan-out: all masters at once, each under the
//! per-node timeout, stopping at the decision or when told to wait for more), `outcome` (what
//! the operations report), `verdict`, `slot_verdict` and `reader_verdict` (who holds a lock, a
//! semaphore or a key's shares, judged from every master's state), `slot_refusals` (what a
//! round's refusals of a slot mean).
//!
//! Promises: a round decides as soon as the outcome is certain in either direction, and never
//! later than one node timeout; a decision counts only answers, never the absence of one as a
//! yes.

pub(super) mod outcome;
pub(super) mod reader_verdict;
pub(super) mod round;
pub(super) mod slot_refusals;
pub(super) mod slot_verdict;
pub(super) mod tally;
pub(super) mod verdict;
