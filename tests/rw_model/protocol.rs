//! The rules a run follows: issue 25's design (argued in src/lock/kinds/shared.rs), or that
//! design with one known-bad rule, which some check must catch (the model has teeth).

pub use crate::model_kit::{MAJORITY, MASTERS};

/// What a client takes K as.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// `--shared`: a share, with any number of other readers.
    Reader,
    /// The plain lock: K alone.
    Writer,
    /// Another Redlock client (redlock-py, node-redlock, redsync): `SET K x NX PX` on every
    /// master, holding where a majority said yes, `GET K == x` then `DEL` to release; it knows
    /// nothing of the queue, keeps no holder record and announces nothing.
    Foreign,
    /// `release --force` (src/lock/kinds/revoke.rs): FORCE on every master, once; it never
    /// holds. (Runs with a forcer have no foreign client, whose release cannot say it stopped.)
    Forcer,
}

/// A known-bad rule put into the design, to show that a check catches it.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flaw {
    /// READ_ACQUIRE lets a newcomer reader in wherever K is free or held by readers, even
    /// with waiters in line (a writer among them).
    NewcomerReaderIgnoresTheQueue,
    /// READ_WAIT lets a waiting reader in wherever K is free or held by readers, even behind a
    /// waiting writer.
    WaitingReaderIgnoresWritersAhead,
    /// A script that lets waiters in publishes to the first of them only (today's
    /// `wake_first`), not to every newly eligible reader.
    WakesTheFirstOnly,
    /// A reader holds with one master: a quorum below the majority.
    ReaderQuorumOfOne,
    /// READ_RELEASE deletes the marker K even where other readers still hold.
    ReleaseDeletesTheMarker,
    /// FORCE frees K at once (an operator's `DEL`), instead of leaving the revocation marker.
    ForceFreesAtOnce,
}

/// The design, or the design with `flaw`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rules {
    pub flaw: Option<Flaw>,
    /// The alternative newcomer rule (issue 25's findings): a newcomer reader takes a share where
    /// no live WRITER waits (where it would be eligible at the back of the line), rather than
    /// only where nobody waits at all, which queues it behind readers that hold (a reader
    /// keeps its place until its release).
    pub readers_pass_readers: bool,
}

impl Rules {
    pub fn has(self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    /// How many masters a holder of `mode` needs.
    pub fn quorum(self, mode: Mode) -> usize {
        match mode {
            Mode::Reader if self.has(Flaw::ReaderQuorumOfOne) => 1,
            _ => MAJORITY,
        }
    }

    /// Whether a newcomer's round, with `taken` answers of `answered`, is over: ours at
    /// `Until::WonOrAllAnswered` (won, or all answered, so that a refusal from every master
    /// needs no undo); a foreign client asks every master in turn.
    pub fn newcomer_decided(self, mode: Mode, taken: usize, answered: usize) -> bool {
        let won = taken >= self.quorum(mode);
        match mode {
            Mode::Foreign => answered == MASTERS,
            _ => won || answered == MASTERS,
        }
    }
}

/// The sets of masters (a bit per master) a waiter may subscribe on (`listen_on`: as many as
/// its quorum, the majority, drawn at random).
pub const LISTEN_SETS: [u8; 3] = [0b011, 0b101, 0b110];
