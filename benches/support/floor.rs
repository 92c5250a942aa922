//! The floor: the least work any client can do for one Redlock acquire + release, so that the
//! benchmark can show what the machine itself allows beside what redlock achieves.
//!
//! It sends the same two scripts (EVALSHA of redlock's ACQUIRE and RELEASE, same keys, a holder
//! record, a new token per lock, the release notice) to every master, over plain blocking-free
//! sockets driven by one `poll(2)` loop: no async runtime, no multiplexer, no allocation per
//! request beyond the encoded command, one write per master per round. A round ends when a
//! majority answered, like redlock's; the late answers are read during the next round.
//!
//! What it leaves out on purpose, because it is not part of the floor: timeouts, errors other
//! than a panic, reconnection, validity accounting, the release of partial holds. It is bench
//! code, never product code.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use redlock_cli::lock::keys;
use redlock_cli::lock::scripts::lock::{ACQUIRE, RELEASE};

/// One master: its socket, how many requests it still owes an answer, and unparsed bytes.
struct Conn {
    stream: TcpStream,
    pending: usize,
    unread: Vec<u8>,
}

pub struct Floor {
    conns: Vec<Conn>,
    quorum: usize,
    key: String,
    /// Where a release announces itself to waiters, as redlock's release does.
    channel: String,
    holder: Vec<u8>,
    next_token: u64,
}

impl Floor {
    /// Connects to `urls` (`redis://127.0.0.1:PORT`, as the test harness makes them) and loads
    /// the two scripts. `holder` is the holder record to write beside the lock.
    pub fn connect(urls: &[String], key: &str, holder: &[u8]) -> Floor {
        let conns = urls
            .iter()
            .map(|url| {
                let addr = url.strip_prefix("redis://").expect("a redis:// URL");
                let stream = TcpStream::connect(addr).expect("connect to a master");
                stream.set_nodelay(true).expect("TCP_NODELAY");
                Conn {
                    stream,
                    pending: 0,
                    unread: Vec::new(),
                }
            })
            .collect::<Vec<_>>();
        for conn in &conns {
            for script in [&*ACQUIRE, &*RELEASE] {
                let mut stream = &conn.stream;
                stream
                    .write_all(&encode(&[b"SCRIPT", b"LOAD", script.code.as_bytes()]))
                    .expect("SCRIPT LOAD");
                let mut reply = [0u8; 64];
                let n = stream.read(&mut reply).expect("SCRIPT LOAD reply");
                assert!(reply[..n].starts_with(b"$40\r\n"), "SCRIPT LOAD failed");
            }
            conn.stream.set_nonblocking(true).expect("non-blocking");
        }
        Floor {
            quorum: conns.len() / 2 + 1,
            conns,
            key: key.to_string(),
            channel: keys::released_channel(key),
            holder: holder.to_vec(),
            next_token: 0,
        }
    }

    /// One lock: acquire on a majority, then release on a majority. Panics if a master refuses
    /// either, which on a free key means the benchmark itself is broken.
    pub fn lock_once(&mut self) {
        self.next_token += 1;
        let token = format!("floor-token-{:020}", self.next_token);
        // The keys redlock's own requests carry (the lock's and its queue's), and its arguments:
        // no ticket asked for (the floor never waits), the queue keys' TTL, a PUBLISH notice.
        let names = keys::Names::of(&self.key);
        let keys = &names.keys(&self.key)[..keys::LOCK_KEYS];
        let numkeys = keys.len().to_string();
        let request = |script: &[u8], args: &[&[u8]]| {
            let mut parts: Vec<&[u8]> = vec![b"EVALSHA", script, numkeys.as_bytes()];
            parts.extend(keys.iter().map(|k| k.as_bytes()));
            parts.extend_from_slice(args);
            encode(&parts)
        };
        let acquire = request(
            ACQUIRE.sha.as_bytes(),
            &[token.as_bytes(), b"30000", &self.holder, b"", b"20000"],
        );
        let release = request(
            RELEASE.sha.as_bytes(),
            &[
                token.as_bytes(),
                self.channel.as_bytes(),
                b"PUBLISH",
                names.wake_prefix.as_bytes(),
                names.wake_suffix.as_bytes(),
            ],
        );
        self.round(&acquire);
        self.round(&release);
    }

    /// Sends `request` to every master and returns once a majority has answered it (answers
    /// come in order on each connection, so "owes nothing" means "answered this one").
    fn round(&mut self, request: &[u8]) {
        for conn in &mut self.conns {
            (&conn.stream)
                .write_all(request)
                .expect("write to a master");
            conn.pending += 1;
        }
        let mut fds: Vec<libc::pollfd> = self
            .conns
            .iter()
            .map(|conn| libc::pollfd {
                fd: conn.stream.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while self.conns.iter().filter(|c| c.pending == 0).count() < self.quorum {
            // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd
            // structs for the duration of the call.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 5000) };
            assert!(ready > 0, "no master answered within 5 s");
            for (fd, conn) in fds.iter_mut().zip(&mut self.conns) {
                if fd.revents != 0 {
                    conn.read_answers();
                }
                fd.revents = 0;
            }
        }
    }
}

impl Conn {
    /// Reads what is there and counts the complete answers. Both scripts answer with an
    /// integer (`:1`); anything else means the lock was refused or an error came back.
    fn read_answers(&mut self) {
        let mut chunk = [0u8; 512];
        match (&self.stream).read(&mut chunk) {
            Ok(0) => panic!("a master closed the connection"),
            Ok(n) => self.unread.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) => panic!("read from a master: {e}"),
        }
        while let Some(end) = self.unread.windows(2).position(|w| w == b"\r\n") {
            let line = &self.unread[..end];
            assert_eq!(
                line,
                b":1",
                "a master refused: {}",
                String::from_utf8_lossy(line)
            );
            self.unread.drain(..end + 2);
            self.pending -= 1;
        }
    }
}

/// A command in RESP: `*<n>`, then `$<len>` and the bytes of each argument.
fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}
