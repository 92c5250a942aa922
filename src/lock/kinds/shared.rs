//! A shared lock, readers-writer (`--shared`), as `flock -s` and `flock -x` on one file: any
//! number of readers hold key K at once; a writer (the plain lock) holds it alone, with no
//! reader. Everything else (the round, validity, renewal, release, waiting) is the lock's.
//!
//! **The scheme.**
//! 1. A reader holds a *share* of K on a master: its token in K's readers key (a sorted set,
//!    scored by the master's time at which the share expires, per reader, as the semaphore's
//!    slots), while K itself holds the marker `SHARED_MARKER` (`scripts::queue_lua`) with the
//!    TTL of the longest share there (see `scripts::shared`). The script that takes a share
//!    refuses where K holds anything else (a writer's token, ours or another client's),
//!    atomically.
//! 2. The writer is the lock, unchanged: `SET K token NX`, refused wherever K exists, the
//!    marker included.
//! 3. A reader needs shares on q = floor(N/2) + 1 masters, the majority, taken in one round
//!    like the lock; a writer needs the lock on the majority. Validity, drift and renewal are
//!    the lock's (`held`).
//!
//! **Why no writer overlaps a reader.** Suppose a reader R and a writer W both consider
//! themselves holders at one instant. Each is within its validity, so on each of its q masters
//! what it took is still there: R's share is live (its score is still ahead of that master's
//! clock), hence K holds the marker there (every script that writes a share gives K the TTL of
//! the longest live share, and only READ_RELEASE deletes the marker, once no live share is
//! left; the writer's compare-and-delete never matches it); and W's token is in K. Two
//! majorities of N share a master (2q > N), and on it K would hold both the marker and W's
//! token: impossible. Writers exclude writers as the lock always did.
//!
//! **Why a majority suffices for readers.** Readers never count each other: two readers may
//! overlap, so their quorums need not intersect, only a reader's and a writer's, and the
//! majority already does that. (The semaphore needs floor(L·N/(L+1)) + 1 because its
//! holders exclude each other beyond L.) Nor may it be smaller: while readers hold, K must
//! exist on a majority, so that another Redlock client (redlock-py, node-redlock, redsync),
//! which only does `SET K x NX` on the same masters, fails on a majority too. Its own quorum
//! is a majority, which shares a master with every reader's.
//!
//! **Availability.** N − q masters may be down, for readers and writers alike (N = 3: 1,
//! N = 5: 2); see docs/shared.md.
//!
//! **Per-reader expiry.** A share ends at its own score, not with K: every script prunes
//! shares whose time has come before it decides, so a killed reader's share frees itself one
//! TTL after its last renewal whatever the other readers do, and K's TTL follows the longest
//! share left (a renewal, or a release, sets it again).
//!
//! **Renewal** is the lock's: at TTL/3, confirmed by q masters before the validity ends, never
//! re-creating a share or K (READ_EXTEND). A reader whose renewal q masters did not confirm
//! may have lost its share (a master may have let it expire, and a writer may then hold a
//! majority), so the supervisor stops its command before the validity ends, as for a lock.
//!
//! **Fair queue.** Readers and writers wait in the lock's one line (`queue`), a waiter's mode
//! told by its token (`shr-`). Who may enter on a master (`queue_lua::eligible_lock`,
//! READ_WAIT): a writer when it is the first live waiter and K is free; a reader when every
//! live waiter ahead of it is a reader and K is free or held by readers. A newcomer reader
//! enters without queueing only where no writer waits (where it would be eligible at the back
//! of the line; a line longer than the 100 places read counts as one with a writer), so a
//! reader that arrives behind a waiting writer waits for it, and readers behind readers pay
//! nothing for the line: a stream of readers never starves a writer, which enters
//! once the readers ahead of it have released. When the head of the line becomes a group of
//! readers (the writer ahead released), the one wake-up rule (`wake_newly`) wakes every one
//! of them at once, in the same script, since all are newly eligible. The group is read from
//! the first 100 places (a reader further back is not eligible until the line moves up),
//! so every call does bounded work whatever the line's length. The queue only adds refusals:
//! nothing here grants what the argument above does not allow.
//!
//! **Mixing kinds.** A key is a lock (readers and writers) or a semaphore, never both: the
//! reader's scripts refuse a key whose slots key exists (`{'semaphore', L}`, exit 64), and
//! the slot scripts refuse where K exists (a slot quorum and a majority share a master).
//!
//! **Assumes** what the lock assumes (see `held`), for K and the readers key: masters keep them
//! for a full TTL (a master that restarts empty or evicts them forgets the marker, and a
//! writer may then make a majority with it); master clocks do not jump (a share ends at its
//! score by the master's wall clock); clock rates drift less than the drift factor. And that no
//! other client deletes K (a `DEL K` drops the marker while shares live: a writer can then
//! take K, as it could take any lock another client deleted).
//!
//! A reader's token says what it is: `shr-<32 hex digits>` (`tokens::reader_token`), so that
//! `release`, `extend` and the `--renew-while` renewer, given only the key and the token,
//! treat it as a reader.

use super::exclusive::{self, Rounds, departure, extension, held};
use super::fence::FenceError;
use super::held::Kind;
use super::seam::{
    Call, Giving, Holding, InTheWay, Leaving, Line, Newcomer, Queued, Seam, Seat, Wait,
};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::Round;
use crate::lock::scripts::calls::args::Take;
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::queue::turn;
use crate::lock::scripts::{LEAVE, READ_ACQUIRE, READ_EXTEND, READ_RELEASE, READ_WAIT};

/// A reader's seam (see `seam`): the lock's rounds and turn with the readers' scripts, decided
/// by the majority; a refusal means K is held (by a
/// writer, or for a reader behind a waiting writer, by the line); it leaves the line as a
/// writer does (LEAVE).
pub(in crate::lock) struct Reader;

impl Reader {
    fn rounds() -> Rounds {
        Rounds {
            acquire: &READ_ACQUIRE,
            release: &READ_RELEASE,
            what: "a share of ",
        }
    }
}

impl Seam for Reader {
    fn kind(&self) -> Kind {
        Kind::Reader
    }

    fn newcomer(&self, key: &str, take: Take, history: String, _: usize) -> Newcomer {
        exclusive::newcomer(Reader::rounds(), key, take, history)
    }

    fn conflict(&self, round: &Round, won: bool) -> Option<Conflict> {
        exclusive::in_use_as_semaphore(round, won)
    }

    fn refused(&self, round: &Round, tickets_needed: usize) -> (AttemptFailure, Option<u64>) {
        exclusive::held_by(round, tickets_needed)
    }

    fn release(&self, holding: Holding<'_>, purpose: Purpose, _: Option<&Seat<'_>>) -> Giving {
        exclusive::release_call(Reader::rounds(), holding, purpose)
    }

    /// The lock's turn, with its own rule for who may enter (READ_WAIT), in a first-come,
    /// first-served line: a reader never supersedes.
    fn wait(&self, queued: &Queued, join: bool, _: &Names, _: Line) -> Wait {
        Wait {
            call: Call::new(&READ_WAIT, queued.recorded_turn(join)),
            room: 1,
            decode: turn,
        }
    }

    fn refused_turn(&self, in_the_way: InTheWay, _first: bool) -> (AttemptFailure, bool) {
        (held(in_the_way), false)
    }

    /// Readers announce their releases like holders of the lock: a refusal by K held without
    /// a record is an outsider's.
    fn outsiders(&self) -> bool {
        true
    }

    fn extend(&self, token: &str, ms: &[u8]) -> Call {
        Call::new(&READ_EXTEND, extension(token, ms))
    }

    fn leave(&self, token: &str, names: &Names, why: Leaving<'_>) -> Call {
        Call::new(&LEAVE, departure(token, names, why))
    }

    /// Readers hold K together, and a fencing token needs the lock alone.
    fn fence(&self) -> Result<(), FenceError> {
        Err(FenceError::Shared)
    }
}
