//! One request on a pipe, as a future: queued on its first poll, in the caller's order, never
//! withdrawn once queued (see `pipe`, rules 1 and 2).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use super::super::resp::Reply;
use super::{Answer, Pipe};

/// One request on a pipe; see the module rules for what happens when it is dropped. Like any
/// future, it must not be polled again once it returned its answer.
pub struct Request<'p, E> {
    pub(super) pipe: &'p Pipe,
    pub(super) encode: Option<E>,
    /// Its number on the pipe, once queued.
    pub(super) number: Option<u64>,
}

impl<E: FnOnce(&mut Vec<u8>) + Unpin> Future for Request<'_, E> {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let mut state = self.pipe.lock();
        let number = match self.number {
            Some(number) => number,
            None => {
                if let Some(why) = &state.broken {
                    return Poll::Ready(Err(why.clone()));
                }
                if state.is_flushed() {
                    // A backlog starts now: the stall clock counts from here.
                    state.moved_at = Instant::now();
                }
                let encode = self.encode.take().expect("a request is encoded once");
                let number = state.enqueue(encode);
                self.number = Some(number);
                number
            }
        };
        state.make_progress(cx);
        let slot = state.slot(number);
        let result = match slot.answer.take() {
            Some(answer) => {
                slot.done = true;
                state.trim();
                // Collected: nothing is left for `drop` to do.
                self.number = None;
                Poll::Ready(answer)
            }
            None => {
                match &mut slot.waker {
                    Some(waker) => waker.clone_from(cx.waker()),
                    None => slot.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        };
        let successor = if result.is_ready() {
            state.successor()
        } else {
            None
        };
        drop(state);
        if let Some(waker) = successor {
            waker.wake();
        }
        result
    }
}

impl<E> Drop for Request<'_, E> {
    fn drop(&mut self) {
        let Some(number) = self.number else {
            return; // never queued: nothing was sent
        };
        let mut state = self.pipe.lock();
        let slot = state.slot(number);
        slot.done = true;
        slot.waker = None;
        // Arrived while its caller was deciding to leave: as unwanted as one that comes later.
        if let Some(Ok(Reply::Error(refused))) = slot.answer.take() {
            state.unwanted_error = Some(refused);
        }
        state.trim();
        let successor = state.successor();
        drop(state);
        if let Some(waker) = successor {
            waker.wake();
        }
    }
}
