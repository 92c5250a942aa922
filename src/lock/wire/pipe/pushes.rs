//! A pipe that listens for pub/sub messages (a subscribed connection, see `notices`): a reply
//! that answers no request is a message, and of all messages the pipe keeps one flag,
//! "something arrived since you last looked", so that a flood costs time, never memory.

use std::task::{Context, Poll, Waker};

use super::super::resp::Reply;
use super::{Broken, Pipe, State};

/// Pushes that arrived, coalesced: whether any did since the listener last looked.
#[derive(Default)]
pub(super) struct Pushes {
    arrived: bool,
    pub(super) waker: Option<Waker>,
}

impl Pipe {
    /// From now on, a reply that answers no request is a pub/sub message (see the module
    /// rules). Call it before sending the SUBSCRIBE, whose own answer is a reply like any other.
    pub fn listen(&self) {
        self.lock().pushes.get_or_insert_with(Pushes::default);
    }

    /// No longer listening (a subscription on a kept connection ended, see `Node::listen`):
    /// a message still on its way is dropped, and the listener no longer moves the pipe.
    pub fn stop_listening(&self) {
        self.lock().pushes = None;
    }

    /// Moves the pipe, and is ready once a pub/sub message arrived since the last time it was
    /// (however many did); fails once the connection broke (after reporting a message that
    /// arrived before). Only for a pipe that [`listen`](Pipe::listen)s, polled by one task.
    pub fn poll_push(&self, cx: &mut Context<'_>) -> Poll<Result<(), Broken>> {
        let mut state = self.lock();
        state.make_progress(cx);
        let pushes = state.pushes.get_or_insert_with(Pushes::default);
        if std::mem::take(&mut pushes.arrived) {
            return Poll::Ready(Ok(()));
        }
        match &mut pushes.waker {
            Some(waker) => waker.clone_from(cx.waker()),
            None => pushes.waker = Some(cx.waker().clone()),
        }
        match &state.broken {
            Some(why) => Poll::Ready(Err(why.clone())),
            None => Poll::Pending,
        }
    }
}

impl State {
    /// Notes a RESP2 pub/sub message (`["message" or "smessage", channel, payload]`): a reply
    /// that answers no request, on a pipe that listens. Anything else is a protocol error.
    pub(super) fn push(&mut self, reply: Reply) -> Result<(), Broken> {
        if self.pushes.is_none() {
            return Err(Broken::BadReply(
                "the master answered a request that was never sent".into(),
            ));
        }
        let is_message = matches!(&reply, Reply::Array(items)
            if items.len() == 3 && matches!(items[0].bulk(), Some(b"message" | b"smessage")));
        if !is_message {
            return Err(Broken::BadReply(
                "a subscribed connection received something other than a message".into(),
            ));
        }
        self.message();
        Ok(())
    }

    /// A SUBSCRIBE was confirmed: what arrived before it was for another channel (rule 7).
    pub(super) fn subscribed(&mut self) {
        if let Some(pushes) = &mut self.pushes {
            pushes.arrived = false;
        }
    }

    /// Notes a message, waking the listener the first time since it last looked; nothing of
    /// the message is kept. Dropped on a pipe that does not listen (any more).
    pub(super) fn message(&mut self) {
        let Some(pushes) = &mut self.pushes else {
            return;
        };
        if !pushes.arrived {
            pushes.arrived = true;
            if let Some(waker) = &pushes.waker {
                waker.wake_by_ref();
            }
        }
    }
}
