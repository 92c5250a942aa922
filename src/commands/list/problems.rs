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
//!   deleted or replaced the key; the readers' shares no longer keep writers out there.
//! - **A queued waiter whose lease lapsed by the master's clock**: it stopped heartbeating
//!   (killed, stopped, cut off), so it no longer waits.
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
use crate::lock::{FoundLock, LockRead, SHARED_MARKER, StrayKey, Ttl, keys};

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
        self.add(vec![Problem {
            kind: Kind::NoTtl,
            master: stray.master,
            lock: None,
            name: stray.name.clone(),
            detail: "a key under redlock's reserved prefix that this redlock does not write or \
                     read, without a TTL: it never expires"
                .into(),
            action: format!(
                "find out what wrote it; if nothing needs it, delete it on that master: DEL {}",
                quote(&stray.name)
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
    readers_in_lock(key, read, &mut push);
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

/// The findings about a shared lock's readers keys (see the module header).
fn readers_in_lock(
    key: &str,
    read: &LockRead,
    push: &mut impl FnMut(Kind, String, String, String),
) {
    let shown = escape::quoted(key);
    let readers = keys::readers(key);
    let pairs = [
        ("readers", readers.clone(), read.readers.ttl),
        (
            "reader records",
            keys::reader_holders(key),
            read.readers.holders_ttl,
        ),
    ];
    for (what, name, ttl) in pairs {
        if ttl == Some(Ttl::Forever) {
            push(
                Kind::NoTtl,
                name.clone(),
                format!("{what} key of shared lock {shown} without a TTL: it never expires"),
                format!(
                    "once no reader holds lock {shown} (redlock status --key {}), delete it on \
                     that master: DEL {}",
                    quote(key),
                    quote(&name)
                ),
            );
        }
    }
    let marked = read.token.as_deref() == Some(SHARED_MARKER);
    if read.readers.live > 0 && !marked {
        push(
            Kind::StaleReaders,
            readers.clone(),
            format!(
                "{} of shared lock {shown} while its lock key does not hold the readers' marker \
                 (deleted or replaced by something other than redlock): their shares do not \
                 keep writers out on this master",
                crate::plural::counted(read.readers.live as usize, "live reader")
            ),
            format!(
                "find what deleted or wrote {}; the shares expire by themselves; to remove them \
                 now, on that master: DEL {}",
                quote(key),
                quote(&readers)
            ),
        );
    }
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

/// Single-quotes `text` for a shell (`redis-cli ... DEL '...'`), escaped (see
/// `crate::escape`) so that the advice stays one line and shows what is there.
pub fn quote(text: &str) -> String {
    format!("'{}'", escape::visible(text).replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests;
