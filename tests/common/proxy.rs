//! A fault proxy: a TCP proxy that sits in front of one real master and misbehaves on demand.
//!
//! [`Proxy::start`] listens on a loopback port below the ephemeral range (see
//! [`super::TEST_PORTS`]); [`Proxy::url`] is usable as a `--server` or in `REDLOCK_SERVERS`.
//! Every connection a client opens to the proxy gets its own connection to the master and two
//! threads, one per direction, that copy bytes as they come. What they do with each chunk is
//! decided when the chunk arrives, by the proxy's current [`Fault`], which the test switches at
//! any time with [`Proxy::set`]:
//!
//! - [`Fault::Pass`]: bytes go through unchanged (the default).
//! - [`Fault::Blackhole`]: connections are accepted and kept, bytes are dropped both ways, and
//!   nothing ever comes back: a master behind a network partition that does not reset
//!   connections.
//! - [`Fault::Delay`]: each chunk, either way, goes through after the given delay.
//! - [`Fault::CutReply`]: requests go through; of the master's next reply (the next chunk it
//!   sends) the first k bytes reach the client, then both connections are closed.
//! - [`Fault::Garbage`]: requests go through (the master runs them); each reply is replaced by
//!   bytes that are not RESP.
//! - [`Fault::Oversized`]: requests go through; the next reply is replaced by the header of a
//!   bulk string of 999 999 999 999 bytes, followed by an endless stream of bytes.
//! - [`Fault::DeepNesting`]: like `Oversized`, with an endless `*1\r\n*1\r\n...` instead.
//! - [`Fault::BadMoved`]: like `Garbage`, with a cluster's redirection to an address that does
//!   not parse (and carries an escape sequence) instead.
//!
//! [`Proxy::reset`] closes every current connection at once (both sides see an orderly close),
//! like a master restart or a middlebox dropping its state; later connections work as the
//! current fault says. [`Proxy::drop_clients`] closes only the client's side: what the proxy
//! already took of a request (a chunk held by [`Fault::Delay`]) still reaches the master, like a
//! middlebox that drops a connection while a packet of it is still on its way.
//! [`Proxy::received`] and [`Proxy::forwarded`] count the request chunks taken from clients and
//! handed to the master.
//!
//! Invariants: a chunk is judged once, by the fault in force when it arrived, so switching the
//! fault never reorders or duplicates bytes; an endless stream stops as soon as the client
//! closes its connection, the fault changes or the proxy is dropped, so a client that refuses
//! a reply costs no CPU afterwards; dropping the proxy closes every connection and stops
//! accepting. Plain std threads: no runtime, nothing shared with the code under test.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Cluster, Server};

/// What the proxy does to the traffic; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Pass,
    Blackhole,
    Delay(Duration),
    CutReply(usize),
    Garbage,
    Oversized,
    DeepNesting,
    /// Every reply replaced by [`BAD_MOVED`]: a redirection to an address that does not parse.
    BadMoved,
}

/// What [`Fault::BadMoved`] sends instead of a reply: a MOVED whose address is an escape
/// sequence and no port.
pub const BAD_MOVED: &[u8] = b"-MOVED 3999 \x1b[2Jnowhere\r\n";

/// What [`Fault::Garbage`] sends instead of a reply: its first byte is no RESP type.
pub const GARBAGE: &[u8] = b"?this is not a RESP reply\r\n";

/// The header [`Fault::Oversized`] sends before its endless bytes.
pub const OVERSIZED_HEADER: &[u8] = b"$999999999999\r\n";

pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

struct Shared {
    upstream: SocketAddr,
    fault: Mutex<Fault>,
    /// Bumped by every `set`, so that an endless stream notices a change of fault.
    epoch: AtomicU64,
    stop: AtomicBool,
    /// Both sides of every open connection, by connection number, for `reset` and `drop`.
    open: Mutex<Vec<(u64, TcpStream, TcpStream)>>,
    accepted: AtomicU64,
    /// Request chunks read from clients, and written to the master.
    received: AtomicU64,
    forwarded: AtomicU64,
}

impl Proxy {
    /// A proxy in front of the master listening on loopback `upstream_port`, passing traffic
    /// through until told otherwise.
    pub fn start(upstream_port: u16) -> Proxy {
        let listener = super::bind_test_port();
        let port = listener.local_addr().expect("proxy address").port();
        let shared = Arc::new(Shared {
            upstream: SocketAddr::from(([127, 0, 0, 1], upstream_port)),
            fault: Mutex::new(Fault::Pass),
            epoch: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
            accepted: AtomicU64::new(0),
            received: AtomicU64::new(0),
            forwarded: AtomicU64::new(0),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || accept(listener, shared))
        };
        Proxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// A proxy in front of `server`.
    pub fn before(server: &Server) -> Proxy {
        Proxy::start(server.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Switches the fault; chunks that arrive from now on get it.
    pub fn set(&self, fault: Fault) {
        *self.shared.fault.lock().unwrap() = fault;
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
    }

    pub fn fault(&self) -> Fault {
        self.shared.fault()
    }

    /// Closes every connection open now, both towards the client and towards the master.
    pub fn reset(&self) {
        let open = std::mem::take(&mut *self.shared.open.lock().unwrap());
        for (_, client, server) in open {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }

    /// Closes every connection open now towards the client only; a request chunk the proxy
    /// holds (delayed) still goes to the master, and then that connection closes too.
    pub fn drop_clients(&self) {
        for (_, client, _) in self.shared.open.lock().unwrap().iter() {
            let _ = client.shutdown(Shutdown::Both);
        }
    }

    /// How many request chunks came from clients so far.
    pub fn received(&self) -> u64 {
        self.shared.received.load(Ordering::SeqCst)
    }

    /// How many request chunks went to the master so far.
    pub fn forwarded(&self) -> u64 {
        self.shared.forwarded.load(Ordering::SeqCst)
    }

    /// How many client connections are open now.
    pub fn open_connections(&self) -> usize {
        self.shared.open.lock().unwrap().len()
    }

    /// How many client connections the proxy accepted so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.reset();
        // Wake the acceptor, blocked in accept(), so that it sees `stop` and closes the port.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Proxies in front of every master of `cluster`, in order.
pub fn before_each(cluster: &Cluster) -> Vec<Proxy> {
    cluster.servers.iter().map(Proxy::before).collect()
}

/// The value for REDLOCK_SERVERS that goes through `proxies`.
pub fn servers_env(proxies: &[Proxy]) -> String {
    let urls: Vec<String> = proxies.iter().map(Proxy::url).collect();
    urls.join(",")
}

impl Shared {
    fn fault(&self) -> Fault {
        *self.fault.lock().unwrap()
    }

    fn forget(&self, id: u64) {
        self.open.lock().unwrap().retain(|(n, _, _)| *n != id);
    }
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let id = shared.accepted.fetch_add(1, Ordering::SeqCst);
        // A master that cannot be reached: the client sees its connection closed, as if the
        // master refused it.
        let Ok(server) = TcpStream::connect_timeout(&shared.upstream, Duration::from_secs(2))
        else {
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let clones = (
            client.try_clone().expect("clone client socket"),
            server.try_clone().expect("clone server socket"),
            client.try_clone().expect("clone client socket"),
            server.try_clone().expect("clone server socket"),
        );
        shared.open.lock().unwrap().push((id, clones.2, clones.3));
        let up = Arc::clone(&shared);
        std::thread::spawn(move || requests(id, client, server, &up));
        let down = Arc::clone(&shared);
        std::thread::spawn(move || replies(id, clones.1, clones.0, &down));
    }
}

/// Client to master: requests, dropped or delayed as the fault says, else passed on.
fn requests(id: u64, mut client: TcpStream, mut server: TcpStream, shared: &Shared) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match client.read(&mut chunk) {
            // No answer yet (see common/inspect.rs), not an end.
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        shared.received.fetch_add(1, Ordering::SeqCst);
        let passed = match shared.fault() {
            Fault::Blackhole => Err(None),
            Fault::Delay(delay) => {
                std::thread::sleep(delay);
                server.write_all(&chunk[..n]).map_err(Some)
            }
            _ => server.write_all(&chunk[..n]).map_err(Some),
        };
        match passed {
            Ok(()) => {
                shared.forwarded.fetch_add(1, Ordering::SeqCst);
            }
            Err(None) => {}
            Err(Some(_)) => break,
        }
    }
    close(id, &client, &server, shared);
}

/// Master to client: replies, passed on, dropped, delayed, cut or replaced as the fault says.
fn replies(id: u64, mut server: TcpStream, mut client: TcpStream, shared: &Shared) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match server.read(&mut chunk) {
            // No answer yet (see common/inspect.rs), not an end.
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let passed = match shared.fault() {
            Fault::Pass => client.write_all(&chunk[..n]),
            Fault::Blackhole => Ok(()),
            Fault::Delay(delay) => {
                std::thread::sleep(delay);
                client.write_all(&chunk[..n])
            }
            Fault::CutReply(k) => {
                let _ = client.write_all(&chunk[..k.min(n)]);
                break;
            }
            Fault::Garbage => client.write_all(GARBAGE),
            Fault::BadMoved => client.write_all(BAD_MOVED),
            Fault::Oversized => {
                let filler = vec![b'x'; 64 * 1024];
                client
                    .write_all(OVERSIZED_HEADER)
                    .and_then(|()| endless(&mut client, &filler, shared))
            }
            Fault::DeepNesting => {
                let nesting = b"*1\r\n".repeat(16 * 1024);
                endless(&mut client, &nesting, shared)
            }
        };
        if passed.is_err() {
            // The client is gone. What it sent before it went still reaches the master, as on
            // a real network (a chunk `Fault::Delay` holds: a release sent just before redlock
            // exited, behind a late answer this thread could not hand back); the requests
            // thread closes both sides once the client's end is read.
            return;
        }
    }
    close(id, &client, &server, shared);
}

/// Writes `pattern` over and over until the client closes, the fault changes or the proxy
/// stops.
fn endless(client: &mut TcpStream, pattern: &[u8], shared: &Shared) -> std::io::Result<()> {
    let epoch = shared.epoch.load(Ordering::SeqCst);
    while shared.epoch.load(Ordering::SeqCst) == epoch && !shared.stop.load(Ordering::SeqCst) {
        client.write_all(pattern)?;
    }
    Ok(())
}

/// Ends a connection on both sides (the other direction's thread then ends too).
fn close(id: u64, client: &TcpStream, server: &TcpStream, shared: &Shared) {
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
    shared.forget(id);
}
