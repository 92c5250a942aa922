//! Watching one key: a [`Change`] each time who holds it changes (`status --watch`), driven by
//! the notices the masters already publish, with reads as the fallback.
//!
//! # What drives a read
//! The watch learns nothing from a notice but "read now": the state it reports is always a
//! read of every master, judged as `status` judges it (`observe`). Reads happen:
//! 1. **On a notice.** The watch subscribes (`Notices::subscribe_each`) to the key's release
//!    channel (`keys::released_channel`: a release with nobody waiting, the last reader's
//!    release, a slot's, a `release --force` that revoked) and to the wake channels of the first `observe::WAITERS_LISTENED` waiters in
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
//! between two reads (taken from a free key and released within [`FALLBACK`] while nobody
//! waited), whether or not its release notice arrived: the notice only starts a read, which
//! finds the key as it was before the take. Reads see states, not the steps between them.
//!
//! # Never twice
//! A line is said only for a difference between a read and what was said before, and saying
//! it records it (`Reported::update`): a holder is taken once and gone once, a class (split,
//! unknown) is said on entering it, a master is said down once per outage and up once when it
//! answers again. So no state is said twice, however often it is read. A read that may have
//! caught a change halfway is read again ([`SETTLE`]) before it is said: contenders racing,
//! and a release or hand-off that has reached some masters and not yet others, look split
//! for a round trip (or unknown, with a master down: two that answered disagree, and the
//! third could tip it either way).
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

use crate::lock::read::key::state::Seen;
use changes::{Change, Observation, Reported};
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

/// The pauses before a read that looks caught halfway is read again, and said only if it
/// stays so (see "Never twice", and [`halfway`]).
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
    let mut why = Why::Start;
    loop {
        log::debug!("watching {key:?}: a read after {why}");
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
            why = Why::Subscribed;
            continue;
        }
        let now = Instant::now();
        let (mut next, mut timer) = (now + FALLBACK, Why::Fallback);
        if let Some(at) = reported.first_expiry().filter(|at| *at > now)
            && at + EXPIRY_MARGIN < next
        {
            (next, timer) = (at + EXPIRY_MARGIN, Why::Expiry);
        }
        if let Some(delay) = follow_up.and_then(|i| FOLLOW_UP.get(i))
            && now + *delay < next
        {
            (next, timer) = (now + *delay, Why::FollowUp);
        }
        why = tokio::select! {
            () = listening.notices.next() => {
                follow_up = Some(0);
                Why::Notice
            }
            () = tokio::time::sleep_until(next.into()) => {
                follow_up = follow_up.map(|i| i + 1).filter(|i| *i < FOLLOW_UP.len());
                timer
            }
            () = &mut stop => return,
        };
    }
}

/// What started a read (said with `-vv`, as a waiter's turns say theirs).
#[derive(Clone, Copy, Debug)]
enum Why {
    Start,
    Notice,
    FollowUp,
    Expiry,
    Fallback,
    Subscribed,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Why::Start => "the start",
            Why::Notice => "a notice",
            Why::FollowUp => "a notice, following up",
            Why::Expiry => "a holder's TTL could run out",
            Why::Fallback => "the fallback timer",
            Why::Subscribed => "new subscriptions",
        })
    }
}

/// A read, read again while it looks like a change caught halfway (see [`SETTLE`]).
async fn settled(masters: &Masters, key: &str, node_timeout: Duration) -> Read {
    let mut read = observe(masters, key, node_timeout).await;
    for pause in SETTLE {
        if !halfway(&read.observation) {
            break;
        }
        tokio::time::sleep(pause).await;
        read = observe(masters, key, node_timeout).await;
    }
    read
}

/// Whether a read may have caught a change on some masters and not yet on others: split, or
/// unknown although fewer than a majority of masters failed to answer (those that answered
/// disagree: a release on its way, with a master down). Unknown because a majority did not
/// answer is no such moment, and is said at once.
fn halfway(read: &Observation) -> bool {
    let failed = read.masters.iter().filter(|(_, e)| e.is_some()).count();
    match read.seen {
        Seen::Split => true,
        Seen::Unknown => failed < read.masters.len() / 2 + 1,
        Seen::Free | Seen::Held(_) | Seen::Revoked(_) => false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::wire::master::Master;
    use crate::lock::wire::node::NodeError;

    fn read(seen: Seen, failed: usize) -> Observation {
        let masters = (1..=3)
            .map(|port| {
                let master = Master::parse(&format!("redis://127.0.0.1:{port}")).unwrap();
                (master, (port <= failed).then_some(NodeError::Timeout))
            })
            .collect();
        let at = Instant::now();
        Observation {
            seen,
            masters,
            at,
            done: at,
        }
    }

    #[test]
    fn a_read_that_may_have_caught_a_change_halfway_is_read_again() {
        assert!(halfway(&read(Seen::Split, 0)));
        // Two answered and disagree; the third could tip it either way: a release on its way.
        assert!(halfway(&read(Seen::Unknown, 1)));
        // A majority did not answer: unknown for as long as it does not.
        assert!(!halfway(&read(Seen::Unknown, 2)));
        assert!(!halfway(&read(Seen::Free, 1)));
    }
}
