//! How far one READ reads, and what for (its ARGV, see `scripts::scan`): `list`'s scan, or
//! the judgement of a key that `status` and its kin make. The two differ in the fencing
//! counter's value and in a key of another type (see `scripts::scan`'s READ).

use crate::lock::scripts::LONGEST_TTL_MS;
use crate::lock::scripts::calls::args::Read;

/// How far a READ reads, and what for (its ARGV, see `scripts::scan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lock) struct Reading {
    /// How many of the first waiters, readers' shares and slots it lists.
    pub waiters: usize,
    pub shares: usize,
    pub slots: usize,
    /// A judgement of the key (`status` and its kin): the counter's value is read, and a key
    /// of another type fails the read (or its part) rather than reading as missing.
    pub judged: bool,
}

impl Reading {
    /// `list`'s: as many of each as `--max-waiters`, and the counter left untouched.
    pub fn scan(max_waiters: usize) -> Reading {
        let limit = max_waiters.max(1);
        Reading {
            waiters: limit,
            shares: limit,
            slots: limit,
            judged: false,
        }
    }

    /// `status`'s, and that of everything that judges a key as `status` does: the first
    /// [`STATUS_WAITERS`] places, the first [`STATUS_SHARES`] readers, every slot of the
    /// largest semaphore.
    pub const STATUS: Reading = Reading {
        waiters: STATUS_WAITERS,
        shares: STATUS_SHARES,
        slots: STATUS_SLOTS,
        judged: true,
    };

    /// READ's arguments for this reading.
    pub(in crate::lock) fn args(&self) -> Read {
        Read {
            waiters: self.waiters.to_string(),
            longest: LONGEST_TTL_MS.to_string(),
            shares: self.shares.to_string(),
            slots: self.slots.to_string(),
            purpose: (if self.judged { "status" } else { "scan" }).to_string(),
        }
    }
}

/// How many places of the queue `status` reads.
pub const STATUS_WAITERS: usize = 100;
/// How many readers' shares `status` reads of a shared lock.
pub const STATUS_SHARES: usize = 1000;
/// How many slots `status` reads of a semaphore: every one of the largest (`--limit` is at
/// most 1000, see `cli::lock_args`).
pub const STATUS_SLOTS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::scripts::READ;

    #[test]
    fn status_reads_the_counter_and_the_scan_does_not() {
        use crate::lock::scripts::calls::Args;
        let status = Reading::STATUS.args();
        let scan = Reading::scan(0).args();
        let (status, scan) = (status.argv(b""), scan.argv(b""));
        let longest = LONGEST_TTL_MS.to_string();
        assert_eq!(status[1], longest.as_bytes());
        assert_eq!(scan[1], longest.as_bytes());
        assert_eq!((status[4], scan[4]), (&b"status"[..], &b"scan"[..]));
        // READ's Lua reads the counter's value for `status` only (and text, to judge it).
        assert!(
            READ.row
                .lua
                .code
                .contains("local strict = ARGV[5] == 'status'")
        );
        assert_eq!(
            [scan[0], scan[2], scan[3]],
            [&b"1"[..], b"1", b"1"],
            "one of each at least"
        );
        let limits = [STATUS_WAITERS, STATUS_SHARES, STATUS_SLOTS].map(|n| n.to_string());
        assert_eq!(
            [status[0], status[2], status[3]],
            limits.each_ref().map(|l| l.as_bytes())
        );
    }
}
