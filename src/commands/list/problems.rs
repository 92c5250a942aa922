//! The leak scan (`list --problems`): what in a scan is stuck or stale, and what to do about
//! each. A pure function of the scan, master by master.
//!
//! What counts, and why:
//! - **A key without a TTL** never goes away by itself. Everything redlock writes expires,
//!   except fencing counters, which must outlive every lock (design, section 6) and are
//!   never reported for it. A lock key without a TTL (set by something else) blocks the lock
//!   for good, so it is reported too, though it is not under the prefix.
//! - **A holder record whose lock key is gone or holds another token**: redlock writes, extends
//!   and deletes the two together in one script, so this means something else deleted or
//!   replaced the key. The record is never shown as the holder (it names its token), and it
//!   expires with the TTL it had.
//! - **A shared lock's readers key while its lock key does not hold the readers' marker**
//!   (`--shared`): the scripts write and delete the marker with the readers, so something else
//!   deleted or replaced the key. redlock's writers are still refused there (the readers key
//!   stands in for the marker), but another Redlock client's `SET K x NX` is not.
//! - **Malformed data** (`malformed`): a fencing counter that is not a number (another type,
//!   or text: `--fence` fails there, the lock does not), a readers key that is not a sorted
//!   set or a reader records key that is not a hash (the readers' scripts fail there), shares
//!   scored past any TTL redlock gives (not redlock's: the next reader's script drops them).
//!   Something else wrote each one.
//! - **A semaphore's keys** (`--limit`) without a TTL, or of a type its scripts cannot use
//!   (`slots`).
//! - **A queued waiter whose lease lapsed by the master's clock**: it stopped heartbeating
//!   (killed, stopped, cut off), so it no longer waits.
//! - **A key name too long to read** under the prefix (over what a reply may hold): redlock
//!   never writes one, so something else did; it is reported by its start and length, and
//!   the scan goes on past it.
//! - **A fencing counter nobody uses**: its lock absent on that master and the counter idle
//!   (`OBJECT IDLETIME`, which the scan never resets) for longer than the threshold. Deleting
//!   one restarts its numbers, so the advice says when that is safe.
//!
//! Findings are gathered lock by lock as `list` reads them; the first [`MAX_KEPT`] are kept
//! whole (they are printed after the locks), the rest only counted, so that memory stays
//! bounded on a keyspace full of leaks. Names and tokens a master holds are escaped (see
//! `crate::escape`): anyone can write them.

use std::time::Duration;

use crate::escape;
use crate::lock::{FoundLock, LockRead, Malformed, OversizedName, StrayKey, Ttl, keys};

/// The most findings kept for the report; the rest are counted.
pub const MAX_KEPT: usize = 10_000;

/// What kind of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    NoTtl,
    StaleHolder,
    StaleReaders,
    DeadWaiter,
    IdleFence,
    Oversized,
    Malformed,
}

impl Kind {
    /// The name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NoTtl => "no_ttl",
            Kind::StaleHolder => "stale_holder",
            Kind::StaleReaders => "stale_readers",
            Kind::DeadWaiter => "dead_waiter",
            Kind::IdleFence => "idle_fence",
            Kind::Oversized => "oversized_key",
            Kind::Malformed => "malformed",
        }
    }
}

/// One finding on one master.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: Kind,
    /// Index of the master it is on.
    pub master: usize,
    /// The lock it belongs to, when the key names one.
    pub lock: Option<String>,
    /// The Redis key.
    pub name: String,
    /// What is wrong.
    pub detail: String,
    /// What to do.
    pub action: String,
}

/// The findings of a scan so far: counters idle for `idle` or longer are reported.
pub struct Findings {
    idle: Duration,
    /// The first [`MAX_KEPT`] findings, in the order found.
    pub kept: Vec<Problem>,
    /// How many were found in all.
    pub count: usize,
}

impl Findings {
    pub fn new(idle: Duration) -> Findings {
        Findings {
            idle,
            kept: Vec::new(),
            count: 0,
        }
    }

    /// Looks at what each master has of `lock`.
    pub fn lock(&mut self, lock: &FoundLock) {
        let mut found = Vec::new();
        for (master, read) in lock.reads.iter().enumerate() {
            if let Ok(read) = read {
                in_lock(&lock.key, master, read, self.idle, &mut found);
            }
        }
        self.add(found);
    }

    /// Looks at a key under the prefix that names no lock.
    pub fn stray(&mut self, stray: &StrayKey) {
        if stray.ttl != Ok(Ttl::Forever) {
            return;
        }
        // A lock's history is read by `redlock history`, not by the scan (it outlives its lock
        // by design); redlock always gives it a TTL.
        let history =
            crate::lock::keys::parse(&stray.name).is_some_and(|(kind, _)| kind == "history");
        let detail = if history {
            "a lock's history (`redlock history`) without a TTL: redlock always gives it one, \
             so something else wrote it; it never expires"
        } else {
            "a key under redlock's reserved prefix that this redlock does not write or read, \
             without a TTL: it never expires"
        };
        self.add(vec![Problem {
            kind: Kind::NoTtl,
            master: stray.master,
            lock: None,
            name: stray.name.clone(),
            detail: detail.into(),
            action: format!(
                "find out what wrote it; if nothing needs it, delete it on that master: DEL {}",
                quote(&stray.name)
            ),
        }]);
    }

    /// Looks at a key under the prefix whose name is too long to read.
    pub fn oversized(&mut self, oversized: &OversizedName) {
        let start = oversized_start(oversized);
        self.add(vec![Problem {
            kind: Kind::Oversized,
            master: oversized.master,
            lock: None,
            name: format!("{start}…"),
            detail: oversized_detail(oversized),
            action: format!(
                "find what wrote it (redlock never writes such a name) and delete it on that \
                 master: redis-cli --scan --pattern {} | head -c -1 | redis-cli -x DEL",
                quote(&format!("{}*", glob_escaped(&start)))
            ),
        }]);
    }

    fn add(&mut self, found: Vec<Problem>) {
        self.count += found.len();
        let room = MAX_KEPT.saturating_sub(self.kept.len());
        self.kept.extend(found.into_iter().take(room));
    }
}

fn in_lock(key: &str, master: usize, read: &LockRead, idle: Duration, found: &mut Vec<Problem>) {
    // The key as the messages show it: a master named it.
    let shown = escape::quoted(key);
    let mut push = |kind, name: String, detail: String, action: String| {
        found.push(Problem {
            kind,
            master,
            lock: Some(key.to_string()),
            name,
            detail,
            action,
        });
    };
    if read.ttl == Ttl::Forever {
        push(
            Kind::NoTtl,
            key.to_string(),
            format!(
                "lock {shown} has no TTL here: it never expires, so nobody can take the lock \
                 until it is deleted (redlock always sets one: something else wrote it)"
            ),
            format!(
                "check who holds it (redlock status --key {}); if nobody should, delete it on \
                 that master: DEL {}",
                quote(key),
                quote(key)
            ),
        );
    }
    let holder = keys::holder(key);
    if read.holder_ttl == Ttl::Forever {
        push(
            Kind::NoTtl,
            holder.clone(),
            format!("holder record of lock {shown} without a TTL: it never expires"),
            format!(
                "delete it on that master (it only names the holder; no lock depends on it): \
                 DEL {}",
                quote(&holder)
            ),
        );
    }
    if read.holder_ttl.exists() {
        let record_token = read
            .holder_record
            .as_deref()
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
            .and_then(|v| v.get("token")?.as_str().map(str::to_string));
        let why = match (&read.token, &record_token) {
            (None, _) => Some("its lock key is gone (deleted by something other than redlock)"),
            (Some(now), Some(named)) if now != named => Some(
                "its lock key holds another token (taken without a record: another Redlock \
                 client, or replaced by something else)",
            ),
            (Some(_), None) => Some("it is not a record redlock can read"),
            _ => None,
        };
        if let Some(why) = why {
            let expiry = match read.holder_ttl {
                Ttl::Left(left) => format!("it expires in {}", rounded(left)),
                _ => "it has no TTL (see above)".to_string(),
            };
            push(
                Kind::StaleHolder,
                holder.clone(),
                format!("holder record of lock {shown}: {why}"),
                format!(
                    "nothing is at risk: a record is never shown for a token it does not name, \
                     and {expiry}; to remove it now: DEL {}",
                    quote(&holder)
                ),
            );
        }
    }
    readers::readers_in_lock(key, read, &mut push);
    slots::slots_in_lock(key, read, &mut push);
    let queue_keys = [
        ("queue", keys::queue(key), read.queue.ttl),
        ("lease", keys::lease(key), read.queue.lease_ttl),
        ("waiters", keys::waiters(key), read.queue.waiters_ttl),
        ("tickets", keys::tickets(key), read.queue.tickets_ttl),
    ];
    for (kind, name, ttl) in queue_keys {
        if ttl == Some(Ttl::Forever) {
            push(
                Kind::NoTtl,
                name.clone(),
                format!("{kind} key of lock {shown} without a TTL: it never expires"),
                format!(
                    "once nobody waits for lock {shown}, delete it on that master: DEL {}",
                    quote(&name)
                ),
            );
        }
    }
    for (id, lease_ms) in &read.queue.lapsed {
        let ago = Duration::from_millis(read.now_ms.saturating_sub(*lease_ms));
        let who = read
            .queue
            .waiters
            .iter()
            .find(|w| &w.token == id)
            .and_then(|w| w.holder.as_ref())
            .map(|h| {
                let (host, user) = (escape::visible(&h.host), escape::visible(&h.user));
                format!(" ({host} pid {}, user {user})", h.pid)
            })
            .unwrap_or_default();
        let id = escape::visible(id);
        let queue = keys::queue(key);
        let lease = keys::lease(key);
        let waiters = keys::waiters(key);
        push(
            Kind::DeadWaiter,
            queue.clone(),
            format!(
                "waiter {id}{who} in the queue of lock {shown}: its lease lapsed {} ago by the \
                 master's clock, so it no longer waits (killed, stopped or cut off)",
                rounded(ago)
            ),
            format!(
                "none needed if it goes: waiters skip lapsed entries and the queue keys expire; \
                 to remove it now, on that master: ZREM {q} {id}; ZREM {l} {id}; HDEL {w} {id}",
                q = quote(&queue),
                l = quote(&lease),
                w = quote(&waiters),
            ),
        );
    }
    if let Some(malformed) = read.fence.as_ref().and_then(|f| f.malformed.as_ref()) {
        let name = keys::fence(key);
        let what = match malformed {
            Malformed::Type(kind) => format!("a {}", escape::visible(kind)),
            Malformed::Text => "text that is not a whole number".to_string(),
        };
        push(
            Kind::Malformed,
            name.clone(),
            format!(
                "fencing counter of lock {shown} is {what}, not a number (written by something \
                 other than redlock): --fence on {shown} fails on this master; the lock itself \
                 is not affected"
            ),
            format!(
                "if no resource checks the fencing tokens of {shown}, delete it on that master: \
                 DEL {}",
                quote(&name)
            ),
        );
    }
    if let Some(fence) = &read.fence
        && read.token.is_none()
        && let Some(unused) = fence.idle
        && unused >= idle
    {
        let name = keys::fence(key);
        push(
            Kind::IdleFence,
            name.clone(),
            format!(
                "fencing counter of lock {shown}: the lock is absent here and nothing has used \
                 the counter for {} (counters have no TTL on purpose: fencing numbers must only \
                 go up)",
                rounded(unused)
            ),
            format!(
                "keep it if any resource still checks the fencing tokens of {shown}: deleting it \
                 restarts the numbers, and such a resource would refuse every new token; \
                 otherwise delete it on every master: DEL {}",
                quote(&name)
            ),
        );
    }
}

/// What is wrong with an oversized name, for `--problems` and the warning without it.
pub fn oversized_detail(oversized: &OversizedName) -> String {
    format!(
        "a key under redlock's reserved prefix whose name is {} bytes, too long to read (a \
         reply holds at most {} bytes): it names no lock redlock can read",
        oversized.len,
        crate::lock::MAX_REPLY_BYTES
    )
}

/// How much of an oversized name a report shows: enough to find it with a SCAN pattern.
const OVERSIZED_SHOWN: usize = 60;

/// The start of an oversized name, as a report shows it (whole characters).
pub fn oversized_start(oversized: &OversizedName) -> String {
    String::from_utf8_lossy(&oversized.start)
        .trim_end_matches('\u{fffd}')
        .chars()
        .take(OVERSIZED_SHOWN)
        .collect()
}

/// `text` as a SCAN pattern that matches it literally (`*?[]\` escaped).
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whole seconds from a second up.
pub(super) fn rounded(d: Duration) -> humantime::FormattedDuration {
    let d = if d >= Duration::from_secs(1) {
        Duration::from_secs(d.as_secs())
    } else {
        Duration::from_millis(d.as_millis() as u64)
    };
    humantime::format_duration(d)
}

/// A `Malformed` finding for key `name`, `whose` (`readers key of shared lock "k"`), of type
/// `kind`, not `wanted` (`a hash`): written by something else, so `fails` (who fails there).
pub(super) fn wrong_type(
    push: &mut impl FnMut(Kind, String, String, String),
    name: String,
    (whose, kind, wanted): (&str, &str, &str),
    fails: &str,
) {
    push(
        Kind::Malformed,
        name.clone(),
        format!(
            "{whose} is a {}, not {wanted} (written by something other than redlock): {fails}",
            escape::visible(kind)
        ),
        format!(
            "find what wrote it; if nothing needs it, delete it on that master: DEL {}",
            quote(&name)
        ),
    );
}

/// Single-quotes `text` for a shell (`redis-cli ... DEL '...'`), escaped (see
/// `crate::escape`) so that the advice stays one line and shows what is there.
pub fn quote(text: &str) -> String {
    format!("'{}'", escape::visible(text).replace('\'', r"'\''"))
}

mod readers;
mod slots;

#[cfg(test)]
mod tests;
