//! One connection per master, opened on first use and kept for the whole invocation, and the
//! one way every connection to a master is made.
//!
//! Each connection is a [`Pipe`]: requests reach the master in the order they are made, are
//! never withdrawn once queued, and the pipe can prove they are on the wire (see `pipe` for
//! why each of these matters). On top of it this module adds what a master needs: connecting
//! (TCP, Unix socket or TLS) and logging in, running scripts, subscribing, and telling
//! failures apart.
//!
//! One path for every connection: the kept one that carries requests (and, where the master
//! speaks RESP3, a waiter's release notices, see [`Node::listen`]) and the subscribed ones
//! that carry release notices otherwise (see `notices`) are opened by the same [`Node::open`] (connect,
//! TLS, AUTH with user and password, SELECT), speak through the same pipe and are read by the
//! same decoder under the same caps of `resp`. A master that sends a reply over the caps, or
//! bytes that are not RESP, is failed with a bad reply and its connection closed, so no
//! master can make redlock buffer without bound, on any connection.
//!
//! A script's first call on each connection is an EVAL with its body (which caches it on the
//! master); later calls are EVALSHA. So EVALSHA does not normally need an EVAL fallback in the
//! middle of a request, where a release queued in between could overtake it. The fallback
//! stays for the rare cases: a SCRIPT FLUSH by an operator, a first EVAL refused before the
//! script was cached (LOADING, BUSY), two threads racing on a script's first use.
//!
//! A request that is not yet queued (still connecting) when the caller stops waiting is never
//! sent. A connection is dropped only when broken, never because an answer is late. A broken
//! one that stranded requests (see `Pipe::stranded`) is noted with the time
//! ([`Node::stranded_since`]): those requests may still run on the master after anything sent
//! on the next connection, which an undo must allow for (see `undo`).
//!
//! The wrong scheme is named, both ways: `rediss://` to a plaintext port shows as a TLS
//! handshake that gets no answer (see [`Node::timed_out`]); `redis://` to a TLS port shows as
//! a TLS record where a reply should be (the decoder names it), or, as redis-server does it,
//! as a new connection closed without a word, after which the port is asked with a TLS
//! ClientHello whether it speaks TLS.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::TlsConnector;

pub(super) mod acl_note;
mod error;
mod subscribe;
mod tls_port;
mod tls_words;

use super::lua::Lua;
use super::master::{Address, Master};
use super::pipe::{Answer, Broken, Pipe, Stream};
use super::resp::{self, Reply};
pub use error::NodeError;

pub(crate) struct Node {
    pub master: Master,
    /// TLS settings for `rediss://` masters.
    tls: Option<Arc<rustls::ClientConfig>>,
    slot: Mutex<Slot>,
    /// True from the start of the kept connection's TLS handshake until it succeeds: a
    /// deadline that passes while it is true means the server did not answer TLS at all (most
    /// often a plaintext port).
    in_tls_handshake: AtomicBool,
    /// When a kept connection was last dropped with requests stranded on it.
    stranded_at: Mutex<Option<Instant>>,
    /// The master refused `HELLO 3` (Redis 5, or a user not allowed it): its notices come on
    /// connections of their own, and it is not asked again.
    speaks_resp2_only: AtomicBool,
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
    /// It said yes to `HELLO 3`: it speaks RESP3 from then on (see [`Node::listen`]).
    resp3: Arc<AtomicBool>,
    /// A subscription is on it (see `subscription`); a second one gets a connection of its own.
    subscribed: Arc<AtomicBool>,
}

impl Node {
    pub fn new(master: Master, tls: Option<Arc<rustls::ClientConfig>>) -> Node {
        Node {
            master,
            tls,
            slot: Mutex::new(Slot::default()),
            in_tls_handshake: AtomicBool::new(false),
            stranded_at: Mutex::new(None),
            speaks_resp2_only: AtomicBool::new(false),
        }
    }

    /// The connection to use, and whether it is a kept one (opened for an earlier request)
    /// rather than opened just now.
    async fn connection(&self) -> Result<(Connection, bool), NodeError> {
        match self.cached() {
            Some(found) if !found.pipe.is_broken() => Ok((found, true)),
            Some(broken) => {
                // It broke during some other request's poll (an answer followed by a close, a
                // protocol error). Nothing more can be sent on it; what it stranded may still
                // run on the master after what goes on the new one (noted, see `drop_broken`).
                self.drop_broken(&broken);
                Ok((Box::pin(self.connect()).await?, false))
            }
            // Boxed: connecting is rare and its future is large (TCP, TLS, handshake); inline,
            // it would make every request's future that large, and every round would copy it.
            None => Ok((Box::pin(self.connect()).await?, false)),
        }
    }

    async fn connect(&self) -> Result<Connection, NodeError> {
        let pipe = self.open(&self.in_tls_handshake).await?;
        let connection = Connection {
            generation: 0,
            pipe: Arc::new(pipe),
            loaded: Arc::new(AtomicU32::new(0)),
            resp3: Arc::new(AtomicBool::new(false)),
            subscribed: Arc::new(AtomicBool::new(false)),
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

    /// A new connection to this master, logged in: the one way every connection is made.
    /// `in_handshake` tracks its TLS handshake (see `in_tls_handshake`).
    async fn open(&self, in_handshake: &AtomicBool) -> Result<Pipe, NodeError> {
        let pipe = Pipe::new(self.open_stream(in_handshake).await?);
        self.log_in(&pipe).await?;
        Ok(pipe)
    }

    /// AUTH and SELECT when the URL asks for them, sent together; nothing to wait for (and no
    /// round trip) otherwise. Deadlines are the caller's: the whole request, connecting
    /// included, runs under the round's per-node timeout.
    async fn log_in(&self, pipe: &Pipe) -> Result<(), NodeError> {
        let login = self.master.login();
        let db = login.db.to_string();
        let auth = login.password.as_deref().map(|password| {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            args.extend(login.username.as_deref().map(str::as_bytes));
            args.push(password.as_bytes());
            args
        });
        let select = (login.db != 0).then(|| vec![b"SELECT".as_slice(), db.as_bytes()]);
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
            match answer {
                Ok(Reply::Error(refused)) => {
                    return Err(NodeError::Connect(format!(
                        "{verb} refused: {}",
                        describe(&refused)
                    )));
                }
                Ok(_) => {}
                Err(Broken::SpeaksTls) => {
                    return Err(NodeError::Connect(resp::SPEAKS_TLS.into()));
                }
                Err(broken) => {
                    let error = NodeError::Connect(broken.to_string());
                    return Err(self.named_tls(pipe, error).await);
                }
            }
        }
        Ok(())
    }

    async fn open_stream(&self, in_handshake: &AtomicBool) -> Result<Box<dyn Stream>, NodeError> {
        let failed = |e: std::io::Error| NodeError::Connect(e.to_string());
        match self.master.address() {
            Address::Tcp {
                host,
                port,
                tls: false,
            } => {
                let stream = TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(failed)?;
                // Requests are small and latency is everything: no Nagle delay.
                stream.set_nodelay(true).map_err(failed)?;
                Ok(Box::new(stream))
            }
            Address::Unix(path) => Ok(Box::new(UnixStream::connect(path).await.map_err(failed)?)),
            // `Master::parse` refuses #insecure, so every TLS address here verifies the server.
            Address::Tcp {
                host,
                port,
                tls: true,
            } => {
                let Some(tls) = &self.tls else {
                    return Err(NodeError::Connect("no TLS settings for rediss://".into()));
                };
                let name = ServerName::try_from(host.clone())
                    .map_err(|e| NodeError::Connect(format!("invalid TLS server name: {e}")))?;
                in_handshake.store(false, Ordering::SeqCst);
                let stream = TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(failed)?;
                stream.set_nodelay(true).map_err(failed)?;
                in_handshake.store(true, Ordering::SeqCst);
                let stream = TlsConnector::from(Arc::clone(tls))
                    .connect(name, stream)
                    .await
                    .map_err(|e| NodeError::Connect(tls_words::handshake_failure(&e)))?;
                in_handshake.store(false, Ordering::SeqCst);
                Ok(Box::new(stream))
            }
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

    /// True while a kept connection is open (nothing to wait for before a request is sent).
    pub fn is_connected(&self) -> bool {
        self.cached().is_some_and(|c| !c.pipe.is_broken())
    }

    /// The latest error reply to a request on the kept connection that no caller waited for
    /// any more (see `pipe`), taken; as a request's error would read.
    pub fn take_unwanted_refusal(&self) -> Option<NodeError> {
        let refused = self.cached()?.pipe.take_unwanted_error()?;
        Some(self.refused(&refused, None))
    }

    /// An error reply (to `script`, if it answers one) as a request's error, with what an ACL
    /// refusal leaves out noted: the user this connection logged in as, the command the
    /// script's line runs (see `acl_note`).
    fn refused(&self, refused: &str, script: Option<&str>) -> NodeError {
        let line = describe(refused);
        let user = self.master.login().username.as_deref().unwrap_or("default");
        NodeError::Server(acl_note::permission_note(&line, user, script).unwrap_or(line))
    }

    fn cached(&self) -> Option<Connection> {
        self.slot
            .lock()
            .expect("node slot poisoned")
            .connection
            .clone()
    }

    /// Forgets a broken connection, so that the next request reconnects, noting when it
    /// stranded requests.
    fn drop_broken(&self, connection: &Connection) {
        if connection.pipe.stranded() {
            *self.stranded_at.lock().expect("node stranded poisoned") = Some(Instant::now());
        }
        let mut slot = self.slot.lock().expect("node slot poisoned");
        if slot.generation == connection.generation {
            slot.connection = None;
        }
    }

    /// True when a connection to this master that broke with requests stranded on it (see
    /// `Pipe::stranded`) was dropped at `since` or later.
    pub fn stranded_since(&self, since: Instant) -> bool {
        self.stranded_at
            .lock()
            .expect("node stranded poisoned")
            .is_some_and(|at| at >= since)
    }

    /// True when every request queued to this master so far is on the wire, or nothing more
    /// can be written to it for now (stalled for `patience`), or there is no connection.
    pub fn is_flushed(&self, patience: Duration) -> bool {
        self.cached()
            .is_none_or(|c| c.pipe.is_flushed() || c.pipe.is_stalled(patience))
    }

    /// Runs `script` with EVALSHA (EVAL if the master lost its script cache since we
    /// connected), right after ASKING when `asking` (a cluster node importing the keys' slot,
    /// see `cluster`). Await it in the caller's task; see the module rules for why.
    pub async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
        asking: bool,
    ) -> Result<Reply, NodeError> {
        let (connection, kept) = self.connection().await?;
        match self.eval_on(&connection, script, keys, args, asking).await {
            // A kept connection may have been closed by the master while it sat idle (its
            // `timeout` setting, a restart): the request then fails as it arrives. Every script
            // is safe to run twice (each compares the token, only reads, or only raises a
            // number; a repeated acquire finds its own token), so try once more, on a new
            // connection; the failed one is forgotten by now. Not after a bad reply: a master
            // that sent one is not worth a second round trip of the same deadline.
            Err(NodeError::Io(_)) if kept => {
                let (fresh, _) = self.connection().await?;
                self.eval_on(&fresh, script, keys, args, asking).await
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
        asking: bool,
    ) -> Result<Reply, NodeError> {
        let first_use = connection.loaded.fetch_or(script.bit, Ordering::SeqCst) & script.bit == 0;
        // First use on this connection: EVAL with the body, which also caches the script on
        // the master. After that, EVALSHA; its EVAL fallback only matters after a SCRIPT FLUSH.
        let mut answer = if first_use {
            connection
                .eval("EVAL", script.code, keys, args, asking)
                .await
        } else {
            connection
                .eval("EVALSHA", &script.sha, keys, args, asking)
                .await
        };
        if matches!(&answer, Ok(Reply::Error(e)) if e.starts_with("NOSCRIPT")) {
            answer = connection
                .eval("EVAL", script.code, keys, args, asking)
                .await;
        }
        self.settle(connection, answer, Some(script.code)).await
    }

    /// Runs one plain command (for diagnostics such as `doctor`, and reads that no script
    /// covers): its arguments, the command's name first.
    pub async fn command(&self, args: &[&[u8]]) -> Result<Reply, NodeError> {
        self.command_asking(args, false).await
    }

    /// [`Node::command`], right after ASKING when `asking` (see [`Node::eval`]).
    pub async fn command_asking(&self, args: &[&[u8]], asking: bool) -> Result<Reply, NodeError> {
        let (connection, _) = self.connection().await?;
        let encode = |out: &mut Vec<u8>| resp::encode(out, args.len(), args.iter().copied());
        let answer = connection.send(encode, asking).await;
        self.settle(&connection, answer, None).await
    }

    /// An answer as the caller wants it: an error reply is an error (the connection stays),
    /// a broken connection is forgotten, so that the next request reconnects. `script` is the
    /// source of the script it answers, if any.
    async fn settle(
        &self,
        connection: &Connection,
        answer: Answer,
        script: Option<&str>,
    ) -> Result<Reply, NodeError> {
        match answer {
            Ok(Reply::Error(refused)) => Err(self.refused(&refused, script)),
            Ok(reply) => Ok(reply),
            Err(broken) => {
                self.drop_broken(connection);
                Err(self.named_tls(&connection.pipe, failed(broken)).await)
            }
        }
    }
}

impl Connection {
    /// `verb` (EVAL or EVALSHA) of `script` (its body or SHA1), queued during the caller's
    /// poll (with ASKING before it when `asking`); an error reply is an answer like any other.
    async fn eval(
        &self,
        verb: &str,
        script: &str,
        keys: &[&str],
        args: &[&[u8]],
        asking: bool,
    ) -> Answer {
        let count = 3 + keys.len() + args.len();
        // The scripts take at most 10 keys: one or two digits, without formatting a string
        // per request.
        debug_assert!(keys.len() < 100, "two-digit key count");
        let (tens, ones) = (keys.len() / 10, keys.len() % 10);
        let digits = [b'0' + tens as u8, b'0' + ones as u8];
        let key_count = &digits[usize::from(tens == 0)..];
        let encode = |out: &mut Vec<u8>| {
            let head = [verb.as_bytes(), script.as_bytes(), key_count];
            let keys = keys.iter().map(|k| k.as_bytes());
            resp::encode(
                out,
                count,
                head.into_iter().chain(keys).chain(args.iter().copied()),
            );
        };
        self.send(encode, asking).await
    }

    /// The request `encode` writes, right after ASKING when `asking`.
    async fn send<E: FnOnce(&mut Vec<u8>) + Unpin>(&self, encode: E, asking: bool) -> Answer {
        if asking {
            self.pipe.asking(encode).await
        } else {
            self.pipe.request(encode).await
        }
    }
}

/// What a broken connection means for the request that was on it.
fn failed(broken: Broken) -> NodeError {
    match broken {
        Broken::Io(why) => NodeError::Io(why),
        Broken::BadReply(why) => NodeError::BadReply(why),
        Broken::SpeaksTls => NodeError::Connect(resp::SPEAKS_TLS.into()),
    }
}

/// An error reply as one line, as the master wrote it (`WRONGPASS invalid username-password
/// pair ...`). One exception: a master that wants a password answers a request of more than
/// ten arguments from a client that has not logged in with a protocol error, where a shorter
/// one gets NOAUTH; it means the same, so it is said the same way.
fn describe(refused: &str) -> String {
    let line = refused.lines().next().unwrap_or_default().trim();
    if line.contains("Protocol error: unauthenticated") {
        return "NOAUTH Authentication required.".to_string();
    }
    line.to_string()
}
