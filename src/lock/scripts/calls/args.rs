//! Each script's arguments, one struct per shape, each with its builder in the order the
//! script's Lua numbers them (see each script's doc for what they mean). Owned, so that a
//! kind can hand a call to the engine (`calls::Call`); a few copies of short strings per round.
//! `Default` for each, so that the table's test can count what each builds.

use super::Args;
use crate::lock::scripts::history::History;
use crate::lock::scripts::keys::Names;

/// A newcomer's attempt (ACQUIRE, READ_ACQUIRE): token, TTL ms, holder record, whether it
/// will wait (a ticket when refused), the queue keys' TTL; ACQUIRE also the history
/// (`History::spec`, dated when the attempt is made).
#[derive(Default)]
pub(in crate::lock) struct Take {
    pub token: String,
    pub ttl_ms: Vec<u8>,
    pub record: String,
    pub will_wait: bool,
    pub keep_ms: String,
}

impl Args for Take {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![
            self.token.as_bytes(),
            &self.ttl_ms,
            self.record.as_bytes(),
            flag(self.will_wait),
            self.keep_ms.as_bytes(),
        ]
    }
}

/// Another script's arguments, then the history (`History::spec`) last.
#[derive(Default)]
pub(in crate::lock) struct Recorded<A> {
    pub args: A,
    pub history: String,
}

impl<A: Args> Args for Recorded<A> {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = self.args.argv(publish);
        argv.push(self.history.as_bytes());
        argv
    }
}

/// What a waiter sends in every turn, built once per wait: its token, the TTL ms, its holder
/// record now and dated from when the wait began, its ticket, its lease ms and the queue
/// keys' TTL.
#[derive(Clone, Default)]
pub(in crate::lock) struct Queued {
    pub token: String,
    pub ttl_ms: Vec<u8>,
    pub record: String,
    pub ticket: String,
    pub waiting_record: String,
    pub lease_ms: String,
    pub keep_ms: String,
    /// Whether the turn that takes is recorded (`scripts::history`; the lock's WAIT).
    pub history: History,
}

/// A waiter's turn (WAIT, READ_WAIT): token, TTL ms, holder record, ticket, record dated from
/// the start of the wait, lease ms, the queue keys' TTL, join (WAIT: `Recorded<Turn>`, the
/// history dated when the turn is made).
#[derive(Default)]
pub(in crate::lock) struct Turn {
    pub queued: Queued,
    pub join: bool,
}

impl Args for Turn {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        let queued = &self.queued;
        vec![
            queued.token.as_bytes(),
            &queued.ttl_ms,
            queued.record.as_bytes(),
            queued.ticket.as_bytes(),
            queued.waiting_record.as_bytes(),
            queued.lease_ms.as_bytes(),
            queued.keep_ms.as_bytes(),
            flag(self.join),
        ]
    }
}

/// A superseding turn (WAIT_SUPERSEDE), which wakes those it evicts: [`Turn`]'s, then the
/// publish command and the wake channels.
#[derive(Default)]
pub(in crate::lock) struct SupersedingTurn {
    pub turn: Recorded<Turn>,
    pub wake: Wake,
}

impl Args for SupersedingTurn {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = self.turn.argv(publish);
        argv.extend(self.wake.argv(publish));
        argv
    }
}

/// Where a script that wakes waiters tells them: the publish command (per master), then the
/// wake channel's prefix and suffix (`keys::Names`).
#[derive(Default)]
pub(in crate::lock) struct Wake {
    pub prefix: String,
    pub suffix: String,
}

impl Wake {
    pub(in crate::lock) fn of(names: &Names) -> Wake {
        Wake {
            prefix: names.wake_prefix.clone(),
            suffix: names.wake_suffix.clone(),
        }
    }
}

impl Args for Wake {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        vec![publish, self.prefix.as_bytes(), self.suffix.as_bytes()]
    }
}

/// An extension (EXTEND, READ_EXTEND): token, the new TTL ms.
#[derive(Default)]
pub(in crate::lock) struct Extend {
    pub token: String,
    pub ms: Vec<u8>,
}

impl Args for Extend {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![self.token.as_bytes(), &self.ms]
    }
}

/// A release or an undo (RELEASE, READ_RELEASE): token, release channel (empty: a clean-up),
/// then the publish command and the wake channels.
#[derive(Default)]
pub(in crate::lock) struct Release {
    pub token: String,
    pub channel: String,
    pub wake: Wake,
}

impl Args for Release {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = vec![self.token.as_bytes(), self.channel.as_bytes()];
        argv.extend(self.wake.argv(publish));
        argv
    }
}

/// A release or a departure, then how the turn ended or the waiter left
/// (`history::Ending::word`, `gave up`, ...; empty for a clean-up, which is not recorded) and
/// the history (`History::spec`): what the scripts that close a turn take last.
#[derive(Default)]
pub(in crate::lock) struct Closing<A> {
    pub args: A,
    pub how: String,
    pub history: String,
}

impl<A: Args> Args for Closing<A> {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = self.args.argv(publish);
        argv.push(self.how.as_bytes());
        argv.push(self.history.as_bytes());
        argv
    }
}

/// The lock's release (RELEASE, and a reader's READ_RELEASE).
pub(in crate::lock) type Ended = Closing<Release>;
/// A slot's release (RELEASE_SLOT).
pub(in crate::lock) type EndedSlot = Closing<ReleaseSlot>;
/// A waiter leaving the lock's line (LEAVE).
pub(in crate::lock) type Departure = Closing<Leave>;

/// A slot's release or undo (RELEASE_SLOT): [`Release`]'s, the limit, then the place a
/// waiter's own undo puts back (ticket, lease ms, record, the queue keys' TTL; all empty
/// otherwise).
#[derive(Default)]
pub(in crate::lock) struct ReleaseSlot {
    pub release: Release,
    pub limit: String,
    pub seat: [String; 4],
}

impl Args for ReleaseSlot {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = self.release.argv(publish);
        argv.push(self.limit.as_bytes());
        argv.extend(self.seat.iter().map(String::as_bytes));
        argv
    }
}

/// Leaving the line (LEAVE): token, then the publish command and the wake channels.
#[derive(Default)]
pub(in crate::lock) struct Leave {
    pub token: String,
    pub wake: Wake,
}

impl Args for Leave {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = vec![self.token.as_bytes()];
        argv.extend(self.wake.argv(publish));
        argv
    }
}

/// A slot script's arguments: another script's, with the semaphore's limit put at `AT`
/// (counted from 0), as the slots' scripts take it.
#[derive(Default)]
pub(in crate::lock) struct WithLimit<A, const AT: usize> {
    pub args: A,
    pub limit: String,
}

impl<A: Args, const AT: usize> Args for WithLimit<A, AT> {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        let mut argv = self.args.argv(publish);
        argv.insert(AT, self.limit.as_bytes());
        argv
    }
}

/// A newcomer's attempt at a slot (ACQUIRE_SLOT): [`Take`]'s, with the limit third.
pub(in crate::lock) type TakeSlot = WithLimit<Take, 2>;
/// A slot's turn (WAIT_SLOT): [`Turn`]'s, with the limit third.
pub(in crate::lock) type SlotTurn = WithLimit<Turn, 2>;
/// A slot's extension (EXTEND_SLOT): [`Extend`]'s, then the limit.
pub(in crate::lock) type ExtendSlot = WithLimit<Extend, 2>;
/// Leaving a semaphore's line (LEAVE_SLOT): [`Leave`]'s, then the limit.
pub(in crate::lock) type LeaveSlot = WithLimit<Leave, 4>;

/// A fencing token proposed (FENCE_PROPOSE).
#[derive(Default)]
pub(in crate::lock) struct Proposal {
    pub proposed: String,
}

impl Args for Proposal {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![self.proposed.as_bytes()]
    }
}

/// The order register read, or raised (ORDER): the order, raise, the register's TTL ms.
#[derive(Default)]
pub(in crate::lock) struct Order {
    pub order: String,
    pub raise: bool,
    pub ttl_ms: String,
}

impl Args for Order {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![
            self.order.as_bytes(),
            flag(self.raise),
            self.ttl_ms.as_bytes(),
        ]
    }
}

/// A forced release (FORCE): the forcer's record, the drift factor, the grace ms, the release
/// channel, the publish command.
#[derive(Default)]
pub(in crate::lock) struct Force {
    pub record: String,
    pub factor: String,
    pub grace_ms: String,
    pub channel: String,
}

impl Args for Force {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]> {
        vec![
            self.record.as_bytes(),
            self.factor.as_bytes(),
            self.grace_ms.as_bytes(),
            self.channel.as_bytes(),
            publish,
        ]
    }
}

/// One key's read (READ, see `read::scan::Reading`): how many waiters to list, the horizon of
/// redlock's scores (`LONGEST_TTL_MS`), how many readers' shares and slots, and what for
/// (`status` or `scan`).
#[derive(Default)]
pub(in crate::lock) struct Read {
    pub waiters: String,
    pub longest: String,
    pub shares: String,
    pub slots: String,
    pub purpose: String,
}

impl Args for Read {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![
            self.waiters.as_bytes(),
            self.longest.as_bytes(),
            self.shares.as_bytes(),
            self.slots.as_bytes(),
            self.purpose.as_bytes(),
        ]
    }
}

/// `list`'s page of a SCAN (PAGE): cursor, pattern, count, the longest name sent whole, the
/// page's budget in bytes, how much of a longer name is shown.
#[derive(Default)]
pub(in crate::lock) struct Page {
    pub cursor: Vec<u8>,
    pub pattern: Vec<u8>,
    pub count: String,
    pub whole: String,
    pub budget: String,
    pub shown: String,
}

impl Args for Page {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![
            &self.cursor,
            &self.pattern,
            self.count.as_bytes(),
            self.whole.as_bytes(),
            self.budget.as_bytes(),
            self.shown.as_bytes(),
        ]
    }
}

/// A yes-or-no argument as the Lua reads it: '1', or empty.
fn flag(yes: bool) -> &'static [u8] {
    if yes { b"1" } else { b"" }
}

/// A page of a key's history (HISTORY): the first entry (0: the newest), how many.
#[derive(Default)]
pub(in crate::lock) struct HistoryPage {
    pub first: String,
    pub count: String,
}

impl Args for HistoryPage {
    fn argv<'a>(&'a self, _: &'a [u8]) -> Vec<&'a [u8]> {
        vec![self.first.as_bytes(), self.count.as_bytes()]
    }
}
