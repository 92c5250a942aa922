//! The seam between the engine and a kind: what the lock, a semaphore's slot and a reader's
//! share each say for themselves, so that the engine (`client`, the one wait loop in `take`,
//! a newcomer's attempt in `newcomer`, a waiter's turn in `queue_turn`, the queue in `queue`,
//! renewal in `renewal`, the release in `release`) never asks which kind it serves, and runs
//! every round itself: a kind runs none.
//!
//! A kind is one implementation of [`Seam`], in its own file with the argument for why it is
//! sound: the lock in `exclusive`, a reader's share in `shared`, a slot in `semaphore` (its
//! rounds in `slots`). Its [`Kind`] gives, without a method of its own:
//! - **its quorum** for N masters ([`Seam::quorum`]): the majority, or, for a kind with a
//!   limit, a slot's floor(L·N/(L+1)) + 1; the queue's own quorum (tickets, places) stays
//!   the majority;
//! - **its tokens** ([`Seam::new_token`], `Kind::new_token`), which say what they hold, so
//!   that a token that comes in from outside (`release`/`extend --token`, re-entrance) is read
//!   back by `Kind::of_token` (`scripts::tokens`), the one place that parses one.
//!
//! Each kind gives:
//! - **its scripts and their arguments**, as one [`Call`] each, which the engine sends: a
//!   newcomer's attempt with how its round is decided ([`Seam::newcomer`]), the release, also
//!   the undo of a partial hold ([`Seam::release`]), a waiter's turn ([`Seam::wait`]), the
//!   extension ([`Seam::extend`]) and leaving the line ([`Seam::leave`]). Every call is a
//!   script of the table with its arguments' type (`scripts::calls`), which says its keys and
//!   builds its arguments;
//! - **what the answers mean** ([`Seam::conflict`], [`Seam::refused`],
//!   [`Seam::refused_turn`], [`Seam::outsiders`]): a conflict never worth waiting for, a lock
//!   held, or a semaphore full; and whether it may be fenced ([`Seam::fence`]).
//!
//! The kind a request takes becomes its seam in one place (`kinds::seam`); nothing in the
//! engine matches on a [`Kind`].

use std::time::Duration;

use super::fence::FenceError;
use super::held::{Kind, Timing};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::{Round, Until};
use crate::lock::quorum::tally::{majority, slot_quorum};
pub(in crate::lock) use crate::lock::scripts::calls::Call;
use crate::lock::scripts::calls::args::{self, Take};
use crate::lock::scripts::history::History;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::queue::Turn;
use crate::lock::scripts::replies::Vote;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// A waiter's turn, as a kind asks for it: the script (WAIT and its kin), how many places at
/// the head of the line may take it at once (1 for the lock; L for a slot), and how each
/// master's answer reads.
pub(in crate::lock) struct Wait {
    pub call: Call,
    pub room: usize,
    pub decode: fn(&Result<Reply, NodeError>) -> Option<Turn>,
}

/// What to take, with a lock of any kind: the one request [`crate::lock::Redlock::acquire`]
/// takes.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub key: &'a str,
    /// The lock, a slot of a semaphore (`--limit`) or a reader's share (`--shared`).
    pub kind: Kind,
    pub timing: Timing,
    /// Who holds it, recorded beside it for `status`; `None`: no record.
    pub holder: Option<&'a Holder>,
    /// How long to wait for it: `Duration::ZERO`, one attempt; a wait too long for the clock
    /// to represent (`Duration::MAX`), until it is taken or cancelled.
    pub wait: Duration,
    /// `--supersede` (the lock only): waiting, evict the older waiters of the line, and leave
    /// it when a newer one comes (see `supersede`). The line's policy ([`Request::line`]), not
    /// a kind: the lock is taken, held and released as without it.
    pub supersede: bool,
    /// Whether the turn is recorded in the key's history, and how many events it keeps
    /// (`--history`, see `scripts::history`).
    pub history: History,
}

impl Request<'_> {
    /// Whether a refused attempt waits (and so asks for a ticket in the queue).
    pub(in crate::lock) fn will_wait(&self) -> bool {
        !self.wait.is_zero()
    }

    /// How it waits in the key's line.
    pub(in crate::lock) fn line(&self) -> Line {
        if self.supersede {
            Line::Superseding
        } else {
            Line::FirstCome
        }
    }
}

/// A line's policy, as a waiter asks for it (see `queue`, and `supersede`, "One policy per
/// line"): the engine keeps it with the waiter, the kind's seam sends the turn it asks for
/// ([`Seam::wait`]), and it decides whether a lost place is made again ([`Line::rejoins`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lock) enum Line {
    /// First come, first served: WAIT and its kin.
    FirstCome,
    /// `--supersede`: a newer waiter evicts the older ones (WAIT_SUPERSEDE, the lock's only:
    /// the command line refuses it for a slot or a share, whose turns have no such script).
    Superseding,
}

impl Line {
    /// Whether a waiter makes its place again where it is gone: re-added at a heartbeat, or
    /// at the back of the line once it lapsed on a majority (see `queue`). A superseding
    /// waiter makes it in its first turn only (see `supersede`: a place gone later may have
    /// been evicted, and the mark that says so expired).
    pub(in crate::lock) fn rejoins(self) -> bool {
        self == Line::FirstCome
    }
}

/// A waiter's arguments to every turn, built once per wait (see `queue_turn`; the struct is
/// the turn scripts' own, `calls::args`).
pub(in crate::lock) use crate::lock::scripts::calls::args::Queued;

impl Queued {
    /// The arguments of a turn at K (WAIT and its kin), told to `join` the line where it has
    /// no place.
    pub(in crate::lock) fn turn(&self, join: bool) -> args::Turn {
        args::Turn {
            queued: self.clone(),
            join,
        }
    }

    /// [`Queued::turn`] with the history, dated now (the lock's WAIT, a reader's READ_WAIT).
    pub(in crate::lock) fn recorded_turn(&self, join: bool) -> args::Recorded<args::Turn> {
        args::Recorded {
            args: self.turn(join),
            history: self.history.spec(),
        }
    }

    /// The place a waiter's own undo puts back (see [`Seat`]).
    pub(in crate::lock) fn seat(&self) -> Seat<'_> {
        Seat {
            ticket: &self.ticket,
            lease_ms: &self.lease_ms,
            record: &self.waiting_record,
            keep_ms: &self.keep_ms,
        }
    }
}

/// What the masters that refused a turn said, merged: who holds it (the longest TTL), whether
/// it is free or held by readers, how many wait, and the waiter's place (1-based; 0: none).
pub(in crate::lock) struct InTheWay {
    pub holder: Option<Holder>,
    pub expires_in: Option<Duration>,
    pub free: bool,
    pub shared: bool,
    /// Revoked by `release --force` on some master that refused.
    pub revoked: bool,
    pub waiters: usize,
    pub place: usize,
}

impl Default for InTheWay {
    fn default() -> InTheWay {
        InTheWay {
            holder: None,
            expires_in: None,
            free: true,
            shared: false,
            revoked: false,
            waiters: 0,
            place: 0,
        }
    }
}

/// A newcomer's attempt as its kind gives it to the engine (see `newcomer`).
pub(in crate::lock) struct Newcomer {
    /// The script and its arguments, sent to every master at once.
    pub call: Call,
    /// Which answers grant it.
    pub vote: fn(&Result<Reply, NodeError>) -> Vote,
    /// When a round that will wait stops listening: late enough to carry the refusals'
    /// tickets the queue needs.
    pub waiting: Until,
    /// How the trace names the round (`acquire`, `acquire slot`).
    pub trace: &'static str,
    /// What is taken, as the log says it: `"k"`, `a share of "k"`, `a slot of "k" (limit 2)`.
    pub what: String,
}

/// Giving back a hold, as its kind gives it to the engine (see `release`).
pub(in crate::lock) struct Giving {
    /// RELEASE or its kin, with its arguments.
    pub call: Call,
    /// How the trace names the round (`release`, `release slot`).
    pub trace: &'static str,
}

/// What a token holds, as a release or an undo names it.
#[derive(Clone, Copy)]
pub(in crate::lock) struct Holding<'a> {
    pub key: &'a str,
    pub names: &'a Names,
    pub token: &'a str,
    pub timing: Timing,
    /// Where its end is recorded (see `scripts::history`).
    pub history: History,
    /// How its turn ended (`history::Ending::word`), for a real release; empty for an undo.
    pub how: &'a str,
}

/// Why a waiter leaves the line, as its history records it (see `scripts::history`; a
/// semaphore's slot waiter records nothing).
#[derive(Clone, Copy)]
pub(in crate::lock) struct Leaving<'a> {
    /// `gave up`, `interrupted`, or empty (not recorded: it leaves for a reason told
    /// elsewhere, superseded, refused, or a place lost).
    pub how: &'a str,
    pub history: History,
}

/// A waiter's place in the queue, as the undo of its own failed turn puts it back (see
/// RELEASE_SLOT): its ticket, lease and record, and the queue keys' TTL.
pub(in crate::lock) struct Seat<'a> {
    pub ticket: &'a str,
    pub lease_ms: &'a str,
    pub record: &'a str,
    pub keep_ms: &'a str,
}

/// One kind, as the engine calls it (see the module header).
pub(in crate::lock) trait Seam {
    /// What it is, as the API names it.
    fn kind(&self) -> Kind;

    /// A fresh token, which says what it holds (`Kind::new_token`).
    fn new_token(&self) -> String {
        self.kind().new_token()
    }

    /// How many of `n` masters must confirm a hold, its renewal and its release round: a
    /// majority, or a slot's quorum for a kind with a limit (see `semaphore`).
    fn quorum(&self, n: usize) -> usize {
        match self.kind().limit() {
            None => majority(n),
            Some(limit) => slot_quorum(n, limit),
        }
    }

    /// A newcomer's attempt at `key` with `take` (its token, TTL and record), recorded in
    /// `history` (`History::spec`): its call, and how its round is decided, by a caller that
    /// will wait needing the tickets of `tickets_needed` refusals (`newcomer` runs it, decides
    /// it and undoes what a failed one left).
    fn newcomer(&self, key: &str, take: Take, history: String, tickets_needed: usize) -> Newcomer;

    /// A conflict a newcomer's answers show, never worth waiting for (the key in use as
    /// another kind, holders that disagree on the limit); `won`: its quorum said yes.
    fn conflict(&self, round: &Round, won: bool) -> Option<Conflict>;

    /// What a newcomer's round that its masters refused means (who holds it, or the slots
    /// full), and its ticket for the queue, where at least `tickets_needed` masters drew one.
    fn refused(&self, round: &Round, tickets_needed: usize) -> (AttemptFailure, Option<u64>);

    /// Giving back what `holding` holds, as one call to every master (`release` runs the
    /// round): a release ([`Purpose::Release`]), or the undo of a failed or interrupted
    /// attempt or turn, which with `seat` (a waiter's own turn) puts its place back where
    /// taking had removed it.
    fn release(&self, holding: Holding<'_>, purpose: Purpose, seat: Option<&Seat<'_>>) -> Giving;

    /// A waiter's turn in a `line` of that policy (told to `join` it where it has no place;
    /// `names`: the layout of its key, for a turn that wakes others).
    fn wait(&self, queued: &Queued, join: bool, names: &Names, line: Line) -> Wait;

    /// What a turn refused by the quorum means (`in_the_way`: what the refusals said), and
    /// whether it may still have taken something, where a master named it `first` (then the
    /// turn is undone).
    fn refused_turn(&self, in_the_way: InTheWay, first: bool) -> (AttemptFailure, bool);

    /// Whether a turn can be refused by a holder of K outside the queue (a token without a
    /// holder record, whose release announces nothing): the lock's and a reader's can.
    fn outsiders(&self) -> bool;

    /// The extension of `token` to `ms` from now: compare-and-pexpire, never re-creating.
    fn extend(&self, token: &str, ms: &[u8]) -> Call;

    /// Leaving the line (LEAVE, or its kin), for the waiter holding `token` (`names`: the
    /// layout of its key, where the waiters its going lets in are told).
    fn leave(&self, token: &str, names: &Names, leaving: Leaving<'_>) -> Call;

    /// Whether a holder of this kind may get a fencing token.
    fn fence(&self) -> Result<(), FenceError>;
}
