//! The scripts: the Lua each master runs, each with the typed decoding of its reply, and the
//! names of the keys they touch. Above the wire (it runs them), below the quorum (which counts
//! their answers).
//!
//! Holds: `keys` (the key layout: every name redlock writes, all in the lock's cluster slot),
//! `holder` (the record of who holds a lock), `replies` (what one master says, typed: a vote,
//! a lock's state, a conflict, a queued waiter), `lock` (the lock's scripts: ACQUIRE, EXTEND,
//! RELEASE, FENCE), `queue` (the fair queue's: WAIT, LEAVE), `slots` (the semaphore's),
//! `shared` (the readers': their shares, and the marker K holds while they do),
//! `queue_lua` (the Lua functions every queue-aware script shares), `order` (the order
//! register of `--order`), `supersede` (the superseding line's WAIT_SUPERSEDE and the policy
//! check), `revoke` (a forced release's record, and the Lua that reads it), `force` (its
//! FORCE), `history` (the key's record of its turns, and HISTORY, which reads it), `scan` (READ, one key's every part, for `status` and `list`, and `list`'s PAGE),
//! and `calls` (how a script is called: its declaration and its arguments' types); and
//! [`TABLE`], every script in one table, where each gets its bit and is declared (the keys it
//! takes, how many arguments it reads, their type), so that no caller builds KEYS or ARGV by
//! hand.
//!
//! Promises: each script is atomic on its master, writes a TTL on every key it writes, and
//! answers in a shape its decoder checks (an unexpected reply is an error naming the master,
//! never a guess). Public (`lock::scripts`, `lock::keys`): the layout and the scripts are the
//! protocol other clients read (see docs/protocol.md).
//!
//! **No key without a TTL, even when a script fails half-way.** A script is atomic but not
//! transactional: a command that fails ends it, and what the commands before it wrote stays.
//! So no key may exist without its TTL between two commands, at any point a script can stop:
//! 1. A string is written with its TTL in the same command: `SET k v PX ms`, or `PXAT at` for
//!    an absolute time (`set_until`; before Redis 6.2, which has no PXAT, `PX` counts from the
//!    master's own time, at or after the script's `TIME`, so the key lasts at least to `at`).
//! 2. A sorted set, a hash or a counter (`ZADD`, `HSET`, `INCR`: no TTL argument) is followed
//!    at once by its expiry (`fresh`, `take`, `share`), and that expiry cannot fail there:
//!    - its value is computed and checked before the script's first write (a queue's keep
//!      ms, a share's or slot's time): a score written by another client is never passed on
//!      as a time (see 3);
//!    - the same expiry command already ran on the same key names before the first write
//!      (`keep`, `expire_slots`, `expire_readers`): on a missing key it does nothing, and an
//!      ACL that refuses it (the command, or the key) refuses it there, before anything was
//!      written;
//!    - Redis refuses a command for memory only before a script's first write, and
//!      PEXPIRE/PEXPIREAT are not refused for memory anyway; the time is always ahead of the
//!      master's clock (past a live share or slot), so the expiry never deletes the key.
//! 3. A time taken from a sorted set another client can write (the longest slot, the longest
//!    share: `until_past`) is clamped to the master's time plus [`LONGEST_TTL_MS`] and made a
//!    whole number: redlock never writes a score past that, so such a score is not redlock's.
//!    The scripts drop those members (`beyond`, at most 100 a call, as expired ones are
//!    pruned): a slot or share that is not redlock's holds nothing. Before, a slot scored 1e20
//!    wrapped negative in `%d`, and its PEXPIREAT deleted the slots key with the slot just
//!    taken; a fractional or infinite share's PEXPIREAT failed after K was set to the marker.
//!
//! The fencing counter alone has no TTL, on purpose (see `lock`).

pub(in crate::lock) mod calls;
pub mod force;
pub mod history;
pub(super) mod holder;
pub mod keys;
pub mod lock;
pub(super) mod markers;
pub(super) mod order;
pub(super) mod queue;
pub(super) mod queue_lua;
pub(super) mod replies;
pub mod revoke;
pub(super) mod scan;
pub(super) mod shared;
pub(super) mod slots;
pub(super) mod supersede;
pub(super) mod tokens;

/// The longest TTL redlock gives a lock, a slot or a share, in ms: a year and a day, the bound
/// of every duration it accepts (`cli::durations::LONGEST_DURATION`, checked by a test there).
/// The Lua's `LONGEST`: a slot or share scored later than the master's time plus this was not
/// written by redlock (see the header).
pub const LONGEST_TTL_MS: u64 = 366 * 24 * 3600 * 1000;

use std::sync::LazyLock;

use crate::lock::wire::lua::Lua;
use calls::args::{
    Departure, Ended, EndedSlot, Extend, ExtendSlot, Force, HistoryPage, LeaveSlot, Order, Page,
    Proposal, Read, Recorded, SlotTurn, SupersedingTurn, Take, TakeSlot, Turn,
};
use calls::{Row, Script};
use keys::Through;

/// Declares each script as a `static NAME: Script<Args>` and lists them, in order, in
/// [`TABLE`]; for the tests, what each argument type builds ([`built`]).
macro_rules! table {
    ($($script:ident: $args:ty = ($name:literal, $lua:expr, $keys:ident, $argv:literal),)*) => {
        $(
            pub(in crate::lock) static $script: Script<$args> =
                Script::new($name, &$lua, Through::$keys, $argv);
        )*

        /// Every script redlock runs, by name, in one table: a script's row is its bit in a
        /// connection's mask of scripts already loaded (`Lua::bit`, see [`bit`]), so no two
        /// scripts can share one (which would make a connection send EVALSHA for a script it
        /// never loaded), and `lock/tests.rs` checks the table itself. A script not in it
        /// fails at its first use. Each row says how its script is called (see `calls`): the
        /// keys it takes, through the last, and how many arguments it reads, which its
        /// arguments' type builds.
        pub(in crate::lock) static TABLE: [&Row; [$($name),*].len()] = [$(&$script.row),*];

        /// Each row of [`TABLE`], with how many arguments its type builds (from defaults).
        #[cfg(test)]
        pub(in crate::lock) fn built() -> Vec<(&'static Row, usize)> {
            vec![$(calls::built(&$script)),*]
        }
    };
}

table! {
    ACQUIRE: Recorded<Take> = ("ACQUIRE", lock::ACQUIRE, History, 6),
    EXTEND: Extend = ("EXTEND", lock::EXTEND, Holder, 2),
    RELEASE: Ended = ("RELEASE", lock::RELEASE, History, 7),
    FENCE_PROPOSE: Proposal = ("FENCE_PROPOSE", lock::FENCE_PROPOSE, Fence, 1),
    WAIT: Recorded<Turn> = ("WAIT", queue::WAIT, History, 9),
    LEAVE: Departure = ("LEAVE", queue::LEAVE, History, 6),
    ACQUIRE_SLOT: Recorded<TakeSlot> = ("ACQUIRE_SLOT", slots::ACQUIRE_SLOT, History, 7),
    WAIT_SLOT: Recorded<SlotTurn> = ("WAIT_SLOT", slots::WAIT_SLOT, History, 10),
    EXTEND_SLOT: ExtendSlot = ("EXTEND_SLOT", slots::EXTEND_SLOT, SlotHolders, 3),
    RELEASE_SLOT: EndedSlot = ("RELEASE_SLOT", slots::RELEASE_SLOT, History, 12),
    LEAVE_SLOT: LeaveSlot = ("LEAVE_SLOT", slots::LEAVE_SLOT, SlotHolders, 5),
    READ_ACQUIRE: Recorded<Take> = ("READ_ACQUIRE", shared::READ_ACQUIRE, History, 6),
    READ_WAIT: Recorded<Turn> = ("READ_WAIT", shared::READ_WAIT, History, 9),
    READ_EXTEND: Extend = ("READ_EXTEND", shared::READ_EXTEND, ReaderHolders, 2),
    READ_RELEASE: Ended = ("READ_RELEASE", shared::READ_RELEASE, History, 7),
    READ: Read = ("READ", scan::READ, History, 5),
    PAGE: Page = ("PAGE (list)", scan::PAGE, Nothing, 6),
    ORDER: Order = ("ORDER", order::ORDER, Order, 3),
    FORCE: Recorded<Force> = ("FORCE", force::FORCE, History, 6),
    WAIT_SUPERSEDE: SupersedingTurn = ("WAIT_SUPERSEDE", supersede::WAIT_SUPERSEDE, History, 12),
    HISTORY: HistoryPage = ("HISTORY", history::HISTORY, History, 2),
}

/// The bit of `script`: one, at its row in [`TABLE`]. Called as each script is built, once
/// per process.
pub(in crate::lock) fn bit(script: &LazyLock<Lua>) -> u32 {
    let row = TABLE
        .iter()
        .position(|row| std::ptr::eq(row.lua, script))
        .expect("every script has a row in scripts::TABLE");
    1 << row
}
