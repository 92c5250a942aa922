//! Release notices: how a waiter learns at once that a lock was released.
//!
//! Waiting by polling alone makes a hand-off cost half a retry interval on average. Instead,
//! every script that lets a waiter in on a master publishes on that waiter's own channel (see
//! `queue`, "Hand-off", and `keys::wake_channel`), and the waiter, subscribed to it on q
//! masters (see `queue::listen_on` for why that is enough), tries again as soon as one notice
//! arrives. Notices are best effort (Redis pub/sub delivers at most once, and a lock that
//! expires by its TTL publishes nothing), so a timer stays as the fallback (see `queue`, "No
//! wake-up is lost", for exactly when it is needed).
//!
//! The design, and what it keeps:
//! 1. **One connection path.** A waiter's subscription rides on the connection it keeps to
//!    the master for its turns and heartbeats, where the master speaks RESP3 (Redis 6 and
//!    later, Valkey): the notices come as pushes beside the replies, and cost the master no
//!    connection of their own (see `Node::listen`). A master without RESP3 (Redis 5) gets a
//!    connection of its own per subscription, as RESP2 requires (a subscribed RESP2
//!    connection can send nothing else), opened and logged in by `node` exactly like the
//!    connection that carries requests (see `Node::subscribe`); so does a watcher's each
//!    channel. Both are read by the same pipe and decoder under the same caps. On a cluster
//!    it is sharded (SSUBSCRIBE), on the node that owns the key's slot, where the release
//!    script publishes (see `cluster`).
//! 2. **A notice is a wake-up, not a message.** The pipe keeps of all messages that arrived
//!    one flag (see `pipe`, "Pushes coalesce"), and [`Notices::next`] clears every master's
//!    flag at once: a release announced by five masters, or a flood of messages on the
//!    channel, wakes the waiter once per look and costs no memory.
//! 3. **Nothing outlives the wait.** There is no task: the subscribed connections are read
//!    only while the waiter polls [`Notices::next`] or sends a request on the kept one
//!    (between polls, what arrives waits in the socket, and a master that would buffer too
//!    much for us disconnects us by its `client-output-buffer-limit`; the backoff covers
//!    that). Dropping [`Notices`] ends the subscriptions on the masters: a connection of
//!    their own is closed, the kept one is sent UNSUBSCRIBE (see `subscription`).

use std::future::poll_fn;
use std::task::Poll;
use std::time::Instant;

use futures_util::future::join_all;

use super::endpoint::Endpoint;
use super::subscription::{Carrier, Subscription};

/// Subscriptions to one waiter's wake channel on the masters that accepted one (or, for a
/// watcher, to several channels; the default: none).
#[derive(Default)]
pub struct Notices {
    /// One subscription per master that confirmed; a broken one is dropped.
    subscriptions: Vec<Subscription>,
}

impl Notices {
    /// Subscribes on `nodes` at once, each on the kept connection where the master allows it
    /// (see `Endpoint::listen`); a master that does not confirm before `deadline` is left out
    /// (its notices are missed, the backoff covers them).
    pub(crate) async fn subscribe<'a>(
        nodes: impl IntoIterator<Item = &'a Endpoint>,
        channel: &str,
        deadline: Instant,
    ) -> Notices {
        let subscriptions = nodes.into_iter().map(|node| async move {
            let listened = tokio::time::timeout_at(deadline.into(), node.listen(channel)).await;
            confirmed(node, listened.map_err(|_| ()))
        });
        Notices::of(join_all(subscriptions).await)
    }

    /// Subscribes to every channel of `channels` on every node of `nodes` at once, each on a
    /// connection of its own (see `Node::subscribe`); what is not confirmed before `deadline`
    /// is left out, as in [`Notices::subscribe`]. A watcher (`watch`) listens this way to a
    /// key's release channel and to the wake channels of its next waiters.
    pub(crate) async fn subscribe_each<'a>(
        nodes: impl IntoIterator<Item = &'a Endpoint>,
        channels: &[&str],
        deadline: Instant,
    ) -> Notices {
        let pairs: Vec<(&Endpoint, &str)> = nodes
            .into_iter()
            .flat_map(|node| channels.iter().map(move |channel| (node, *channel)))
            .collect();
        let subscriptions = pairs.into_iter().map(|(node, channel)| async move {
            let subscribed = tokio::time::timeout_at(deadline.into(), node.subscribe(channel));
            let subscribed = subscribed
                .await
                .map(|own| own.map(|pipe| Subscription::Own(Box::new(pipe))));
            confirmed(node, subscribed.map_err(|_| ()))
        });
        Notices::of(join_all(subscriptions).await)
    }

    fn of(subscriptions: Vec<Option<Subscription>>) -> Notices {
        Notices {
            subscriptions: subscriptions.into_iter().flatten().collect(),
        }
    }

    /// How many of the live subscriptions ride on a kept connection (see `Node::listen`).
    pub fn on_kept_connections(&self) -> usize {
        let kept = |s: &&Subscription| s.carrier() == Carrier::Kept;
        self.subscriptions.iter().filter(kept).count()
    }

    /// How many subscriptions are live: masters for [`Notices::subscribe`], masters times
    /// channels for [`Notices::subscribe_each`] (0: only the backoff is left).
    pub fn subscribed(&self) -> usize {
        self.subscriptions.len()
    }

    /// Waits until a notice arrived on any master since the last call (forever when
    /// subscribed nowhere). The copies other masters sent of the same release, and anything
    /// else that arrived meanwhile, are taken with it.
    pub async fn next(&mut self) {
        poll_fn(|cx| {
            let mut arrived = false;
            // Every subscription is polled, also after one is found ready: each poll moves its
            // connection and clears its flag.
            self.subscriptions
                .retain(|subscription| match subscription.poll_push(cx) {
                    Poll::Ready(Ok(())) => {
                        arrived = true;
                        true
                    }
                    Poll::Ready(Err(broken)) => {
                        log::debug!("a release notice subscription ended: {broken}");
                        false
                    }
                    Poll::Pending => true,
                });
            if arrived {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// The subscription `node` confirmed, or `None`, logged (`Err(())`: the deadline passed).
fn confirmed(
    node: &Endpoint,
    subscribed: Result<Result<Subscription, super::node::NodeError>, ()>,
) -> Option<Subscription> {
    match subscribed {
        Ok(Ok(subscription)) => Some(subscription),
        Ok(Err(error)) => {
            log::debug!("no release notices from {}: {error}", node.master);
            None
        }
        Err(()) => {
            log::debug!("no release notices from {}: timed out", node.master);
            None
        }
    }
}
