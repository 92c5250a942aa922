//! One connection per master, opened on first use and kept for the whole invocation.
//!
//! The connection is a redis-rs multiplexed connection: requests are written in the order they
//! are queued and answered in that order. Three rules keep that order meaningful:
//!
//! 1. **Queued in the caller's order.** A request is pushed onto the connection's queue during
//!    the caller's own poll, so requests reach each master in the order the caller made them.
//!    That is what keeps a release from overtaking an acquire still pending on a slow or paused
//!    master: both travel the same connection, and the master runs them in order.
//! 2. **Never withdrawn.** Once queued, a request stays queued even when the caller stops
//!    waiting (a round decided without this master, or its deadline passed). redis-rs skips a
//!    queued request whose caller is gone, which would make "was it sent?" a race; see
//!    [`Request`] for how the answer is always yes.
//! 3. **One message per request.** A script's first call on each connection is an EVAL with
//!    its body (which caches it on the master); later calls are EVALSHA. So EVALSHA never needs
//!    an EVAL fallback in the middle of a request, where a release queued in between could
//!    overtake it. The fallback stays for the rare SCRIPT FLUSH by an operator.
//!
//! A request that is not yet queued (still connecting) when the caller stops waiting is never
//! sent. A connection is dropped only when broken, never because a reply is late. Each one runs
//! over a counted stream (see `transport`), so a caller can tell when what it queued is on the
//! wire.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{
    AsyncConnectionConfig, ConnectionAddr, ErrorKind, RedisConnectionInfo, RedisError, RedisResult,
    ServerErrorKind, Value,
};
use rustls::pki_types::ServerName;
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::TlsConnector;

use super::master::Master;
use super::scripts::Lua;
use super::transport::{Counted, Flow, Stream};

/// Why one master did not answer usefully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeError {
    /// No answer before the per-node deadline.
    Timeout,
    /// Could not connect or log in.
    Connect(String),
    /// The master answered with an error (read-only replica, out of memory, loading, ...).
    Server(String),
    /// The connection broke or the reply made no sense.
    Io(String),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Timeout => f.write_str("timed out"),
            NodeError::Connect(why) => write!(f, "cannot connect: {why}"),
            NodeError::Server(why) => write!(f, "error reply: {why}"),
            NodeError::Io(why) => write!(f, "connection failed: {why}"),
        }
    }
}

pub(crate) struct Node {
    pub master: Master,
    /// TLS settings for `rediss://` masters.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Connection settings without the CLIENT SETINFO round trip: without a password or a
    /// database to select, the first request is the first thing sent.
    settings: RedisConnectionInfo,
    slot: Mutex<Slot>,
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
    pipeline: MultiplexedConnection,
    flow: Arc<Flow>,
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
        }
    }

    async fn connection(&self) -> Result<Connection, NodeError> {
        match self.cached() {
            Some(found) => Ok(found),
            // Boxed: connecting is rare and its future is large (TCP, TLS, handshake); inline,
            // it would make every request's future that large, and every round would copy it.
            None => Box::pin(self.connect()).await,
        }
    }

    async fn connect(&self) -> Result<Connection, NodeError> {
        let flow = Arc::new(Flow::default());
        let stream = Counted::new(self.open_stream().await?, Arc::clone(&flow));
        // Deadlines are the caller's: the whole request, connecting included, runs under the
        // round's per-node timeout, so none is set here.
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        let (pipeline, driver) =
            MultiplexedConnection::new_with_config(&self.settings, stream, config)
                .await
                .map_err(|e| NodeError::Connect(describe(&e)))?;
        tokio::spawn(driver);
        flow.baseline();
        let connection = Connection {
            generation: 0,
            pipeline,
            flow,
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

    /// A separate connection for pub/sub (a subscribed connection can send nothing else).
    pub async fn pubsub(&self) -> Result<redis::aio::PubSub, NodeError> {
        let stream = self.open_stream().await?;
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
                let stream = TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(failed)?;
                stream.set_nodelay(true).map_err(failed)?;
                let stream = TlsConnector::from(Arc::clone(tls))
                    .connect(name, stream)
                    .await
                    .map_err(|e| NodeError::Connect(format!("TLS handshake failed: {e}")))?;
                Ok(Box::new(stream))
            }
            other => Err(NodeError::Connect(format!(
                "unsupported address {other}: use redis://, rediss:// or redis+unix://"
            ))),
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
            .is_none_or(|c| c.flow.is_flushed() || c.flow.is_stalled(patience))
    }

    /// Runs `script` with EVALSHA (EVAL if the master lost its script cache since we
    /// connected). Await it in the caller's task; see the module rules for why.
    pub async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Value, NodeError> {
        let connection = self.connection().await?;
        let eval = |verb: &str, script_ref: &str| {
            let mut cmd = redis::cmd(verb);
            cmd.arg(script_ref).arg(keys.len()).arg(keys).arg(args);
            cmd
        };
        let first_use = connection.loaded.fetch_or(script.bit, Ordering::SeqCst) & script.bit == 0;
        // First use on this connection: EVAL with the body, which also caches the script on
        // the master. After that, EVALSHA; its EVAL fallback only matters after a SCRIPT FLUSH.
        let mut result = if first_use {
            connection.send(eval("EVAL", script.code)).await
        } else {
            connection.send(eval("EVALSHA", &script.sha)).await
        };
        if matches!(&result, Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript)) {
            result = connection.send(eval("EVAL", script.code)).await;
        }
        result.map_err(|e| self.failure(connection.generation, &e))
    }

    /// Runs one plain command (for diagnostics such as `doctor`).
    pub async fn command(&self, cmd: redis::Cmd) -> Result<Value, NodeError> {
        let connection = self.connection().await?;
        connection
            .send(cmd)
            .await
            .map_err(|e| self.failure(connection.generation, &e))
    }

    /// Classifies a failed request; a broken connection is forgotten so that the next request
    /// reconnects, while an error reply leaves it in place.
    fn failure(&self, generation: u64, error: &RedisError) -> NodeError {
        if error.is_io_error() || error.is_connection_dropped() || error.is_unrecoverable_error() {
            self.forget(generation);
            NodeError::Io(describe(error))
        } else {
            NodeError::Server(describe(error))
        }
    }
}

impl Connection {
    /// Queues `cmd` during the caller's poll (rule 1) and returns its reply; see [`Request`]
    /// for rule 2. An error reply (which the multiplexed connection hands back as a value)
    /// becomes an error.
    async fn send(&self, cmd: redis::Cmd) -> RedisResult<Value> {
        let bytes = packed_len(&cmd);
        let mut pipeline = self.pipeline.clone();
        let request = Request {
            call: Some(Box::pin(
                async move { pipeline.send_packed_command(&cmd).await },
            )),
            flow: Arc::clone(&self.flow),
            bytes,
            queued: false,
        };
        request.await.and_then(Value::extract_error)
    }
}

/// One request on a connection, never withdrawn once queued (rule 2).
///
/// It is queued on its first poll, and counted in the flow at that same moment. If the caller
/// drops it while something on the connection is still unwritten, redis-rs could skip it (it
/// drops queued requests nobody waits for); so the remainder is handed to a background task that
/// takes the reply. Once the connection is flushed the driver has taken the request and dropping
/// is safe, which is the usual case: writes go out before replies come back.
struct Request {
    call: Option<Pin<Box<dyn Future<Output = RedisResult<Value>> + Send>>>,
    flow: Arc<Flow>,
    bytes: usize,
    queued: bool,
}

impl Future for Request {
    type Output = RedisResult<Value>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if !self.queued {
            self.queued = true;
            self.flow.queue(self.bytes);
        }
        let Some(call) = self.call.as_mut() else {
            return Poll::Ready(Err(RedisError::from(std::io::Error::other(
                "request polled after completion",
            ))));
        };
        let result = call.as_mut().poll(cx);
        if result.is_ready() {
            self.call = None;
        }
        result
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if let Some(call) = self.call.take()
            && self.queued
            && !self.flow.is_flushed()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = call.await;
            });
        }
    }
}

/// The length of `cmd` on the wire (RESP: `*<n>`, then `$<len>` and the bytes of each
/// argument, each line ending in CRLF), without encoding it a second time.
fn packed_len(cmd: &redis::Cmd) -> usize {
    fn digits(mut n: usize) -> usize {
        let mut count = 1;
        while n >= 10 {
            n /= 10;
            count += 1;
        }
        count
    }
    let mut args = 0;
    let mut len = 0;
    for arg in cmd.args_iter() {
        let size = match arg {
            redis::Arg::Simple(bytes) => bytes.len(),
            // Not used by redlock; measure such a command the slow way.
            _ => return cmd.get_packed_command().len(),
        };
        args += 1;
        len += 1 + digits(size) + 2 + size + 2;
    }
    len + 1 + digits(args) + 2
}

/// A one-line description of a redis-rs error, without the noise of its Debug form.
fn describe(error: &RedisError) -> String {
    let text = error.to_string();
    text.lines().next().unwrap_or_default().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_len_matches_the_encoding() {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg("0123456789abcdef0123456789abcdef01234567")
            .arg(2)
            .arg(&["lock", "redlock:holder:lock"][..])
            .arg(&[b"token".as_slice(), &[b'x'; 1234], b""][..]);
        assert_eq!(packed_len(&cmd), cmd.get_packed_command().len());
        let mut load = redis::cmd("SCRIPT");
        load.arg("LOAD").arg("return 1");
        assert_eq!(packed_len(&load), load.get_packed_command().len());
    }
}
