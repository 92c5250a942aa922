//! The key layout: which Redis keys (and pub/sub channels) redlock uses for a lock named K.
//!
//! Two promises, both about names:
//!
//! 1. **No name a user can choose aliases one of redlock's own keys.** Everything redlock stores
//!    besides the lock key itself lives under [`RESERVED_PREFIX`], and a lock key that starts
//!    with it is refused ([`check_lock_key`], exit 64). The prefixes of the layout of earlier
//!    builds (`redlock:holder:`, `redlock:fence:`) are refused too: during a rolling upgrade older
//!    redlocks still write there, and fencing counters written there have no TTL. Without this, a
//!    lock named `redlock:holder:X` was overwritten by the holder record of lock `X`, and two
//!    processes ran at once.
//!
//!    Within the prefix, the name is `__redlock:{T}:<kind>:K`, where `T` contains no `}` and
//!    `<kind>` is one fixed word: reading a name back, `T` ends at the first `}`, the kind at
//!    the next `:`, and the rest is K. So each (kind, K) has exactly one name, and two locks
//!    never share an auxiliary key.
//!
//! 2. **Every key of lock K lives in K's Redis Cluster hash slot**, for any K, so that each
//!    script touches one slot and a whole cluster can serve as one master. A cluster hashes the
//!    *hash tag* of a key (the part between the first `{` and the next `}`, if not empty) or
//!    else the whole key. `T` is chosen to hash like K:
//!    - K has a hash tag: `T` is that tag (`{user1}.deploy` → `T` = `user1`);
//!    - K has none and contains no `}`: `T` is K itself;
//!    - K has none but contains a `}` (e.g. `a}b`, `{}x`): K cannot be wrapped in braces, so
//!      `T` is the smallest decimal number whose slot is K's slot.
//!
//! The lock key K itself holds only a random token, so other Redlock clients contending with
//! `SET K <token> NX PX <ttl>` interoperate.

pub use crate::lock::wire::cluster::hash_slot::key_slot;
use crate::lock::wire::cluster::hash_slot::{hash_tag, slot, tag_for_slot};

/// Everything redlock writes besides the lock key starts with this.
pub const RESERVED_PREFIX: &str = "__redlock:";

/// Where earlier builds of redlock kept its holder records and fencing counters; still refused as
/// lock keys (see the module header).
pub const LEGACY_PREFIXES: [&str; 2] = ["redlock:holder:", "redlock:fence:"];

/// Why a name cannot be a lock key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    Empty,
    /// The name starts with a prefix redlock keeps for its own keys.
    Reserved(&'static str),
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::Empty => f.write_str("the lock key must not be empty"),
            KeyError::Reserved(prefix) => write!(
                f,
                "lock keys starting with {prefix:?} are reserved for redlock's own records"
            ),
        }
    }
}

/// Whether `key` may name a lock.
pub fn check_lock_key(key: &str) -> Result<(), KeyError> {
    if key.is_empty() {
        return Err(KeyError::Empty);
    }
    if key.starts_with(RESERVED_PREFIX) {
        return Err(KeyError::Reserved(RESERVED_PREFIX));
    }
    match LEGACY_PREFIXES.iter().find(|p| key.starts_with(*p)) {
        Some(prefix) => Err(KeyError::Reserved(prefix)),
        None => Ok(()),
    }
}

/// The holder record of lock `key`: who holds it (JSON), with the lock's TTL.
pub fn holder(key: &str) -> String {
    auxiliary("holder", key)
}

/// The fencing counter of lock `key`: no TTL, it must outlive every lock.
pub fn fence(key: &str) -> String {
    auxiliary("fence", key)
}

/// The order register of lock `key` (`--order`, see `kinds::order`): the highest order that
/// took the lock, a decimal number. Its TTL is [`crate::lock::scripts::LONGEST_TTL_MS`], set
/// again by every run that takes the lock with the highest order: a register nobody raised
/// for a year and a day is gone, and with it the memory of which orders are outdated.
pub fn order(key: &str) -> String {
    auxiliary("order", key)
}

/// The waiting-line policy of lock `key` (`--supersede`, see `kinds::supersede`): the word
/// `supersede` while a line of superseding waiters lives, with the queue's TTL (written by
/// their every turn); absent for a first-come, first-served line.
pub fn policy(key: &str) -> String {
    auxiliary("policy", key)
}

/// The eviction marks of lock `key` (`--supersede`): a hash, field = the token of an evicted
/// waiter, value = its evictor's ticket and waiting record. Its TTL is the queue's, set again
/// at each eviction.
pub fn evicted(key: &str) -> String {
    auxiliary("evicted", key)
}

/// The history of lock `key` (see `scripts::history`): a list of its turns' events, newest
/// first, capped in entries and kept for `history::AGE` after its last write.
pub fn history(key: &str) -> String {
    auxiliary("history", key)
}

/// Where earlier builds of redlock kept the fencing counter of `key`. Read (never written) when
/// granting a token, so that numbers keep growing across the upgrade.
pub fn legacy_fence(key: &str) -> String {
    format!("redlock:fence:{key}")
}

/// The pub/sub channel a release of `key` is announced on. Channels are not keys, but sharded
/// pub/sub routes them by the same slots, so they follow the same layout.
pub fn released_channel(key: &str) -> String {
    auxiliary("released", key)
}

/// The slots of semaphore `key` (`--limit`): a sorted set, member = holder token, score = the
/// master's own time in ms at which that holder's slot expires. Its TTL covers its longest slot.
pub fn slots(key: &str) -> String {
    auxiliary("slots", key)
}

/// The limit L that the holders of semaphore `key` agreed on, with the TTL of its slots.
pub fn limit(key: &str) -> String {
    auxiliary("limit", key)
}

/// The holder records of semaphore `key`: a hash, field = holder token, value = the record
/// (JSON, as `holder`), with the TTL of its slots.
pub fn slot_holders(key: &str) -> String {
    auxiliary("holders", key)
}

/// The readers of shared lock `key` (`--shared`, see `shared`): a sorted set, member = reader
/// token, score = the master's own time in ms at which that reader's share expires. Its TTL
/// covers its longest share.
pub fn readers(key: &str) -> String {
    auxiliary("readers", key)
}

/// The holder records of the readers of `key`: a hash, field = reader token, value = the record
/// (JSON, as `holder`), with the TTL of the readers key.
pub fn reader_holders(key: &str) -> String {
    auxiliary("readerholders", key)
}

fn auxiliary(kind: &str, key: &str) -> String {
    tagged(&slot_tag(key), kind, key)
}

/// `__redlock:{tag}:kind:key`.
fn tagged(tag: &str, kind: &str, key: &str) -> String {
    let mut name =
        String::with_capacity(RESERVED_PREFIX.len() + tag.len() + kind.len() + key.len() + 4);
    name.push_str(RESERVED_PREFIX);
    name.push('{');
    name.push_str(tag);
    name.push_str("}:");
    name.push_str(kind);
    name.push(':');
    name.push_str(key);
    name
}

/// A string without `}` that a cluster hashes to the same slot as `key` (see the module header).
fn slot_tag(key: &str) -> std::borrow::Cow<'_, str> {
    if let Some(tag) = hash_tag(key) {
        return tag.into();
    }
    if !key.contains('}') {
        return key.into();
    }
    tag_for_slot(slot(key.as_bytes())).into()
}

/// The fair queue of lock `key` (see `queue`): a sorted set of waiters' tokens, scored by
/// ticket. Like every queue key below it has a TTL, refreshed by the waiters' heartbeats.
pub fn queue(key: &str) -> String {
    auxiliary("queue", key)
}

/// When each queued waiter's place lapses: a sorted set of tokens, scored by the master's own
/// time in milliseconds.
pub fn lease(key: &str) -> String {
    auxiliary("lease", key)
}

/// Who each queued waiter is: a hash from token to a holder record (JSON, `since_ms` = when it
/// started waiting).
pub fn waiters(key: &str) -> String {
    auxiliary("waiters", key)
}

/// The ticket counter of the fair queue: raised by every waiter that joins.
pub fn tickets(key: &str) -> String {
    auxiliary("tickets", key)
}

/// The channel on which the waiter holding `token` is told that its turn has come:
/// `__redlock:{T}:wake:<token>:K`. Tokens have a fixed length, so the name still reads back
/// unambiguously.
pub fn wake_channel(key: &str, token: &str) -> String {
    format!("{}{token}:{key}", wake_prefix(&slot_tag(key)))
}

/// `__redlock:{T}:wake:`, where a wake channel's token goes next.
fn wake_prefix(tag: &str) -> String {
    let mut prefix = tagged(tag, "wake", "");
    prefix.pop();
    prefix.push(':');
    prefix
}

/// Every name a lock's scripts touch, computed once per operation: the cheap way to pass a
/// dozen keys around (the slot tag of a key with a `}` but no hash tag costs a search).
pub struct Names {
    pub holder: String,
    pub queue: String,
    pub lease: String,
    pub waiters: String,
    pub tickets: String,
    /// A semaphore's keys of the same name: the lock refuses a key in use as a semaphore.
    pub slots: String,
    pub limit: String,
    /// A shared lock's readers and their records (`--shared`).
    pub readers: String,
    pub reader_holders: String,
    /// A semaphore's holder records.
    pub slot_holders: String,
    pub fence: String,
    /// The highest order that took the lock (`--order`).
    pub order: String,
    /// The line's policy and the eviction marks (`--supersede`).
    pub policy: String,
    pub evicted: String,
    /// The key's history (its turns, see `scripts::history`).
    pub history: String,
    pub wake_prefix: String,
    pub wake_suffix: String,
}

/// How much of [`Names::keys`] a script takes, named by the last key it reads: a script reads
/// KEYS up to its last, so each takes the first ones. Each script declares its own in the
/// script table (`scripts::calls`), and a test there checks it against the script's Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Through {
    /// No key (`list`'s PAGE, which scans).
    Nothing,
    /// K and its holder record (the lock's EXTEND).
    Holder,
    /// The lock's queue-aware scripts, through the readers (which refuse a writer; see
    /// `shared`).
    Readers,
    /// A reader's: and the readers' records.
    ReaderHolders,
    /// A slot's: and the slots' records.
    SlotHolders,
    /// Those that read the fencing counter (FENCE_PROPOSE).
    Fence,
    /// Those that read the order register (ORDER).
    Order,
    /// Those that read the line's policy (the lock's WAIT, a reader's READ_WAIT, INSPECT,
    /// `list`'s READ).
    Policy,
    /// Those that read the eviction marks too (the superseding WAIT_SUPERSEDE).
    Evicted,
    /// Those that write or read the key's history (the takes, releases, the force, the
    /// superseding turn, a waiter leaving, HISTORY): the whole layout.
    History,
}

impl Through {
    /// How many keys of the layout that is.
    pub const fn count(self) -> usize {
        match self {
            Through::Nothing => 0,
            Through::Holder => 2,
            Through::Readers => 9,
            Through::ReaderHolders => 10,
            Through::SlotHolders => 11,
            Through::Fence => 12,
            Through::Order => 13,
            Through::Policy => 14,
            Through::Evicted => 15,
            Through::History => 16,
        }
    }
}

/// How many keys the lock's queue-aware scripts take (see [`Through`]), for a client that
/// runs one by itself (redlock's own calls are declared in `scripts::calls`).
pub const LOCK_KEYS: usize = Through::Readers.count();
/// The whole layout.
pub const ALL_KEYS: usize = Through::History.count();

impl Names {
    pub fn of(key: &str) -> Names {
        let tag = slot_tag(key);
        let name = |kind: &str| tagged(&tag, kind, key);
        Names {
            holder: name("holder"),
            queue: name("queue"),
            lease: name("lease"),
            waiters: name("waiters"),
            tickets: name("tickets"),
            slots: name("slots"),
            limit: name("limit"),
            readers: name("readers"),
            reader_holders: name("readerholders"),
            slot_holders: name("holders"),
            fence: name("fence"),
            order: name("order"),
            policy: name("policy"),
            evicted: name("evicted"),
            history: name("history"),
            wake_prefix: wake_prefix(&tag),
            wake_suffix: format!(":{key}"),
        }
    }

    /// The KEYS of every script of lock `key`, built here alone, in one order with one meaning
    /// per position (as the Lua numbers them, from 1): 1 K, 2 its holder record, 3 the queue
    /// (token -> ticket), 4 the leases, 5 the waiters' records, 6 the ticket counter (see
    /// `scripts::queue`), 7 a semaphore's slots, 8 its limit (see `scripts::slots`), 9 a shared
    /// lock's readers, 10 their records (see `scripts::shared`), 11 the slots' records, 12 the
    /// fencing counter, 13 the order register, 14 the line's policy, 15 the eviction marks
    /// (see `scripts::supersede`), 16 the key's history (see `scripts::history`). A script takes the first ones, through the key its
    /// [`Through`] names.
    pub fn keys<'a>(&'a self, key: &'a str) -> [&'a str; ALL_KEYS] {
        [
            key,
            &self.holder,
            &self.queue,
            &self.lease,
            &self.waiters,
            &self.tickets,
            &self.slots,
            &self.limit,
            &self.readers,
            &self.reader_holders,
            &self.slot_holders,
            &self.fence,
            &self.order,
            &self.policy,
            &self.evicted,
            &self.history,
        ]
    }
}

/// Reads one of redlock's key names back: `(kind, lock key)` for `__redlock:{T}:<kind>:K`,
/// where `T` is the tag the layout gives K (so `parse(&holder(k)) == Some(("holder", k))` for
/// every K). `None` for any other name: not under the prefix, no tag, a kind that is not one
/// lower-case word, or a tag that is not K's (written by something else). The kind is not
/// checked against a list: a later build may add kinds, and they read back the same way.
pub fn parse(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(RESERVED_PREFIX)?.strip_prefix('{')?;
    // T contains no `}`: it ends at the first one.
    let (tag, rest) = rest.split_once('}')?;
    let (kind, key) = rest.strip_prefix(':')?.split_once(':')?;
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_lowercase()) || key.is_empty() {
        return None;
    }
    (slot_tag(key) == tag).then_some((kind, key))
}

#[cfg(test)]
mod tests;
