//! One subscription to release notices on one master, on whichever connection the master
//! allows (see `Node::listen`): the kept connection, which carries the waiter's requests too,
//! where the master speaks RESP3; else a connection of its own, as RESP2 requires (a
//! subscribed RESP2 connection can send nothing else).
//!
//! On the kept connection the subscription shares the connection's fate: when it breaks, the
//! subscription ends with it and is not made again on the next connection (the waiter's
//! heartbeat covers the notices it misses, as for any lost notice). Dropping a subscription
//! ends it: a connection of its own is closed; on the kept one, UNSUBSCRIBE is queued behind
//! whatever is there (it goes out with the next request), the pipe stops listening at once
//! (a message still on its way is dropped, see `pipe`, "Pushes coalesce"), and the
//! connection is free for the next subscription.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use super::pipe::{Broken, Pipe};
use super::resp;

/// Where a master sends a waiter its release notices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carrier {
    /// On the connection that carries the waiter's requests (RESP3 pushes).
    Kept,
    /// On a connection of its own (RESP2: the master has no `HELLO 3`, or refused it).
    Own,
}

/// A live subscription (see the module header).
pub(crate) enum Subscription {
    /// Boxed: a pipe is large, and a waiter holds a handful of these.
    Own(Box<Pipe>),
    Kept(Kept),
}

/// A subscription on a kept connection.
pub(crate) struct Kept {
    pub(super) pipe: Arc<Pipe>,
    /// The connection's "a subscription is on me" flag, cleared when this one ends.
    pub(super) taken: Arc<AtomicBool>,
    /// UNSUBSCRIBE or SUNSUBSCRIBE.
    pub(super) unsubscribe: &'static [u8],
    pub(super) channel: String,
}

impl Subscription {
    /// Which connection carries it.
    pub fn carrier(&self) -> Carrier {
        match self {
            Subscription::Own(_) => Carrier::Own,
            Subscription::Kept(_) => Carrier::Kept,
        }
    }

    /// See `Pipe::poll_push`.
    pub fn poll_push(&self, cx: &mut Context<'_>) -> Poll<Result<(), Broken>> {
        match self {
            Subscription::Own(pipe) => pipe.poll_push(cx),
            Subscription::Kept(kept) => kept.pipe.poll_push(cx),
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.pipe.stop_listening();
        let (verb, channel) = (self.unsubscribe, self.channel.as_bytes());
        self.pipe
            .post(|out: &mut Vec<u8>| resp::encode(out, 2, [verb, channel]));
        self.taken.store(false, Ordering::SeqCst);
    }
}
