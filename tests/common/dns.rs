//! A DNS server for one name, on loopback: answers the A query for that name with one address,
//! the AAAA query for it as a real server does for a name without IPv6 (NOERROR, no answer;
//! or REFUSED, as some broken servers do, to show what a resolver makes of that), and every
//! other name with NXDOMAIN. For a resolver the test points at it through a resolv.conf.
//!
//! A resolv.conf names no port, so the server takes port 53 of an address of loopback's /8 of
//! its own (127.84.x.y): two suites at once on one machine each get one. Port 53 needs root
//! (or CAP_NET_BIND_SERVICE), as CI runs.

use std::net::{Ipv4Addr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TYPE_A: u16 = 1;
pub const TYPE_AAAA: u16 = 28;
const NOERROR: u8 = 0;
const NXDOMAIN: u8 = 3;
const REFUSED: u8 = 5;

/// What the server answers to the AAAA query for its name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Aaaa {
    /// NOERROR with no answer: the name exists, without an IPv6 address.
    Empty,
    /// REFUSED (rcode 5).
    Refused,
}

/// The server, answering until dropped.
pub struct Dns {
    pub address: Ipv4Addr,
    queries: Arc<Mutex<Vec<(String, u16)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Dns {
    /// Serves `name` (one A record: `answer`).
    pub fn start(name: &str, answer: Ipv4Addr, aaaa: Aaaa) -> Dns {
        let (socket, address) = (0..100)
            .find_map(|_| {
                let address = Ipv4Addr::new(127, 84, fastrand::u8(..), fastrand::u8(1..255));
                Some((UdpSocket::bind((address, 53)).ok()?, address))
            })
            .expect(
                "bind port 53 of a 127.84.x.y address for the test's DNS server (needs root or \
                 CAP_NET_BIND_SERVICE, as CI runs)",
            );
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let queries = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let zone = Zone {
            name: name.to_ascii_lowercase(),
            answer,
            aaaa,
        };
        let (seen, stopped) = (Arc::clone(&queries), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut packet = [0u8; 512];
            while !stopped.load(Ordering::Relaxed) {
                // A timeout (to look at `stop`), EINTR: read on.
                let Ok((n, from)) = socket.recv_from(&mut packet) else {
                    continue;
                };
                let Some(query) = Query::parse(&packet[..n]) else {
                    continue;
                };
                seen.lock().unwrap().push((query.name.clone(), query.qtype));
                let _ = socket.send_to(&zone.reply(&query), from);
            }
        });
        Dns {
            address,
            queries,
            stop,
            thread: Some(thread),
        }
    }

    /// A resolv.conf naming this server alone; one try of `timeout_s` seconds.
    pub fn resolv_conf(&self, timeout_s: u32) -> String {
        format!(
            "nameserver {}\noptions timeout:{timeout_s} attempts:1\n",
            self.address
        )
    }

    /// The (name, type) of every query so far, names in lower case.
    pub fn queries(&self) -> Vec<(String, u16)> {
        self.queries.lock().unwrap().clone()
    }

    /// Whether an A query for `name` came.
    pub fn asked_for(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.queries()
            .iter()
            .any(|(asked, qtype)| *asked == name && *qtype == TYPE_A)
    }
}

impl Drop for Dns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Zone {
    name: String,
    answer: Ipv4Addr,
    aaaa: Aaaa,
}

impl Zone {
    fn reply(&self, query: &Query) -> Vec<u8> {
        let ours = query.name == self.name;
        let (rcode, answer) = match query.qtype {
            _ if !ours => (NXDOMAIN, None),
            TYPE_A => (NOERROR, Some(self.answer)),
            TYPE_AAAA if self.aaaa == Aaaa::Refused => (REFUSED, None),
            _ => (NOERROR, None),
        };
        let mut reply = Vec::with_capacity(64);
        reply.extend_from_slice(&query.id);
        // QR, the query's opcode and RD, AA; RA, the rcode.
        reply.push(0x80 | (query.flags[0] & 0x79) | 0x04);
        reply.push(0x80 | rcode);
        let count = |n: u16| n.to_be_bytes();
        reply.extend_from_slice(&count(1));
        reply.extend_from_slice(&count(u16::from(answer.is_some())));
        reply.extend_from_slice(&count(0));
        reply.extend_from_slice(&count(0));
        reply.extend_from_slice(&query.question);
        if let Some(address) = answer {
            // The question's name (a pointer to offset 12), A, IN, TTL 60 s, 4 bytes.
            reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]);
            reply.extend_from_slice(&address.octets());
        }
        reply
    }
}

/// The part of a query the server needs: its id and flags, and its one question.
struct Query {
    id: [u8; 2],
    flags: [u8; 2],
    name: String,
    qtype: u16,
    /// The question as it came (name, type, class), echoed in the reply.
    question: Vec<u8>,
}

impl Query {
    fn parse(packet: &[u8]) -> Option<Query> {
        let header = packet.get(..12)?;
        // A query (QR clear) with one question.
        if header[2] & 0x80 != 0 || header[4..6] != [0, 1] {
            return None;
        }
        let mut labels = Vec::new();
        let mut at = 12;
        loop {
            let len = usize::from(*packet.get(at)?);
            at += 1;
            if len == 0 {
                break;
            }
            // Compression has no place in a query's one question.
            if len > 63 {
                return None;
            }
            labels.push(String::from_utf8_lossy(packet.get(at..at + len)?).to_ascii_lowercase());
            at += len;
        }
        let fixed = packet.get(at..at + 4)?;
        Some(Query {
            id: [header[0], header[1]],
            flags: [header[2], header[3]],
            name: labels.join("."),
            qtype: u16::from_be_bytes([fixed[0], fixed[1]]),
            question: packet[12..at + 4].to_vec(),
        })
    }
}
