//! One connection per master, opened on first use and kept for the whole invocation.
//!
//! Each connection is a [`Pipe`]: requests reach the master in the order they are made, are
//! never withdrawn once queued, and the pipe can prove they are on the wire (see `pipe` for
//! why each of these matters). On top of it this module adds what a master needs: connecting
//! (TCP, Unix socket or TLS) and logging in, running scripts, and telling failures apart.
//!
//! A script's first call on each connection is an EVAL with its body (which caches it on the
//! master); later calls are EVALSHA. So EVALSHA does not normally need an EVAL fallback in the
//! middle of a request, where a release queued in between could overtake it. The fallback
//! stays for the rare cases: a SCRIPT FLUSH by an operator, a first EVAL refused before the
//! script was cached (LOADING, BUSY), two threads racing on a script's first use.
//!
//! A request that is not yet queued (still connecting) when the caller stops waiting is never
//! sent. A connection is dropped only when broken, never because an answer is late.
//!
//! Every connection to a master, the pipe's and the release notices' alike, refuses replies
//! over the caps of `resp`: a master that sends one is failed with a bad reply and its
//! connection closed, so no master can make redlock buffer without bound.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use redis::{ConnectionAddr, ErrorKind, RedisConnectionInfo, RedisError, ServerErrorKind, Value};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::TlsConnector;

use super::lua::Lua;
use super::master::Master;
use super::pipe::{Broken, Pipe, Stream};
use super::resp;

/// Why one master did not answer usefully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeError {
    /// No answer before the per-node deadline.
    Timeout,
    /// Could not connect or log in.
    Connect(String),
    /// The master answered with an error (read-only replica, out of memory, loading, ...).
    Server(String),
    /// The connection broke.
    Io(String),
    /// The master sent something that cannot be a reply to our request (not RESP, or over
    /// the caps of `resp`); its connection was closed.
    BadReply(String),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Timeout => f.write_str("timed out"),
            NodeError::Connect(why) => write!(f, "cannot connect: {why}"),
            NodeError::Server(why) => write!(f, "error reply: {why}"),
            NodeError::Io(why) => write!(f, "connection failed: {why}"),
            NodeError::BadReply(why) => write!(f, "bad reply: {why}"),
        }
    }
}

pub(crate) struct Node {
    pub master: Master,
    /// TLS settings for `rediss://` masters.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Login and database; also used for the pub/sub connections (redis-rs), without the
    /// CLIENT SETINFO round trip.
    settings: RedisConnectionInfo,
    slot: Mutex<Slot>,
    /// True from the start of a TLS handshake until it succeeds: a deadline that passes while
    /// it is true means the server did not answer TLS at all (most often a plaintext port).
    in_tls_handshake: AtomicBool,
}

/// The cached connection and a generation number, so that a caller who saw connection 3 fail
/// does not throw away connection 4 that another thread opened meanwhile.
#[derive(Default)]
struct Slot {
    generation: u64,
    connection: Option<Connection>,
}

#[derive(Clone)]
struct Connection {
    generation: u64,
    pipe: Arc<Pipe>,
    /// The scripts already loaded on this connection, one bit each (see `Lua::bit`).
    loaded: Arc<AtomicU32>,
}

impl Node {
    pub fn new(master: Master, tls: Option<Arc<rustls::ClientConfig>>) -> Node {
        let settings = master
            .connection_info()
            .redis_settings()
            .clone()
            .set_skip_set_lib_name();
        Node {
            master,
            tls,
            settings,
            slot: Mutex::new(Slot::default()),
            in_tls_handshake: AtomicBool::new(false),
        }
    }

    /// The connection to use, and whether it is a kept one (opened for an earlier request)
    /// rather than opened just now.
    async fn connection(&self) -> Result<(Connection, bool), NodeError> {
        match self.cached() {
            Some(found) if !found.pipe.is_broken() => Ok((found, true)),
            Some(broken) => {
                // It broke during some other request's poll (an answer followed by a close, a
                // protocol error). Nothing more can be sent on it, so a new connection cannot
                // let anything overtake what it carried.
                self.forget(broken.generation);
                Ok((Box::pin(self.connect()).await?, false))
            }
            // Boxed: connecting is rare and its future is large (TCP, TLS, handshake); inline,
            // it would make every request's future that large, and every round would copy it.
            None => Ok((Box::pin(self.connect()).await?, false)),
        }
    }

    async fn connect(&self) -> Result<Connection, NodeError> {
        let pipe = Pipe::new(self.open_stream().await?);
        self.log_in(&pipe).await?;
        let connection = Connection {
            generation: 0,
            pipe: Arc::new(pipe),
            loaded: Arc::new(AtomicU32::new(0)),
        };
        let mut slot = self.slot.lock().expect("node slot poisoned");
        // Another thread may have connected meanwhile; keep one connection so that everything
        // sent to this master shares one FIFO.
        if slot.connection.is_none() {
            slot.generation += 1;
            slot.connection = Some(Connection {
                generation: slot.generation,
                ..connection
            });
        }
        Ok(slot.connection.clone().expect("just set"))
    }

    /// AUTH and SELECT when the URL asks for them, sent together; nothing to wait for (and no
    /// round trip) otherwise. Deadlines are the caller's: the whole request, connecting
    /// included, runs under the round's per-node timeout.
    async fn log_in(&self, pipe: &Pipe) -> Result<(), NodeError> {
        let db = self.settings.db().to_string();
        let auth = self.settings.password().map(|password| {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            args.extend(self.settings.username().map(str::as_bytes));
            args.push(password.as_bytes());
            args
        });
        let select = (self.settings.db() != 0).then(|| vec![b"SELECT".as_slice(), db.as_bytes()]);
        let steps: Vec<_> = auth
            .into_iter()
            .chain(select)
            .map(|args| {
                let verb = String::from_utf8_lossy(args[0]).into_owned();
                let request = pipe.request(move |out: &mut Vec<u8>| {
                    resp::encode(out, args.len(), args.iter().copied());
                });
                async move { (verb, request.await) }
            })
            .collect();
        for (verb, answer) in futures_util::future::join_all(steps).await {
            match answer.map(Value::extract_error) {
                Ok(Ok(_)) => {}
                Ok(Err(refused)) => {
                    return Err(NodeError::Connect(format!(
                        "{verb} refused: {}",
                        describe(&refused)
                    )));
                }
                Err(broken) => return Err(NodeError::Connect(broken.to_string())),
            }
        }
        Ok(())
    }

    /// A separate connection for pub/sub (a subscribed connection can send nothing else). It
    /// is read by redis-rs, which buffers a reply until it is complete however large it
    /// claims to be: the stream under it refuses replies over the caps, as the pipe does.
    pub async fn pubsub(&self) -> Result<redis::aio::PubSub, NodeError> {
        let stream = CappedReplies::new(self.open_stream().await?);
        redis::aio::PubSub::new(&self.settings, stream)
            .await
            .map_err(|e| NodeError::Connect(describe(&e)))
    }

    async fn open_stream(&self) -> Result<Box<dyn Stream>, NodeError> {
        let failed = |e: std::io::Error| NodeError::Connect(e.to_string());
        match self.master.connection_info().addr() {
            ConnectionAddr::Tcp(host, port) => {
                let stream = TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(failed)?;
                // Requests are small and latency is everything: no Nagle delay.
                stream.set_nodelay(true).map_err(failed)?;
                Ok(Box::new(stream))
            }
            ConnectionAddr::Unix(path) => {
                Ok(Box::new(UnixStream::connect(path).await.map_err(failed)?))
            }
            // `Master::parse` refuses #insecure, so every TLS address here verifies the server.
            ConnectionAddr::TcpTls { host, port, .. } => {
                let Some(tls) = &self.tls else {
                    return Err(NodeError::Connect("no TLS settings for rediss://".into()));
                };
                let name = ServerName::try_from(host.clone())
                    .map_err(|e| NodeError::Connect(format!("invalid TLS server name: {e}")))?;
                self.in_tls_handshake.store(false, Ordering::SeqCst);
                let stream = TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(failed)?;
                stream.set_nodelay(true).map_err(failed)?;
                self.in_tls_handshake.store(true, Ordering::SeqCst);
                let stream = TlsConnector::from(Arc::clone(tls))
                    .connect(name, stream)
                    .await
                    .map_err(|e| NodeError::Connect(format!("TLS handshake failed: {e}")))?;
                self.in_tls_handshake.store(false, Ordering::SeqCst);
                Ok(Box::new(stream))
            }
            other => Err(NodeError::Connect(format!(
                "unsupported address {other}: use redis://, rediss:// or redis+unix://"
            ))),
        }
    }

    /// What to report when a deadline passed before this master answered.
    pub fn timed_out(&self) -> NodeError {
        if self.in_tls_handshake.load(Ordering::SeqCst) {
            NodeError::Connect(
                "no answer to the TLS handshake: does this port serve TLS? (rediss:// needs a \
                 TLS port; use redis:// for a plaintext one)"
                    .into(),
            )
        } else {
            NodeError::Timeout
        }
    }

    fn cached(&self) -> Option<Connection> {
        self.slot
            .lock()
            .expect("node slot poisoned")
            .connection
            .clone()
    }

    fn forget(&self, generation: u64) {
        let mut slot = self.slot.lock().expect("node slot poisoned");
        if slot.generation == generation {
            slot.connection = None;
        }
    }

    /// True when every request queued to this master so far is on the wire, or nothing more
    /// can be written to it for now (stalled for `patience`), or there is no connection.
    pub fn is_flushed(&self, patience: Duration) -> bool {
        self.cached()
            .is_none_or(|c| c.pipe.is_flushed() || c.pipe.is_stalled(patience))
    }

    /// Runs `script` with EVALSHA (EVAL if the master lost its script cache since we
    /// connected). Await it in the caller's task; see the module rules for why.
    pub async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Value, NodeError> {
        let (connection, kept) = self.connection().await?;
        match self.eval_on(&connection, script, keys, args).await {
            // A kept connection may have been closed by the master while it sat idle (its
            // `timeout` setting, a restart): the request then fails as it arrives. Every script
            // is safe to run twice (each compares the token, only reads, or only raises a
            // number; a repeated acquire finds its own token), so try once more, on a new
            // connection; the failed one is forgotten by now. Not after a bad reply: a master
            // that sent one is not worth a second round trip of the same deadline.
            Err(NodeError::Io(_)) if kept => {
                let (fresh, _) = self.connection().await?;
                self.eval_on(&fresh, script, keys, args).await
            }
            other => other,
        }
    }

    async fn eval_on(
        &self,
        connection: &Connection,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Value, NodeError> {
        let first_use = connection.loaded.fetch_or(script.bit, Ordering::SeqCst) & script.bit == 0;
        // First use on this connection: EVAL with the body, which also caches the script on
        // the master. After that, EVALSHA; its EVAL fallback only matters after a SCRIPT FLUSH.
        let mut result = if first_use {
            connection.eval("EVAL", script.code, keys, args).await
        } else {
            connection.eval("EVALSHA", &script.sha, keys, args).await
        };
        if matches!(&result, Ok(Err(e)) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript))
        {
            result = connection.eval("EVAL", script.code, keys, args).await;
        }
        self.settle(connection.generation, result)
    }

    /// Runs one plain command (for diagnostics such as `doctor`).
    pub async fn command(&self, cmd: redis::Cmd) -> Result<Value, NodeError> {
        let (connection, _) = self.connection().await?;
        let answer = connection
            .pipe
            .request(|out: &mut Vec<u8>| cmd.write_packed_command(out))
            .await;
        self.settle(connection.generation, answer.map(Value::extract_error))
    }

    /// An answer as the caller wants it: a broken connection is forgotten, so that the next
    /// request reconnects, while an error reply leaves it in place.
    fn settle(
        &self,
        generation: u64,
        answer: Result<Result<Value, RedisError>, Broken>,
    ) -> Result<Value, NodeError> {
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(refused)) => Err(NodeError::Server(describe(&refused))),
            Err(broken) => {
                self.forget(generation);
                Err(match broken {
                    Broken::Io(why) => NodeError::Io(why),
                    Broken::BadReply(why) => NodeError::BadReply(why),
                })
            }
        }
    }
}

impl Connection {
    /// `verb` (EVAL or EVALSHA) of `script` (its body or SHA1), queued during the caller's
    /// poll; the outer error is a broken connection, the inner one an error reply.
    async fn eval(
        &self,
        verb: &str,
        script: &str,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Result<Value, RedisError>, Broken> {
        let count = 3 + keys.len() + args.len();
        // The scripts take 2 or 3 keys: one digit, without formatting a string per request.
        debug_assert!(keys.len() < 10, "one-digit key count");
        let key_count = [b'0' + keys.len() as u8];
        let answer = self
            .pipe
            .request(|out: &mut Vec<u8>| {
                let head = [verb.as_bytes(), script.as_bytes(), &key_count];
                let keys = keys.iter().map(|k| k.as_bytes());
                resp::encode(
                    out,
                    count,
                    head.into_iter().chain(keys).chain(args.iter().copied()),
                );
            })
            .await;
        answer.map(Value::extract_error)
    }
}

/// A stream whose incoming bytes must be replies within the caps of `resp`: they are framed as
/// they pass (keeping the bytes of the one unfinished reply), and a reply over the caps, or
/// bytes that are not RESP2, end the stream with an error, so that the reader above it stops
/// and drops the connection before it has buffered more than one capped reply.
struct CappedReplies {
    inner: Box<dyn Stream>,
    framer: resp::Framer,
    /// The bytes of the reply not yet complete.
    unfinished: Vec<u8>,
}

impl CappedReplies {
    fn new(inner: Box<dyn Stream>) -> CappedReplies {
        CappedReplies {
            inner,
            framer: resp::Framer::default(),
            unfinished: Vec::new(),
        }
    }
}

impl AsyncRead for CappedReplies {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.unfinished.extend_from_slice(&buf.filled()[before..]);
        let mut start = 0;
        loop {
            match this.framer.next(&this.unfinished[start..]) {
                Ok(Some(len)) => start += len,
                Ok(None) => break,
                Err(bad) => {
                    buf.set_filled(before);
                    this.unfinished = Vec::new();
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        bad.to_string(),
                    )));
                }
            }
        }
        this.unfinished.drain(..start);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for CappedReplies {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A one-line description of a redis-rs error, without the noise of its Debug form. An error
/// reply reads as the master wrote it (`WRONGPASS invalid username-password pair ...`).
fn describe(error: &RedisError) -> String {
    let text = match (error.code(), error.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => error.to_string(),
    };
    text.lines().next().unwrap_or_default().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn capped_replies_pass_replies_and_refuse_what_is_over_the_caps() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (ours, mut master) = tokio::io::duplex(64 * 1024);
            let mut capped = CappedReplies::new(Box::new(ours));
            // A reply split across writes arrives whole and unchanged.
            let reply = b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n";
            master.write_all(&reply[..9]).await.unwrap();
            let mut got = vec![0u8; 9];
            capped.read_exact(&mut got).await.unwrap();
            master.write_all(&reply[9..]).await.unwrap();
            got.resize(reply.len(), 0);
            capped.read_exact(&mut got[9..]).await.unwrap();
            assert_eq!(got, reply);
            // Then an endless string: refused once its header is in.
            master.write_all(b"$999999999999\r\nxxxx").await.unwrap();
            let mut rest = [0u8; 64];
            let refused = capped.read(&mut rest).await.unwrap_err();
            assert_eq!(refused.kind(), std::io::ErrorKind::InvalidData);
            assert_eq!(refused.to_string(), "reply larger than 1048576 bytes");
        });
    }
}
