//! One connection to a master: requests go out in the order they are made, answers are matched
//! to them in that order, and the pipe can tell when everything queued is on the wire.
//!
//! Why a pipe of our own rather than a general-purpose multiplexed client: redlock's safety
//! rests on three properties that such a client leaves to chance, and the hot path (a handful
//! of tiny requests) should cost little more than the system calls it needs.
//!
//! 1. **Queued in the caller's order.** A request is appended to the outgoing buffer during
//!    the caller's own poll, so requests reach a master in the order the caller made them. That
//!    keeps a release from overtaking an acquire still pending on a slow or paused master: both
//!    travel the same connection, and the master runs them in order.
//! 2. **Never withdrawn.** Once queued, a request's bytes stay queued even when its caller stops
//!    waiting (a round decided without this master, or its deadline passed). They are written
//!    by whichever request uses the pipe next, ahead of it; the answer is read and dropped.
//! 3. **Proof of sending.** `is_flushed` is true once every byte queued so far is in the
//!    kernel's hands (for TLS: encrypted and handed over): it then reaches the master even if
//!    redlock exits now, and a paused master runs it when it wakes up. A master that stopped
//!    reading fills its socket buffers; `is_stalled` says so, so that callers stop waiting.
//! 4. **Bounded by what we asked.** Replies are decoded as they arrive (see `resp::Decoder`),
//!    in one pass over the bytes received, and a reply larger or deeper than any answer to our
//!    requests can be (`resp::MAX_REPLY_BYTES` and the other caps) breaks the pipe at once: the
//!    connection is closed and its buffers freed, so a master cannot make redlock hold more
//!    than about one capped reply per connection, whatever it sends.
//! 5. **A break says what it stranded.** When the connection breaks, the requests not yet
//!    answered of which some bytes went out may still reach the master and run there, after
//!    whatever goes on a new connection; [`Pipe::stranded`] says whether there were any, so
//!    that an undo can be sent again (see `undo`). Bytes never written never arrive, and a
//!    request whose reply had begun to arrive (cut short, or not a reply) has run already.
//! 6. **An unwanted refusal is kept.** The answer to a request nobody waits for any more is
//!    dropped, but if it is an error reply the latest one is kept ([`Pipe::take_unwanted_error`]):
//!    a round that decided without a master must still be able to learn that this master
//!    refused (a read-only replica answers every write with READONLY), and a later request on
//!    the same pipe is answered only after it, so its answer proves the refusal is in (see the
//!    lock's `late`). One reply at most, whatever the master sends.
//! 7. **Pushes coalesce.** A pipe that [`Pipe::listen`]s (a subscribed connection, see
//!    `notices`) takes a reply that answers no request as a pub/sub message, and keeps of all
//!    such messages one flag: "something arrived since you last looked". A flood of messages
//!    costs time, never memory. On any other pipe such a reply is a protocol error. On a
//!    connection that speaks RESP3 (a waiter's kept one, see `Node::listen`) a message is a
//!    push (`resp::Reply::Push`), told apart from the replies around it by its type and never
//!    taken for an answer: it sets the flag when the pipe listens and is dropped otherwise (a
//!    message that was on its way as the subscription ended). A subscription's confirmation
//!    is a push too, but it answers its request (SUBSCRIBE, UNSUBSCRIBE), in order with the
//!    replies; the flag is cleared when a SUBSCRIBE is confirmed, as no message of the new
//!    channel can come before its confirmation and what came before was for another.
//!
//! There is no background task: the pipe moves only while some request on it, or a listener
//! ([`Pipe::poll_push`]), is being polled. Every poll writes what it can, reads what arrived
//! and hands each answer to its request. The last poller is the one the runtime wakes when the
//! socket is ready, so a request that finishes or is dropped wakes another one still waiting,
//! which takes over.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::resp::{self, BadReply, Reply};
mod asking;
mod pushes;
mod request;
use pushes::Pushes;
pub use request::Request;

/// Any byte stream a pipe can run over (TCP, Unix socket, TLS).
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// What a request gets back: the master's reply (an error reply is a value too), or why the
/// connection broke.
pub type Answer = Result<Reply, Broken>;

/// Why a pipe can carry no more requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Broken {
    /// The connection failed, or the master closed it.
    Io(String),
    /// The master sent something that cannot be a reply to us (see `resp::BadReply`); the
    /// pipe closed the connection.
    BadReply(String),
    /// A TLS record came where a reply should be: the URL says `redis://`, the port speaks
    /// TLS. The pipe closed the connection.
    SpeaksTls,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Io(why) | Broken::BadReply(why) => f.write_str(why),
            Broken::SpeaksTls => f.write_str(resp::SPEAKS_TLS),
        }
    }
}

pub struct Pipe {
    state: Mutex<State>,
}

struct State {
    /// The connection; `None` once broken (dropping it closes the connection).
    stream: Option<Box<dyn Stream>>,
    /// Encoded requests; `outbox[written..]` has not been written yet.
    outbox: Vec<u8>,
    written: usize,
    /// Bytes handed to the stream that a `poll_flush` has not yet confirmed (TLS buffers).
    unflushed: bool,
    /// When writing last made progress, or when a backlog began on a flushed pipe.
    moved_at: Instant,
    /// Bytes read and not yet split into answers: the start of one unfinished reply, capped.
    inbox: Vec<u8>,
    /// Where that reply's decoding stopped, and what of it is decoded.
    decoder: resp::Decoder,
    /// Whether the master ever sent a byte on this connection.
    heard: bool,
    /// Where each read lands first; kept, so that it is zeroed once rather than per read.
    chunk: Box<[u8]>,
    /// One slot per request whose answer has not been collected, oldest first. `slots[i]`
    /// belongs to request number `first + i`.
    slots: VecDeque<Slot>,
    first: u64,
    /// How many answers have arrived since the pipe opened: the next one belongs to request
    /// number `answered`.
    answered: u64,
    /// Why the connection broke; every later request fails with it.
    broken: Option<Broken>,
    /// Bytes queued and bytes handed to the stream since the pipe opened, to tell which
    /// requests may have reached the master.
    queued: u64,
    sent: u64,
    /// The connection broke with a request unanswered of which some bytes were sent: the
    /// master may still run it, later than anything sent on a new connection (see `undo`).
    stranded: bool,
    /// For a pipe that listens for pushes (see [`Pipe::listen`]).
    pushes: Option<Pushes>,
    /// The latest error reply to a request that nobody waited for (rule 6).
    unwanted_error: Option<String>,
}

/// I/O happens only on a pipe that is not broken, and only a broken one has no stream.
const UNBROKEN: &str = "an unbroken pipe has its stream";

#[derive(Default)]
struct Slot {
    answer: Option<Answer>,
    waker: Option<Waker>,
    /// The request was collected or dropped: nobody wants the answer.
    done: bool,
    /// Where its bytes start in everything queued (`State::queued`).
    start: u64,
}

impl Pipe {
    pub fn new(stream: Box<dyn Stream>) -> Pipe {
        Pipe {
            state: Mutex::new(State {
                stream: Some(stream),
                outbox: Vec::with_capacity(1024),
                written: 0,
                unflushed: false,
                moved_at: Instant::now(),
                inbox: Vec::with_capacity(1024),
                decoder: resp::Decoder::default(),
                heard: false,
                chunk: vec![0; 4096].into_boxed_slice(),
                slots: VecDeque::new(),
                first: 0,
                answered: 0,
                broken: None,
                queued: 0,
                sent: 0,
                stranded: false,
                pushes: None,
                unwanted_error: None,
            }),
        }
    }

    /// Queues a request nobody waits for (its answer is read and dropped, rule 2), and hands
    /// its bytes to the stream at once if they are the only ones waiting to be written and the
    /// stream takes them; else they go out with whichever request is polled next. Nothing is
    /// queued on a broken pipe.
    pub fn post(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut state = self.lock();
        if state.broken.is_some() {
            return;
        }
        // Nothing else unwritten: no poller is waiting for the stream to take bytes, so a
        // write with a waker that wakes nobody displaces no one's (a poller waiting for an
        // answer waits on reading, which this does not touch).
        let idle = state.written == state.outbox.len();
        let number = state.enqueue(encode);
        state.slot(number).done = true;
        if idle {
            let mut cx = Context::from_waker(Waker::noop());
            if let Err(why) = state.write(&mut cx) {
                state.break_down(why);
            }
        }
    }

    /// A request whose bytes `encode` appends to the outgoing buffer on the first poll.
    pub fn request<E: FnOnce(&mut Vec<u8>)>(&self, encode: E) -> Request<'_, E> {
        Request {
            pipe: self,
            encode: Some(encode),
            number: None,
        }
    }

    /// True once the connection broke; nothing more can be sent on it.
    pub fn is_broken(&self) -> bool {
        self.lock().broken.is_some()
    }

    /// True when the connection broke with a request unanswered that had (partly) gone out:
    /// it may still reach the master and run there, after requests on another connection.
    pub fn stranded(&self) -> bool {
        self.lock().stranded
    }

    /// The latest error reply to a request whose caller had stopped waiting (rule 6), taken:
    /// a second call says `None` until another comes.
    pub fn take_unwanted_error(&self) -> Option<String> {
        self.lock().unwanted_error.take()
    }

    /// True while the master has not sent a single byte on this connection.
    pub fn heard_nothing(&self) -> bool {
        !self.lock().heard
    }

    /// True when every request queued so far is on the wire.
    pub fn is_flushed(&self) -> bool {
        self.lock().is_flushed()
    }

    /// True when bytes are waiting and the stream has taken none for `patience`: the master
    /// stopped reading (paused, or gone without closing) and its buffers are full.
    pub fn is_stalled(&self, patience: Duration) -> bool {
        let state = self.lock();
        !state.is_flushed() && state.moved_at.elapsed() > patience
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("pipe state poisoned")
    }
}

impl State {
    fn is_flushed(&self) -> bool {
        self.written == self.outbox.len() && !self.unflushed
    }

    fn slot(&mut self, number: u64) -> &mut Slot {
        &mut self.slots[(number - self.first) as usize]
    }

    /// Appends a request's bytes (written by `encode`) to the outgoing buffer and takes an
    /// answer slot for it; returns its number.
    fn enqueue(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> u64 {
        let start = self.queued;
        let before = self.outbox.len();
        encode(&mut self.outbox);
        self.queued += (self.outbox.len() - before) as u64;
        let number = self.first + self.slots.len() as u64;
        self.slots.push_back(Slot {
            start,
            ..Slot::default()
        });
        number
    }

    /// Writes what it can, reads what arrived, and hands out the answers, waking the requests
    /// that got one. (Waking under the lock is safe: a waker only schedules its task, it never
    /// polls it in place.)
    fn make_progress(&mut self, cx: &mut Context<'_>) {
        if self.broken.is_none() {
            // Read even when writing failed: what the master said before it closed counts
            // (an answer, or why it refused us: maxclients, protected mode).
            let wrote = self.write(cx);
            let read = self.read(cx);
            if let Err(why) = read.and(wrote) {
                self.break_down(why);
            }
        }
    }

    fn write(&mut self, cx: &mut Context<'_>) -> Result<(), Broken> {
        let failed = |e: std::io::Error| Broken::Io(e.to_string());
        while self.written < self.outbox.len() {
            let stream = self.stream.as_deref_mut().expect(UNBROKEN);
            match Pin::new(stream).poll_write(cx, &self.outbox[self.written..]) {
                Poll::Ready(Ok(0)) => {
                    return Err(Broken::Io("the connection stopped taking bytes".into()));
                }
                Poll::Ready(Ok(n)) => {
                    self.written += n;
                    self.sent += n as u64;
                    self.unflushed = true;
                    self.moved_at = Instant::now();
                }
                Poll::Ready(Err(e)) => return Err(failed(e)),
                Poll::Pending => return Ok(()),
            }
        }
        self.outbox.clear();
        self.written = 0;
        if self.unflushed {
            let stream = self.stream.as_deref_mut().expect(UNBROKEN);
            match Pin::new(stream).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => return Err(failed(e)),
                Poll::Pending => {}
            }
        }
        Ok(())
    }

    /// Reads what arrived and hands out every complete answer, also those that came just
    /// before the connection ended; then reports the end, if any. Each chunk is decoded as it
    /// arrives, so a reply over the caps is refused before the next chunk is read: however
    /// fast a master sends, the inbox holds at most one capped reply and one chunk.
    fn read(&mut self, cx: &mut Context<'_>) -> Result<(), Broken> {
        loop {
            let stream = self.stream.as_deref_mut().expect(UNBROKEN);
            let mut buf = ReadBuf::new(&mut self.chunk);
            let read = Pin::new(stream).poll_read(cx, &mut buf);
            let n = buf.filled().len();
            self.heard |= n > 0;
            self.inbox.extend_from_slice(&self.chunk[..n]);
            match read {
                Poll::Ready(Ok(())) if n == 0 => {
                    return Err(Broken::Io(if self.inbox.is_empty() {
                        "the master closed the connection".into()
                    } else {
                        "the master closed the connection in the middle of a reply".into()
                    }));
                }
                Poll::Ready(Ok(())) => self.split()?,
                Poll::Ready(Err(e)) => return Err(Broken::Io(e.to_string())),
                Poll::Pending => return Ok(()),
            }
        }
    }

    /// Hands out every complete reply in the inbox and keeps only the unfinished one.
    fn split(&mut self) -> Result<(), Broken> {
        let mut start = 0;
        let result = loop {
            match self.decoder.next(&self.inbox[start..]) {
                Ok(Some((len, reply))) => {
                    start += len;
                    if let Err(broken) = self.deliver(reply) {
                        break Err(broken);
                    }
                }
                Ok(None) => break Ok(()),
                Err(BadReply::Tls) => break Err(Broken::SpeaksTls),
                Err(bad) => break Err(Broken::BadReply(bad.to_string())),
            }
        };
        self.inbox.drain(..start);
        result
    }

    /// Hands the next answer to the request it belongs to; a reply that answers no request
    /// is a push, if this pipe listens for them, and so is a RESP3 message (rule 7).
    fn deliver(&mut self, reply: Reply) -> Result<(), Broken> {
        if let Reply::Push(items) = &reply {
            match items.first().and_then(Reply::bulk) {
                Some(b"subscribe" | b"ssubscribe") => self.subscribed(),
                Some(b"unsubscribe" | b"sunsubscribe") => {}
                Some(b"message" | b"smessage") => {
                    self.message();
                    return Ok(());
                }
                // Nothing else is asked for (no client tracking, no pattern subscription): an
                // unrelated push takes no request's answer, and costs nothing.
                _ => return Ok(()),
            }
        }
        let number = self.answered;
        if number >= self.first + self.slots.len() as u64 {
            return self.push(reply);
        }
        self.answered += 1;
        let slot = self.slot(number);
        if !slot.done {
            slot.answer = Some(Ok(reply));
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        } else if let Reply::Error(refused) = reply {
            self.unwanted_error = Some(refused);
        }
        self.trim();
        Ok(())
    }

    /// Fails every request still waiting, and every later one; closes the connection and
    /// frees the buffers.
    fn break_down(&mut self, why: Broken) {
        let answered = self.answered - self.first;
        // The oldest request whose reply had begun to arrive (cut short, or refused as no
        // reply) reached the far side and ran: only those after it may still be on their way.
        let begun = u64::from(!self.inbox.is_empty());
        let sent = self.sent;
        let mut unanswered = self.slots.iter().skip((answered + begun) as usize);
        self.stranded = unanswered.any(|slot| slot.start < sent);
        for slot in self.slots.iter_mut().skip(answered as usize) {
            if !slot.done {
                slot.answer = Some(Err(why.clone()));
                if let Some(waker) = slot.waker.take() {
                    waker.wake();
                }
            }
        }
        self.answered = self.first + self.slots.len() as u64;
        self.stream = None;
        self.outbox = Vec::new();
        self.inbox = Vec::new();
        self.written = 0;
        self.unflushed = false;
        self.broken = Some(why);
        self.trim();
        if let Some(waker) = self.pushes.as_mut().and_then(|p| p.waker.take()) {
            waker.wake();
        }
    }

    /// Forgets the oldest slots whose answer arrived and is no longer wanted.
    fn trim(&mut self) {
        while self.first < self.answered && self.slots.front().is_some_and(|s| s.done) {
            self.slots.pop_front();
            self.first += 1;
        }
    }

    /// A request that still waits, or else the listener, to take over the pipe's I/O from
    /// a request that leaves.
    fn successor(&mut self) -> Option<Waker> {
        self.slots
            .iter_mut()
            .find(|s| !s.done && s.answer.is_none() && s.waker.is_some())
            .and_then(|s| s.waker.clone())
            .or_else(|| self.pushes.as_ref().and_then(|p| p.waker.clone()))
    }
}

#[cfg(test)]
mod tests;
