//! The byte stream under each connection, and proof of what reached it.
//!
//! The problem: a release handed to a slow master's connection sits in the connection's queue
//! until its writer task runs. If redlock exits in between, the release is lost and the master
//! keeps the key until its TTL, even though the caller was told the request was "sent".
//!
//! The fix:
//! 1. Every connection runs over a [`Counted`] stream that adds each byte it writes to the
//!    socket to `written`.
//! 2. Before a request is queued, its exact encoded length is added to `queued` (before, not
//!    after: so every request in the queue is already counted).
//! 3. `written >= queued` then proves that every request queued so far, ours included, is in
//!    the kernel's hands: it reaches the master even if redlock exits now, and a paused master
//!    runs it when it wakes up, after the requests sent before it.
//!
//! A master that stops reading for long (paused for thousands of requests) fills its socket
//! buffers; then nothing more can be written to it and `is_stalled` says so, so that callers
//! stop waiting for it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes queued for one connection and bytes written to its socket.
#[derive(Debug)]
pub struct Flow {
    queued: AtomicU64,
    written: AtomicU64,
    /// When the writes last made progress, or when bytes were queued on a flushed connection:
    /// microseconds since `origin`.
    moved_at: AtomicU64,
    origin: Instant,
}

impl Default for Flow {
    fn default() -> Self {
        Flow {
            queued: AtomicU64::new(0),
            written: AtomicU64::new(0),
            moved_at: AtomicU64::new(0),
            origin: Instant::now(),
        }
    }
}

impl Flow {
    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Counts a request being queued.
    pub fn queue(&self, bytes: usize) {
        if self.is_flushed() {
            // A backlog starts now: the stall clock counts from here.
            self.moved_at.store(self.now(), Ordering::SeqCst);
        }
        self.queued.fetch_add(bytes as u64, Ordering::SeqCst);
    }

    fn wrote(&self, bytes: usize) {
        self.written.fetch_add(bytes as u64, Ordering::SeqCst);
        self.moved_at.store(self.now(), Ordering::SeqCst);
    }

    /// Starts the count after the connection's own handshake (AUTH, SELECT), which was
    /// written but never queued by us.
    pub fn baseline(&self) {
        self.queued
            .store(self.written.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// True when everything queued so far has been written to the socket.
    pub fn is_flushed(&self) -> bool {
        self.written.load(Ordering::SeqCst) >= self.queued.load(Ordering::SeqCst)
    }

    /// True when bytes are waiting and the socket has taken none for `patience`: the master
    /// stopped reading (paused, or gone without closing) and its buffers are full. Waiting for
    /// such a master to take a request would only burn the caller's deadline.
    pub fn is_stalled(&self, patience: Duration) -> bool {
        let since = self
            .now()
            .saturating_sub(self.moved_at.load(Ordering::SeqCst));
        !self.is_flushed() && since > u64::try_from(patience.as_micros()).unwrap_or(u64::MAX)
    }
}

/// Any byte stream a connection can run over (TCP, Unix socket, TLS).
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A stream that counts the bytes written through it into a [`Flow`].
pub struct Counted {
    inner: Box<dyn Stream>,
    flow: Arc<Flow>,
}

impl Counted {
    pub fn new(inner: Box<dyn Stream>, flow: Arc<Flow>) -> Counted {
        Counted { inner, flow }
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = result {
            self.flow.wrote(n);
        }
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = result {
            self.flow.wrote(n);
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
