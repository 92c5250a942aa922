//! systemd's notify protocol (`NOTIFY_SOCKET`): the test plays systemd's side. It binds the
//! datagram socket (a path, or an abstract name), sets the variables systemd sets, and reads
//! every datagram redlock sends, in arrival order; a hook can look at the masters the moment
//! a datagram arrives. Each test states the promise it checks.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{
    Cluster, Inspector, Running, WAIT_FOR_GATE, describe, eventually, send_signal,
};

/// One datagram as systemd received it, with what the hook saw when it arrived.
#[derive(Clone, Debug)]
struct Datagram {
    text: String,
    seen: Option<String>,
}

type Hook = Box<dyn Fn(&str) -> Option<String> + Send>;

/// systemd's end of the notify socket.
struct Systemd {
    /// What redlock is given as NOTIFY_SOCKET.
    address: String,
    received: Arc<Mutex<Vec<Datagram>>>,
    done: Arc<AtomicBool>,
    _dir: tempfile::TempDir,
}

impl Systemd {
    /// A socket at a path in a temp dir.
    fn at_path(hook: Hook) -> Systemd {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        Systemd::listen(socket, path.to_string_lossy().into_owned(), dir, hook)
    }

    /// A socket in the abstract namespace (`@name`), as systemd uses for user managers.
    fn abstract_name(hook: Hook) -> Systemd {
        let name = format!(
            "redlock-test/{}/{}",
            std::process::id(),
            crate::common::now_ms()
        );
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let socket = UnixDatagram::bind_addr(&address).unwrap();
        Systemd::listen(
            socket,
            format!("@{name}"),
            tempfile::tempdir().unwrap(),
            hook,
        )
    }

    fn listen(socket: UnixDatagram, address: String, dir: tempfile::TempDir, hook: Hook) -> Self {
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let done = Arc::new(AtomicBool::new(false));
        let (sink, stop) = (Arc::clone(&received), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 4096];
            while !stop.load(Ordering::SeqCst) {
                if let Ok(n) = socket.recv(&mut buffer) {
                    let text = String::from_utf8_lossy(&buffer[..n]).into_owned();
                    let seen = hook(&text);
                    sink.lock().unwrap().push(Datagram { text, seen });
                }
            }
        });
        Systemd {
            address,
            received,
            done,
            _dir: dir,
        }
    }

    fn received(&self) -> Vec<Datagram> {
        self.received.lock().unwrap().clone()
    }

    /// Waits for a datagram with this line; returns it.
    fn wait_for(&self, line: &str) -> Datagram {
        let mut found = None;
        eventually(Duration::from_secs(30), || {
            found = self.find(|text| text.lines().any(|l| l.contains(line)));
            found.is_some()
        });
        found.unwrap_or_else(|| panic!("no {line:?} from redlock: {:#?}", self.received()))
    }

    fn find(&self, matches: impl Fn(&str) -> bool) -> Option<Datagram> {
        self.received().into_iter().find(|d| matches(&d.text))
    }

    /// The index of the first datagram with this line.
    fn position(&self, line: &str) -> Option<usize> {
        self.received()
            .iter()
            .position(|d| d.text.lines().any(|l| l.contains(line)))
    }
}

impl Drop for Systemd {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// A hook that says, when READY=1 arrives, how many masters hold `key`: a majority at least
/// (the lock is taken once a majority said yes; the last master's answer may still be on its
/// way).
fn holders_at_ready(cluster: &Cluster, key: &str) -> Hook {
    let ports: Vec<u16> = cluster.servers.iter().map(|s| s.port).collect();
    let key = key.to_string();
    Box::new(move |text| {
        if !text.lines().any(|line| line == "READY=1") {
            return None;
        }
        let held = ports
            .iter()
            .filter(|&&port| {
                let mut inspector = Inspector::connect(port, Duration::from_secs(2)).unwrap();
                let value: Option<String> =
                    redis::cmd("GET").arg(&key).query(&mut inspector).unwrap();
                value.is_some()
            })
            .count();
        Some(held.to_string())
    })
}

/// Whether the hook of [`holders_at_ready`] saw a majority of `n` masters holding the key.
fn held_by_a_majority(ready: &Datagram, n: usize) -> bool {
    ready
        .seen
        .as_deref()
        .and_then(|held| held.parse::<usize>().ok())
        .is_some_and(|held| held > n / 2)
}

fn nothing() -> Hook {
    Box::new(|_| None)
}

#[test]
fn the_leader_is_ready_once_it_holds_the_lock_and_the_standby_only_after_it() {
    let cluster = Cluster::start(3);
    let leader_systemd = Systemd::at_path(holders_at_ready(&cluster, "svc"));
    let standby_systemd = Systemd::at_path(holders_at_ready(&cluster, "svc"));
    let seen_env = "echo \"${NOTIFY_SOCKET-unset} ${WATCHDOG_USEC-unset}\" > \"$d/env\"";
    let mut leader = Running::start_script(
        cluster
            .redlock()
            .env("NOTIFY_SOCKET", &leader_systemd.address)
            .env("WATCHDOG_USEC", "10000000")
            .args(["run", "--key", "svc", "--ttl", "10s", "--wait", "forever"]),
        seen_env,
        WAIT_FOR_GATE,
    );
    leader.wait_ready();
    let ready = leader_systemd.wait_for("READY=1");
    assert!(held_by_a_majority(&ready, 3), "{ready:?}");
    assert!(
        ready.text.contains("STATUS=holding lock \"svc\" since"),
        "{ready:?}"
    );
    // What came before READY said where redlock was.
    let before = leader_systemd.position("READY=1").unwrap();
    assert!(
        leader_systemd.received()[..before]
            .iter()
            .any(|d| d.text.contains("STATUS=connecting to the masters")),
        "{:#?}",
        leader_systemd.received()
    );
    // The command is not the service's main process: it does not get the socket.
    let env = std::fs::read_to_string(leader.path("env")).unwrap();
    assert_eq!(env.trim(), "unset unset");

    let mut standby = Running::start(
        cluster
            .redlock()
            .env("NOTIFY_SOCKET", &standby_systemd.address)
            .args(["run", "--key", "svc", "--ttl", "10s", "--wait", "forever"]),
    );
    let waiting = standby_systemd.wait_for("place 1 of 1 in line");
    assert!(
        waiting
            .text
            .starts_with("STATUS=waiting for lock \"svc\": held by ")
            && waiting.text.contains(" since "),
        "{waiting:?}"
    );
    assert!(standby_systemd.position("READY=1").is_none());

    leader.open_gate();
    let output = leader.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let last = leader_systemd.received().pop().unwrap();
    assert!(
        last.text
            .starts_with("STOPPING=1\nSTATUS=the command exited (0); releasing"),
        "{last:?}"
    );
    assert_eq!(
        leader_systemd
            .received()
            .iter()
            .filter(|d| d.text.contains("READY=1"))
            .count(),
        1
    );

    // The hand-off: the standby says READY once it holds the lock, never before.
    standby.wait_ready();
    let ready = standby_systemd.wait_for("READY=1");
    assert!(held_by_a_majority(&ready, 3), "{ready:?}");
    let ready_at = standby_systemd.position("READY=1").unwrap();
    assert!(ready_at > standby_systemd.position("place 1 of 1").unwrap());
    standby.open_gate();
    let output = standby.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
}

/// A command that prints the notify variables it got, `unset` for a watchdog's it lacks.
const SAYS_WHAT_IT_GOT: [&str; 3] = [
    "sh",
    "-c",
    "echo \"$NOTIFY_SOCKET ${WATCHDOG_USEC-unset} ${WATCHDOG_PID-unset}\"",
];

/// WATCHDOG_PID names redlock, as systemd sets it: a shell that execs redlock keeps its pid.
fn with_watchdog_pid(cluster: &Cluster, systemd: &Systemd, usec: &str) -> Command {
    let mut cmd = crate::common::redlock_env(Command::new("sh"));
    cmd.env("REDLOCK_SERVERS", cluster.servers_env())
        .env("NOTIFY_SOCKET", &systemd.address)
        .env("WATCHDOG_USEC", usec)
        .args(["-c", "WATCHDOG_PID=$$ exec \"$@\"", "sh"])
        .arg(crate::common::redlock_binary());
    cmd
}

#[test]
fn watchdog_pings_stop_when_a_majority_is_paused_and_the_command_is_stopped() {
    let mut cluster = Cluster::start(3);
    let systemd = Systemd::at_path(nothing());
    // Pings every 100 ms; the first renewal is due 2 s after the start.
    let options = "run --key watched --ttl 6s --node-timeout 200ms --kill-after 200ms";
    let mut run =
        Running::start(with_watchdog_pid(&cluster, &systemd, "200000").args(options.split(' ')));
    run.wait_ready();
    let pings = || {
        systemd
            .received()
            .iter()
            .filter(|d| d.text == "WATCHDOG=1")
            .count()
    };
    assert!(
        eventually(Duration::from_secs(10), || pings() >= 2),
        "{:#?}",
        systemd.received()
    );
    cluster.server(0).pause();
    cluster.server(1).pause();
    let output = run.wait_output();
    cluster.server(0).resume();
    cluster.server(1).resume();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));

    let received = systemd.received();
    let ready = systemd.position("READY=1").unwrap();
    let unconfirmed = systemd
        .position("renewal not confirmed by a majority")
        .unwrap_or_else(|| panic!("{received:#?}"));
    let stopping = systemd
        .position("lost the lock")
        .unwrap_or_else(|| panic!("{received:#?}"));
    assert!(
        ready < unconfirmed && unconfirmed < stopping,
        "{received:#?}"
    );
    let pinged = |range: &[Datagram]| range.iter().any(|d| d.text == "WATCHDOG=1");
    assert!(
        !pinged(&received[..ready]),
        "a ping before READY: {received:#?}"
    );
    assert!(pinged(&received[ready..unconfirmed]), "{received:#?}");
    assert!(
        !pinged(&received[unconfirmed..]),
        "pinged after a renewal failed to keep a majority: {received:#?}"
    );
    assert!(received.last().unwrap().text.starts_with("STOPPING=1\n"));
}

#[test]
fn an_abstract_socket_is_reached_and_a_watchdog_of_another_process_is_left_alone() {
    let cluster = Cluster::start(1);
    let systemd = Systemd::abstract_name(holders_at_ready(&cluster, "abstract"));
    let output = cluster
        .redlock()
        .env("NOTIFY_SOCKET", &systemd.address)
        .env("WATCHDOG_USEC", "100000")
        .env("WATCHDOG_PID", "1")
        .args([
            "run", "--key", "abstract", "--ttl", "3s", "--", "sleep", "0.5",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let ready = systemd.wait_for("READY=1");
    assert!(held_by_a_majority(&ready, 1), "{ready:?}");
    systemd.wait_for("STOPPING=1");
    assert!(
        systemd.find(|text| text.contains("WATCHDOG=1")).is_none(),
        "{:#?}",
        systemd.received()
    );
}

#[test]
fn with_sd_notify_command_the_command_gets_the_socket_and_redlock_leaves_ready_to_it() {
    let cluster = Cluster::start(1);
    let systemd = Systemd::at_path(nothing());
    let output = with_watchdog_pid(&cluster, &systemd, "30000000")
        .args(["run", "--key", "speaks", "--sd-notify", "command", "--"])
        .args(SAYS_WHAT_IT_GOT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.trim(), format!("{} 30000000 unset", systemd.address));
    systemd.wait_for("STOPPING=1");
    let received = systemd.received();
    assert!(
        received
            .iter()
            .all(|d| !d.text.contains("READY=1") && !d.text.contains("WATCHDOG=1")),
        "{received:#?}"
    );
}

#[test]
fn a_stop_by_systemd_says_why_before_the_release() {
    let cluster = Cluster::start(1);
    let systemd = Systemd::at_path(nothing());
    let mut run = Running::start(
        cluster
            .redlock()
            .env("NOTIFY_SOCKET", &systemd.address)
            .args(["run", "--key", "stopped", "--ttl", "10s"]),
    );
    run.wait_ready();
    systemd.wait_for("READY=1");
    send_signal(run.child.id(), libc::SIGTERM);
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    let received = systemd.received();
    let why = systemd
        .position("STATUS=stopping: SIGTERM received, forwarded to the command")
        .unwrap_or_else(|| panic!("{received:#?}"));
    let last = received.last().unwrap();
    assert!(
        why < received.len() - 1
            && last.text
                == "STOPPING=1\nSTATUS=the command exited (143); releasing lock \"stopped\"",
        "{received:#?}"
    );
    assert!(cluster.key_gone_everywhere("stopped"));
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn pings(systemd: &Systemd) -> usize {
    systemd
        .received()
        .iter()
        .filter(|d| d.text == "WATCHDOG=1")
        .count()
}

/// Issue 47, item 7: `WATCHDOG_USEC=1` made redlock send WATCHDOG=1 every half microsecond
/// (388,926 datagrams in 2 s). An interval shorter than systemd's own watchdog timer can tell
/// apart (250 ms) is taken as 250 ms: a ping every 125 ms, and one warning that says so.
#[test]
fn a_watchdog_shorter_than_systemd_can_time_is_clamped_with_one_warning() {
    let cluster = Cluster::start(1);
    let systemd = Systemd::at_path(nothing());
    let mut run = Running::start(
        with_watchdog_pid(&cluster, &systemd, "1").args(["run", "--key", "spins", "--ttl", "10s"]),
    );
    run.wait_ready();
    assert!(
        eventually(Duration::from_secs(10), || pings(&systemd) >= 2),
        "{:#?}",
        systemd.received()
    );
    // Seen at once: a spin has sent thousands by the time two are seen.
    let seen = pings(&systemd);
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(seen < 50, "{seen} pings");
    let said = stderr(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("WATCHDOG_USEC \"1\"") && said.contains("250ms") && said.contains("125ms"),
        "{said}"
    );
}

/// Issue 47, item 7: values systemd never sets were ignored without a word. Each is no
/// watchdog (no WATCHDOG=1) and one warning naming the variable; the run goes on.
#[test]
fn a_watchdog_interval_systemd_never_sets_is_one_warning_and_no_ping() {
    let cluster = Cluster::start(1);
    for usec in [
        "0",
        "abc",
        "-1",
        "99999999999999999999",
        "18446744073709551615",
    ] {
        let systemd = Systemd::at_path(nothing());
        let output = with_watchdog_pid(&cluster, &systemd, usec)
            .args(["run", "--key", "odd", "--ttl", "10s", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{usec}: {}",
            describe(&output)
        );
        systemd.wait_for("STOPPING=1");
        assert_eq!(pings(&systemd), 0, "{usec}: {:#?}", systemd.received());
        let said = stderr(&output);
        assert_eq!(said.lines().count(), 1, "{usec}: {said}");
        assert!(
            said.contains(&format!(
                "WATCHDOG_USEC {usec:?} is not a watchdog interval"
            )),
            "{usec}: {said}"
        );
    }
}

/// Issue 47, item 7: a NOTIFY_SOCKET that names a missing path or a regular file reaches no
/// systemd (a Type=notify unit never becomes active); that was said only with -vv. Now once,
/// at the default verbosity, naming what is there; the command still runs.
#[test]
fn a_notify_socket_that_reaches_nothing_is_one_warning() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let missing = dir.path().join("missing");
    for (path, why) in [
        (&missing, "no such socket"),
        (&file, "it is a file, not a socket"),
    ] {
        let output = cluster
            .redlock()
            .env("NOTIFY_SOCKET", path)
            .args(["run", "--key", "nowhere", "--ttl", "10s", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let said = stderr(&output);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains(&format!("NOTIFY_SOCKET {:?}", path.to_string_lossy()))
                && said.contains(why)
                && said.contains("never becomes active"),
            "{said}"
        );
    }
}

/// Issue 47, item 10: with `--sd-notify command`, a watchdog that WATCHDOG_PID gives to
/// another process was handed to the command all the same (WATCHDOG_USEC without
/// WATCHDOG_PID reads as "yours" to sd_watchdog_enabled(3)). The command is told only what
/// systemd meant for redlock's process: here, nothing about a watchdog.
#[test]
fn with_sd_notify_command_a_watchdog_of_another_process_is_not_handed_on() {
    let cluster = Cluster::start(1);
    let systemd = Systemd::at_path(nothing());
    for pid in ["1", "not-a-pid"] {
        let output = cluster
            .redlock()
            .env("NOTIFY_SOCKET", &systemd.address)
            .env("WATCHDOG_USEC", "30000000")
            .env("WATCHDOG_PID", pid)
            .args(["run", "--key", "theirs", "--sd-notify", "command", "--"])
            .args(SAYS_WHAT_IT_GOT)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.trim(),
            format!("{} unset unset", systemd.address),
            "WATCHDOG_PID={pid}"
        );
    }
}
