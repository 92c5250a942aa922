//! Every lock at once, for `list`: a SCAN of each master for redlock's own keys, then reads of
//! the locks those keys name, a batch at a time.
//!
//! How locks are found. A lock key is a name the user chose, so no pattern finds lock keys;
//! redlock's own keys do: every key under [`RESERVED_PREFIX`] names its lock (see
//! [`keys::parse`]), and every lock redlock takes has a holder record beside it, written by the
//! same script with the same TTL. So a lock held by redlock is found through its holder record,
//! a queued waiter through the queue keys, a lock that was ever fenced through its counter,
//! a semaphore (`--limit`) through its slots, limit and slot records keys (read by the same
//! script: at most `max_waiters` of its live slots a master, see `scripts::scan`'s READ).
//! Other Redlock clients write none of these: a lock they hold is found only when redlock keys
//! of the same name happen to exist (a waiter of ours queued behind it, a fencing counter).
//!
//! What keeps it bounded, on any keyspace:
//! 1. **SCAN, never KEYS**: each call examines about `COUNT` entries and returns the names that
//!    match `__redlock:*` (and the caller's glob), so no call blocks a master for long and no
//!    reply is large. A reply over the transport's caps (very long key names: one name over
//!    `resp::MAX_BULK_BYTES`, or a page over `resp::MAX_REPLY_BYTES`) closes the connection;
//!    the same cursor is then asked again with a tenth of the count, once per step, and at
//!    the smallest count by [`PAGE`], a script that runs the same SCAN on the master and sends
//!    back every name up to [`WHOLE_NAME`] bytes whole within a page of at most
//!    [`PAGE_BUDGET`] bytes, and only the start and length of any other: such a name is
//!    reported ([`Scan::oversized`]), never read, and the scan goes on past it. (Before, one
//!    name of 1 MiB, or six of 400 KB in one page, ended the scan of that master: "no locks
//!    held", exit 69.) Every name redlock itself writes is far below [`WHOLE_NAME`]: a lock
//!    key comes from one argument or variable (at most 128 KiB on Linux) and its names are at
//!    most twice that, plus the prefix.
//! 2. **One deadline for the whole scan**, every request also bounded by the node timeout. A
//!    master whose cursor has not come back to 0 by then (or that failed, or that has more than
//!    [`MAX_KEYS`] of our keys) is reported as not scanned fully: what was found there is kept,
//!    and the caller says which masters are incomplete.
//! 3. **Reads in batches, memory bounded whatever the number of locks**: the scan keeps each
//!    lock's name once (the names are what sorts the report), never its keys' contents; every
//!    lock found on any master is then read on every master (a verdict needs all of them) by
//!    [`Redlock::read_locks`](crate::lock::Redlock::read_locks), one script per lock per master,
//!    pipelined, a batch of names at a time that the caller reports and drops before the next
//!    (see `batches`). Reads end by the scan's deadline extended by one node timeout, so that
//!    a scan that used all its time still gets its reads; a read not done by then is reported
//!    as timed out.
//!    What stays in memory is the names (at most [`MAX_KEYS`] per master; distinct keys are
//!    counted by a 64-bit hash of each, not kept) and one batch of reads, each read capped by
//!    the transport (see `scripts::scan`'s READ).
//!
//! It writes nothing, and reads fencing counters only with commands that leave their access
//! time alone (`EXISTS`, `PTTL`, `OBJECT IDLETIME`): a `GET` would reset the idle time that
//! tells a counter nobody uses from a live one, and a periodic `list --problems` would then
//! never see one idle. (`status` runs the same script and reads the value, as it always did:
//! the scan asks READ not to, see `Reading`.) Each lock is read by one script, so its
//! token, holder record, queue and the master's clock are one consistent picture of that
//! master.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant};

use futures_util::future::join_all;

use crate::lock::quorum::round::Masters;
use crate::lock::scripts::PAGE;
use crate::lock::scripts::calls::args::Page;
use crate::lock::scripts::keys::{self, RESERVED_PREFIX};
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::{Node, NodeError};

mod batches;
mod fields;
mod found;
mod glob;
mod page;
mod read;
mod reading;
mod slots;

pub(in crate::lock) use batches::{read_locks, read_strays};
use page::{PAGE_BUDGET, WHOLE_NAME, is_over_caps, scan_reply};

pub use found::FoundLock;
pub(in crate::lock) use read::decoded;
#[cfg(test)]
pub(in crate::lock) use read::empty_lock;
pub use read::{FenceRead, LockRead, Malformed, QueueRead, ReadersRead, TEXT_COUNTER, Ttl};
pub(in crate::lock) use reading::Reading;
pub use reading::{STATUS_SHARES, STATUS_SLOTS, STATUS_WAITERS};
pub use slots::SlotsRead;

/// What to scan for, and for how long.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Only locks whose key matches this Redis glob (`*`, `?`, `[a-z]`, `\` escapes).
    pub pattern: Option<String>,
    /// The whole scan's budget.
    pub timeout: Duration,
    /// Each request's.
    pub node_timeout: Duration,
    /// How many queued waiters to read per lock and master (the queue's length is always read).
    pub max_waiters: usize,
}

/// What the SCAN of the masters found: names, to be read a batch at a time with
/// [`Redlock::read_locks`](crate::lock::Redlock::read_locks) and
/// [`Redlock::read_strays`](crate::lock::Redlock::read_strays).
#[derive(Clone, Debug)]
pub struct Scan {
    /// One per master, in the order given.
    pub masters: Vec<MasterScan>,
    /// Every lock some key names, on any master: sorted, each once.
    pub locks: Vec<String>,
    /// Keys under the prefix that name no lock redlock reads (written by something else, or by
    /// a later build's layout); only when no pattern was given.
    pub strays: Vec<StrayName>,
    /// Keys under the prefix whose names are too long to read (see the module header).
    pub oversized: Vec<OversizedName>,
    /// When reads give up (see the module header).
    read_deadline: Instant,
    max_waiters: usize,
}

/// How the scan of one master went.
#[derive(Clone, Debug)]
pub struct MasterScan {
    pub master: Master,
    /// Distinct keys under the prefix (and pattern) found there.
    pub keys: usize,
    pub end: ScanEnd,
}

/// Why the scan of a master stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanEnd {
    /// The cursor came back to 0: every key that existed throughout the scan was seen.
    Complete,
    /// The deadline passed first.
    OutOfTime,
    /// More than [`MAX_KEYS`] keys under the prefix: the rest were not collected.
    TooManyKeys,
    /// The master failed (unreachable, refused SCAN, ...).
    Failed(NodeError),
}

impl MasterScan {
    pub fn complete(&self) -> bool {
        self.end == ScanEnd::Complete
    }
}

/// A key under the prefix that names no lock this build reads, as the scan found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrayName {
    /// Index of the master it is on.
    pub master: usize,
    pub name: Vec<u8>,
}

/// A key under the prefix whose name is too long for a reply (see the module header): its
/// start and its length, as the master gave them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OversizedName {
    /// Index of the master it is on.
    pub master: usize,
    /// Its first [`OVERSIZED_SHOWN`] bytes.
    pub start: Vec<u8>,
    /// Its length in bytes.
    pub len: usize,
}

/// How much of an oversized name the master sends back.
pub const OVERSIZED_SHOWN: usize = 200;

/// A stray key, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrayKey {
    /// Index of the master it is on.
    pub master: usize,
    /// Its name (lossy UTF-8).
    pub name: String,
    pub ttl: Result<Ttl, NodeError>,
}

/// The most keys under the prefix collected from one master.
pub const MAX_KEYS: usize = 100_000;

/// The SCAN COUNT hint to start with; divided by 10 (down to [`MIN_COUNT`]) after a reply that
/// was over the transport's caps.
const COUNT: usize = 1000;
const MIN_COUNT: usize = 10;

/// The kinds of key the read script covers; any other kind is a stray.
const READ_KINDS: [&str; 14] = [
    "holder",
    "fence",
    "order",
    "policy",
    "evicted",
    "queue",
    "lease",
    "waiters",
    "tickets",
    "readers",
    "readerholders",
    "slots",
    "limit",
    "holders",
];

/// The names the SCANs found, sorted into locks and strays as they arrive (the masters are
/// scanned at once, on one thread).
struct Names<'a> {
    pattern: Option<&'a str>,
    locks: BTreeSet<String>,
    strays: Vec<StrayName>,
    oversized: Vec<OversizedName>,
}

/// One name a SCAN page gave.
enum Found<'a> {
    Name(&'a [u8]),
    /// Too long to send whole: its start and length.
    Oversized(&'a [u8], usize),
}

impl Names<'_> {
    /// Files what a page of `master` gave (each distinct name once per master).
    fn found(&mut self, master: usize, found: Found<'_>) {
        match found {
            Found::Name(name) => self.add(master, name),
            Found::Oversized(start, len) => self.oversized.push(OversizedName {
                master,
                start: start.to_vec(),
                len,
            }),
        }
    }

    /// Files a name found on `master` (each distinct name once per master).
    fn add(&mut self, master: usize, name: &[u8]) {
        let parsed = std::str::from_utf8(name).ok().and_then(keys::parse);
        match parsed {
            Some((kind, key)) if READ_KINDS.contains(&kind) => {
                let wanted = self
                    .pattern
                    .is_none_or(|p| glob::matches(p.as_bytes(), key.as_bytes()));
                if wanted && keys::check_lock_key(key).is_ok() && !self.locks.contains(key) {
                    self.locks.insert(key.to_string());
                }
            }
            // The doctor's scratch lock and the like: reserved names, not user locks.
            Some((_, key)) if keys::check_lock_key(key).is_err() => {}
            _ if self.pattern.is_none() => self.strays.push(StrayName {
                master,
                name: name.to_vec(),
            }),
            _ => {}
        }
    }
}

/// Scans one master: a server, or every primary of a cluster (a cluster's SCAN sees one
/// node's keys only). Returns how many distinct names it found; the first incomplete end is
/// the master's.
async fn scan_endpoint(
    endpoint: &Endpoint,
    master: usize,
    pattern: &[u8],
    deadline: Instant,
    node_timeout: Duration,
    names: &RefCell<Names<'_>>,
) -> (usize, ScanEnd) {
    let nodes = match endpoint.scan_nodes(node_timeout).await {
        Ok(nodes) => nodes,
        Err(error) => return (0, ScanEnd::Failed(error)),
    };
    let scans = join_all(nodes.iter().map(|node| {
        let file = |found: Found<'_>| names.borrow_mut().found(master, found);
        scan_master(node, pattern, deadline, node_timeout, MAX_KEYS, file)
    }))
    .await;
    let mut found = 0;
    let mut end = ScanEnd::Complete;
    for (count, ended) in scans {
        found += count;
        if end == ScanEnd::Complete {
            end = ended;
        }
    }
    (found, end)
}

/// Scans every master at once for the names of redlock's keys.
pub(in crate::lock) async fn scan(masters: &Masters, options: &ScanOptions) -> Scan {
    let start = Instant::now();
    let deadline = start + options.timeout;
    let pattern = format!(
        "{RESERVED_PREFIX}*{}",
        options.pattern.as_deref().unwrap_or("")
    );
    let names = RefCell::new(Names {
        pattern: options.pattern.as_deref(),
        locks: BTreeSet::new(),
        strays: Vec::new(),
        oversized: Vec::new(),
    });
    let scans = join_all(masters.nodes.iter().enumerate().map(|(i, endpoint)| {
        let pattern = pattern.as_bytes();
        scan_endpoint(endpoint, i, pattern, deadline, options.node_timeout, &names)
    }))
    .await;
    let reports: Vec<MasterScan> = scans
        .into_iter()
        .zip(&masters.nodes)
        .map(|((keys, end), node)| MasterScan {
            master: node.master.clone(),
            keys,
            end,
        })
        .collect();
    let Names {
        locks,
        strays,
        oversized,
        ..
    } = names.into_inner();
    log::debug!(
        "scanned {} in {:.1?}: {} locks, {} other keys",
        crate::plural::counted(masters.nodes.len(), "master"),
        start.elapsed(),
        locks.len(),
        strays.len()
    );
    Scan {
        masters: reports,
        locks: locks.into_iter().collect(),
        strays,
        oversized,
        read_deadline: deadline.max(Instant::now()) + options.node_timeout,
        max_waiters: options.max_waiters,
    }
}

/// SCANs one master for names matching `pattern` until the cursor returns to 0, the deadline
/// passes, `max_keys` distinct names are found, or the master fails; hands `file` each
/// distinct name once, and returns how many there were. Names are told apart by a 64-bit hash
/// (randomly keyed), so that a master's names are not all held at once: two of [`MAX_KEYS`]
/// names share a hash with a chance near 1 in 3 billion.
async fn scan_master(
    node: &Node,
    pattern: &[u8],
    deadline: Instant,
    node_timeout: Duration,
    max_keys: usize,
    mut file: impl FnMut(Found<'_>),
) -> (usize, ScanEnd) {
    let hasher = RandomState::new();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut cursor = b"0".to_vec();
    let mut count = COUNT;
    // Set after a page over the caps at the smallest count: that page is read by PAGE.
    let mut by_script = false;
    loop {
        let now = Instant::now();
        if now >= deadline {
            return (seen.len(), ScanEnd::OutOfTime);
        }
        let count_text = count.to_string();
        let request_deadline = deadline.min(now + node_timeout);
        let request = async {
            if by_script {
                let args = Page {
                    cursor: cursor.clone(),
                    pattern: pattern.to_vec(),
                    count: count_text.clone(),
                    whole: WHOLE_NAME.to_string(),
                    budget: PAGE_BUDGET.to_string(),
                    shown: OVERSIZED_SHOWN.to_string(),
                };
                // PAGE announces nothing: no publish command.
                PAGE.run_on(node, &[], &args, b"").await
            } else {
                let args: [&[u8]; 6] = [
                    b"SCAN",
                    &cursor,
                    b"MATCH",
                    pattern,
                    b"COUNT",
                    count_text.as_bytes(),
                ];
                node.command(&args).await
            }
        };
        let answer = tokio::time::timeout_at(request_deadline.into(), request)
            .await
            .unwrap_or_else(|_| Err(node.timed_out()));
        let (next, names, oversized) = match answer.map(|reply| scan_reply(&reply)) {
            Ok(Some(page)) => page,
            Ok(None) => {
                let error = NodeError::BadReply("unexpected reply to SCAN".into());
                return (seen.len(), ScanEnd::Failed(error));
            }
            Err(NodeError::BadReply(why)) if !by_script && is_over_caps(&why) => {
                // Names too long for this many in one reply: the same cursor, fewer at a time,
                // and at the fewest, by the script that sends long names cut.
                if count > MIN_COUNT {
                    count = (count / 10).max(MIN_COUNT);
                } else {
                    by_script = true;
                }
                continue;
            }
            Err(NodeError::Timeout) if Instant::now() >= deadline => {
                return (seen.len(), ScanEnd::OutOfTime);
            }
            Err(error) => return (seen.len(), ScanEnd::Failed(error)),
        };
        by_script = false;
        for name in names {
            if seen.len() > max_keys {
                break;
            }
            if seen.insert(hasher.hash_one(&name)) {
                file(Found::Name(&name));
            }
        }
        for (start, len) in oversized {
            if seen.insert(hasher.hash_one((&start, len))) {
                file(Found::Oversized(&start, len));
            }
        }
        if seen.len() > max_keys {
            return (seen.len(), ScanEnd::TooManyKeys);
        }
        if next == b"0" {
            return (seen.len(), ScanEnd::Complete);
        }
        cursor = next;
    }
}
