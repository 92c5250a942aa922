//! Release notices: how a waiter learns at once that a lock was released.
//!
//! Waiting by polling alone makes a hand-off cost half a retry interval on average. Instead,
//! the release script publishes on a channel per key (see `keys::released_channel`), and a waiter
//! subscribes to that channel on every master and tries again as soon as one notice arrives.
//! Notices are best effort (Redis pub/sub delivers at most once, and a lock that expires by
//! its TTL publishes nothing), so the jittered backoff stays as the fallback.

use std::time::Instant;

use futures_util::StreamExt;
use futures_util::future::join_all;
use tokio::sync::mpsc;

use super::node::Node;

/// Subscriptions to the release channel of one key on every master that accepted one.
pub struct Notices {
    arrivals: mpsc::UnboundedReceiver<()>,
    /// How many masters we are subscribed on (0: only the backoff is left).
    pub subscribed: usize,
}

impl Notices {
    /// Subscribes on all masters at once; a master that does not confirm before `deadline` is
    /// left out (its notices are missed, the backoff covers them).
    pub(crate) async fn subscribe(nodes: &[Node], key: &str, deadline: Instant) -> Notices {
        let (sender, arrivals) = mpsc::unbounded_channel();
        let channel = super::keys::released_channel(key);
        let subscriptions = nodes.iter().map(|node| {
            let channel = channel.clone();
            let sender = sender.clone();
            async move {
                let subscribed = tokio::time::timeout_at(deadline.into(), async {
                    let mut pubsub = node.pubsub().await.ok()?;
                    pubsub.subscribe(&channel).await.ok()?;
                    Some(pubsub)
                })
                .await
                .ok()
                .flatten();
                let pubsub = subscribed?;
                // Runs while the waiter waits (inside its requests to the runtime) and ends
                // with the process.
                tokio::spawn(async move {
                    let mut messages = pubsub.into_on_message();
                    while messages.next().await.is_some() {
                        if sender.send(()).is_err() {
                            break;
                        }
                    }
                });
                Some(())
            }
        });
        let subscribed = join_all(subscriptions).await.into_iter().flatten().count();
        Notices {
            arrivals,
            subscribed,
        }
    }

    /// Waits for the next notice (forever when subscribed nowhere), then swallows the copies
    /// that other masters sent for the same release.
    pub async fn next(&mut self) {
        if self.subscribed == 0 || self.arrivals.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
        while self.arrivals.try_recv().is_ok() {}
    }
}
