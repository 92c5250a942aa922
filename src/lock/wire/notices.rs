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
//! 1. **One connection path.** A subscription is a connection of its own per master (a
//!    subscribed connection can send nothing else), opened and logged in by `node` exactly
//!    like the connection that carries requests, and read by the same pipe and decoder under
//!    the same caps (see `Node::subscribe`). On a cluster it is sharded (SSUBSCRIBE), on the
//!    node that owns the key's slot, where the release script publishes (see `cluster`).
//! 2. **A notice is a wake-up, not a message.** The pipe keeps of all messages that arrived
//!    one flag (see `pipe`, "Pushes coalesce"), and [`Notices::next`] clears every master's
//!    flag at once: a release announced by five masters, or a flood of messages on the
//!    channel, wakes the waiter once per look and costs no memory.
//! 3. **Nothing outlives the wait.** There is no task: the subscribed connections are read
//!    only while the waiter polls [`Notices::next`] (between polls, what arrives waits in the
//!    socket, and a master that would buffer too much for us disconnects us by its
//!    `client-output-buffer-limit`; the backoff covers that). Dropping [`Notices`] closes the
//!    connections, which ends the subscriptions on the masters.

use std::future::poll_fn;
use std::task::Poll;
use std::time::Instant;

use futures_util::future::join_all;

use super::endpoint::Endpoint;
use super::pipe::Pipe;

/// Subscriptions to one waiter's wake channel on the masters that accepted one (or, for a
/// watcher, to several channels; the default: none).
#[derive(Default)]
pub struct Notices {
    /// One subscribed connection per master that confirmed; a broken one is dropped.
    subscriptions: Vec<Pipe>,
}

impl Notices {
    /// Subscribes on `nodes` at once; a master that does not confirm before `deadline` is
    /// left out (its notices are missed, the backoff covers them).
    pub(crate) async fn subscribe<'a>(
        nodes: impl IntoIterator<Item = &'a Endpoint>,
        channel: &str,
        deadline: Instant,
    ) -> Notices {
        Notices::subscribe_each(nodes, &[channel], deadline).await
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
            match subscribed.await {
                Ok(Ok(pipe)) => Some(pipe),
                Ok(Err(error)) => {
                    log::debug!("no release notices from {}: {error}", node.master);
                    None
                }
                Err(_) => {
                    log::debug!("no release notices from {}: timed out", node.master);
                    None
                }
            }
        });
        let subscriptions = join_all(subscriptions)
            .await
            .into_iter()
            .flatten()
            .collect();
        Notices { subscriptions }
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
            self.subscriptions.retain(|pipe| match pipe.poll_push(cx) {
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
