//! The test harness itself: the ports it picks and the fault proxy, each fault checked on the
//! bytes a client sees, against a real master.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::proxy::{Fault, GARBAGE, OVERSIZED_HEADER, Proxy};
use crate::common::{Cluster, TEST_PORTS, eventually, free_port, listens_on};

const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

/// A raw client connection to `proxy`, with a read timeout so that no test hangs.
fn connect(proxy: &Proxy) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", proxy.port())).expect("connect to the proxy");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
}

/// Sends PING and reads what comes back within `patience`: the bytes, and whether the
/// connection was closed.
fn ping(stream: &mut TcpStream, patience: Duration) -> (Vec<u8>, bool) {
    stream.write_all(PING).expect("send PING");
    stream.set_read_timeout(Some(patience)).unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    let deadline = Instant::now() + patience;
    while Instant::now() < deadline && !got.ends_with(b"\r\n") {
        match read_on(stream, &mut chunk) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(_) => break,
        }
    }
    (got, false)
}

/// One read that goes on after EINTR: with a read timeout set, a SIGCHLD meant for another
/// test's thread ends the read with it (see common/inspect.rs), and that is no answer.
fn read_on(stream: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match stream.read(buf) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[test]
fn ports_are_below_the_ephemeral_range_and_servers_are_checked_to_be_ours() {
    for _ in 0..20 {
        assert!(TEST_PORTS.contains(&free_port()));
    }
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    assert!(TEST_PORTS.contains(&server.port));
    let proxy = Proxy::before(server);
    assert!(TEST_PORTS.contains(&proxy.port()));
    // This process listens on the proxy's port, not on the server's.
    assert!(listens_on(std::process::id(), proxy.port()));
    assert!(!listens_on(std::process::id(), server.port));
}

#[test]
fn pass_blackhole_and_delay() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::before(&cluster.servers[0]);
    let mut stream = connect(&proxy);
    assert_eq!(
        ping(&mut stream, Duration::from_secs(5)),
        (b"+PONG\r\n".to_vec(), false)
    );

    proxy.set(Fault::Blackhole);
    // Nothing comes back, and the connection stays open.
    assert_eq!(
        ping(&mut stream, Duration::from_millis(300)),
        (vec![], false)
    );
    let mut fresh = connect(&proxy);
    assert_eq!(
        ping(&mut fresh, Duration::from_millis(300)),
        (vec![], false)
    );
    // The blackholed requests never reached the master: once passing again, each connection
    // gets exactly the answer to its next request.
    proxy.set(Fault::Pass);
    assert_eq!(
        ping(&mut stream, Duration::from_secs(5)),
        (b"+PONG\r\n".to_vec(), false)
    );
    assert_eq!(
        ping(&mut fresh, Duration::from_secs(5)),
        (b"+PONG\r\n".to_vec(), false)
    );

    proxy.set(Fault::Delay(Duration::from_millis(200)));
    let start = Instant::now();
    assert_eq!(
        ping(&mut stream, Duration::from_secs(5)),
        (b"+PONG\r\n".to_vec(), false)
    );
    // Delayed both ways: at least twice the delay (a lower bound; load only adds to it).
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn cut_garbage_and_reset() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::before(&cluster.servers[0]);

    proxy.set(Fault::CutReply(3));
    let mut stream = connect(&proxy);
    assert_eq!(
        ping(&mut stream, Duration::from_secs(5)),
        (b"+PO".to_vec(), true)
    );

    proxy.set(Fault::Garbage);
    let mut stream = connect(&proxy);
    let (got, closed) = ping(&mut stream, Duration::from_secs(5));
    assert_eq!((got.as_slice(), closed), (GARBAGE, false));
    // The master ran the request: garbage replaces an answer, it does not prevent the work.
    proxy.set(Fault::Pass);
    stream
        .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
        .unwrap();
    let mut reply = [0u8; 5];
    stream.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"+OK\r\n");
    assert_eq!(cluster.servers[0].get("k").as_deref(), Some("v"));

    let mut other = connect(&proxy);
    assert_eq!(ping(&mut other, Duration::from_secs(5)).0, b"+PONG\r\n");
    assert!(eventually(Duration::from_secs(5), || proxy
        .open_connections()
        == 2));
    proxy.reset();
    for stream in [&mut stream, &mut other] {
        let mut byte = [0u8; 1];
        assert_eq!(
            read_on(stream, &mut byte).unwrap_or(0),
            0,
            "not closed by reset"
        );
    }
    assert_eq!(proxy.open_connections(), 0);
    // New connections work as the fault says.
    let mut fresh = connect(&proxy);
    assert_eq!(ping(&mut fresh, Duration::from_secs(5)).0, b"+PONG\r\n");
}

#[test]
fn oversized_and_deeply_nested_replies_stream_until_the_client_leaves() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::before(&cluster.servers[0]);
    for (fault, head, unit) in [
        (Fault::Oversized, OVERSIZED_HEADER, b"x".as_slice()),
        (
            Fault::DeepNesting,
            b"*1\r\n".as_slice(),
            b"*1\r\n".as_slice(),
        ),
    ] {
        proxy.set(fault);
        let mut stream = connect(&proxy);
        stream.write_all(PING).unwrap();
        let mut got = vec![0u8; 4 << 20];
        stream.read_exact(&mut got).expect("4 MiB of reply");
        assert!(got.starts_with(head), "{fault:?}");
        let body = &got[head.len()..];
        assert!(
            body.chunks(unit.len())
                .take(body.len() / unit.len())
                .all(|c| c == unit),
            "{fault:?}"
        );
        drop(stream);
        // Once the client is gone, the stream stops and the connection is forgotten.
        assert!(
            eventually(Duration::from_secs(5), || proxy.open_connections() == 0),
            "{fault:?}: still streaming"
        );
    }
}

/// Issue 32's `KEYS: Interrupted system call`: a child exiting while the thread that spawned it
/// is inside its next spawn (every signal blocked there) leaves SIGCHLD pending, and the kernel
/// wakes another thread to take it, whose socket read with a timeout then ends with EINTR (see
/// common/inspect.rs). The helpers' reads go on after it: with the redis crate's own
/// connection in place of `Server::connection`, most of these commands fail.
#[test]
fn helper_queries_survive_a_spawning_thread() {
    let cluster = Cluster::start(1);
    let spawning = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spawner = {
        let spawning = spawning.clone();
        std::thread::spawn(move || {
            let mut children = std::collections::VecDeque::new();
            while spawning.load(std::sync::atomic::Ordering::Relaxed) {
                children.push_back(std::process::Command::new("true").spawn().unwrap());
                // Reap as we go, but leave some running: their exits must land while this
                // thread is inside the next spawn.
                if children.len() > 8 {
                    children.pop_front().unwrap().wait().unwrap();
                }
            }
            for mut child in children {
                child.wait().unwrap();
            }
        })
    };
    let mut connection = cluster.servers[0].connection();
    let mut failures = Vec::new();
    for _ in 0..10 {
        // Waits 100 ms for a reply, the window for a SIGCHLD to land in.
        let reply: redis::RedisResult<Option<Vec<String>>> = redis::cmd("BLPOP")
            .arg("nothing")
            .arg(0.1)
            .query(&mut connection);
        if let Err(error) = reply {
            failures.push(error.to_string());
        }
    }
    spawning.store(false, std::sync::atomic::Ordering::Relaxed);
    spawner.join().unwrap();
    assert!(failures.is_empty(), "{failures:?}");
}

/// The signals a test process hands on, as this process (below) reads them from /proc.
#[test]
#[ignore = "a probe, run by the_tests_start_redlock_with_default_signal_actions"]
fn signal_actions_probe() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let ignored = status.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
    println!("probe {ignored}");
}

/// A suite started in the background (`scripts/test &`) begins with SIGINT and SIGQUIT
/// ignored, and redlock keeps an inherited SIG_IGN: the tests that send them waited forever.
/// The test process resets them before `main` (common/dispositions.rs): this runs this very
/// binary with SIGINT, SIGQUIT and SIGTERM ignored, and its probe finds none of them ignored.
#[test]
fn the_tests_start_redlock_with_default_signal_actions() {
    use std::os::unix::process::CommandExt;
    let mut probe = std::process::Command::new(std::env::current_exe().unwrap());
    probe.args([
        "--ignored",
        "--exact",
        "--nocapture",
        "harness::signal_actions_probe",
    ]);
    // SAFETY: signal takes plain integers and is async-signal-safe.
    unsafe {
        probe.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                libc::signal(signal, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    let output = probe.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("probe SigIgn:"))
        .unwrap_or_else(|| panic!("no probe line: {stdout}"));
    let ignored = u64::from_str_radix(line.trim(), 16).unwrap();
    for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
        assert_eq!(
            ignored & (1 << (signal - 1)),
            0,
            "signal {signal} ignored: {line}"
        );
    }
}
