//! Watching one key: a [`Change`] each time who holds it changes (`status --watch`), driven by
//! the notices the masters already publish, with reads as the fallback.
//!
//! # What drives a read
//! The watch learns nothing from a notice but "read now": the state it reports is always a
//! read of every master, judged as `status` judges it (`observe`). Reads happen:
//! 1. **On a notice.** The watch subscribes (`Notices::subscribe_each`) to the key's release
//!    channel (`keys::released_channel`: a release with nobody waiting, the last reader's
//!    release, a slot's) and to the wake channels of the first `observe::WAITERS_LISTENED` waiters in
//!    line (`keys::wake_channel`: a release with waiters wakes the first of them, on its own
//!    channel; pub/sub delivers to every subscriber, so the watcher hears it too, and the
//!    waiter loses nothing). No script announces a take, so after a notice the watch reads
//!    again a few times ([`FOLLOW_UP`]): a woken waiter takes the lock within its round trip.
//! 2. **When a holder's TTL can run out.** An expiry publishes nothing (without keyspace
//!    notifications, which are off by default), and a holder killed by SIGKILL leaves its key
//!    to expire. Each read records, per holder, the earliest its TTL can run out (the read's
//!    start plus the TTL it read: the TTL was read after that start), and the watch reads
//!    again then ([`Reported::first_expiry`]).
//! 3. **Every [`FALLBACK`]**, whatever else happens: a take from a free key (no notice), a
//!    notice lost (Redis pub/sub is at most once; a subscription that broke, or one that a
//!    master that was down could not confirm), a hand-off to a waiter further back than those
//!    listened to, a reader or a slot holder joining others.
//!
//! # Nothing is missed
//! A change of holder that lasts until the next read is reported by that read: every read
//! compares the whole judged state (every holder, the verdict's class, each master's answer)
//! with what was said (`changes::Reported`), whatever started it, and the next read is at most
//! [`FALLBACK`] away. The subscriptions are made *before* the read that relies on them: when
//! the waiters in line change, the watch subscribes to their wake channels and then reads at
//! once, so a hand-off announced before the subscription is in that read, and one announced
//! after it wakes the watch. What no watcher can promise is a holder that came and went
//! between two reads without a notice (taken and released within [`FALLBACK`] while nobody
//! waited and the release notice was lost): reads see states, not the steps between them.
//!
//! # Never twice
//! A line is said only for a difference between a read and what was said before, and saying
//! it records it (`Reported::update`): a holder is taken once and gone once, a class (split,
//! unknown) is said on entering it, a master is said down once per outage and up once when it
//! answers again. So no state is said twice, however often it is read. A split is read again
//! ([`SETTLE`]) before it is said: contenders racing, and a hand-off that has reached some
//! masters and not yet others, look split for a round trip.
//!
//! # It keeps going
//! A master that does not answer is said down (once), and the watch goes on with the others;
//! when too few answer to judge, the state is said to be unknown (once), the holders said
//! stay said, and the first read that can judge again reports what changed meanwhile (or the
//! state, when nothing did). Only the caller ends a watch: `stop`, or its answer to a line.

pub(in crate::lock) mod changes;
mod observe;

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::pin;
use std::time::{Duration, Instant};

use changes::{Change, Observation, Reported, Seen};
use observe::{Read, observe};

use crate::lock::quorum::round::Masters;
use crate::lock::scripts::keys;
use crate::lock::wire::notices::Notices;

/// The longest between two reads.
pub const FALLBACK: Duration = Duration::from_secs(1);

/// The reads after a notice, each this long after the one before: a woken waiter's take, which
/// nothing announces, follows the notice by its round trip.
const FOLLOW_UP: [Duration; 3] = [
    Duration::from_millis(20),
    Duration::from_millis(100),
    Duration::from_millis(400),
];

/// How long a split read is read again before it is said (see "Never twice").
const SETTLE: [Duration; 3] = [
    Duration::from_millis(10),
    Duration::from_millis(50),
    Duration::from_millis(200),
];

/// Read this long after a TTL can run out: the master's clock may run a little behind ours.
const EXPIRY_MARGIN: Duration = Duration::from_millis(5);

/// How often subscriptions that some master did not confirm (it was down) are made again.
const RESUBSCRIBE: Duration = Duration::from_secs(5);

/// Watches `key` until `stop` completes or `say` breaks, calling `say` with each change and
/// the read it comes from (see the module header).
pub(in crate::lock) async fn watch(
    masters: &Masters,
    key: &str,
    node_timeout: Duration,
    stop: impl Future<Output = ()>,
    mut say: impl FnMut(&Change, &Observation) -> ControlFlow<()>,
) {
    let mut stop = pin!(stop);
    let released = keys::released_channel(key);
    let mut listening = Listening::default();
    let mut reported = Reported::default();
    // The index into FOLLOW_UP of the next read after a notice; `None`: no notice pending.
    let mut follow_up: Option<usize> = None;
    // Listen first, so that the first read misses nothing announced after it.
    tokio::select! {
        () = listening.listen(masters, vec![released.clone()], node_timeout) => {}
        () = &mut stop => return,
    }
    loop {
        let read = tokio::select! {
            read = settled(masters, key, node_timeout) => read,
            () = &mut stop => return,
        };
        for change in reported.update(&read.observation, follow_up.is_some()) {
            if say(&change, &read.observation).is_break() {
                return;
            }
        }
        let mut wanted = vec![released.clone()];
        wanted.extend(
            read.next_waiters
                .iter()
                .map(|token| keys::wake_channel(key, token)),
        );
        if listening.is_stale(&wanted, masters.nodes.len()) {
            tokio::select! {
                () = listening.listen(masters, wanted, node_timeout) => {}
                () = &mut stop => return,
            }
            // What was announced before these subscriptions is in the next read.
            continue;
        }
        let now = Instant::now();
        let mut next = now + FALLBACK;
        if let Some(at) = reported.first_expiry().filter(|at| *at > now) {
            next = next.min(at + EXPIRY_MARGIN);
        }
        if let Some(delay) = follow_up.and_then(|i| FOLLOW_UP.get(i)) {
            next = next.min(now + *delay);
        }
        tokio::select! {
            () = listening.notices.next() => follow_up = Some(0),
            () = tokio::time::sleep_until(next.into()) => {
                follow_up = follow_up.map(|i| i + 1).filter(|i| *i < FOLLOW_UP.len());
            }
            () = &mut stop => return,
        }
    }
}

/// A read, read again while it is split (see [`SETTLE`]).
async fn settled(masters: &Masters, key: &str, node_timeout: Duration) -> Read {
    let mut read = observe(masters, key, node_timeout).await;
    for pause in SETTLE {
        if read.observation.seen != Seen::Split {
            break;
        }
        tokio::time::sleep(pause).await;
        read = observe(masters, key, node_timeout).await;
    }
    read
}

/// The channels the watch listens on, and their subscriptions.
#[derive(Default)]
struct Listening {
    channels: Vec<String>,
    notices: Notices,
    /// When the subscriptions were last made.
    since: Option<Instant>,
}

impl Listening {
    /// Whether to subscribe again: other channels are wanted, or some subscription is missing
    /// (a master did not confirm, or one broke) and [`RESUBSCRIBE`] has passed.
    fn is_stale(&self, wanted: &[String], masters: usize) -> bool {
        if self.channels != wanted {
            return true;
        }
        let missing = self.notices.subscribed() < masters * wanted.len();
        missing
            && self
                .since
                .is_none_or(|since| since.elapsed() >= RESUBSCRIBE)
    }

    /// Subscribes to `channels` on every master, in place of the subscriptions before (which
    /// stay until the new ones are made, so that nothing falls between them).
    async fn listen(&mut self, masters: &Masters, channels: Vec<String>, timeout: Duration) {
        let names: Vec<&str> = channels.iter().map(String::as_str).collect();
        let deadline = Instant::now() + timeout;
        self.notices = Notices::subscribe_each(&masters.nodes, &names, deadline).await;
        self.channels = channels;
        self.since = Some(Instant::now());
    }
}
