//! Signals that reach redlock before its command exists (during the first round, while it
//! waits in line), and the signal mask redlock inherits.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Captured, Cluster, Running, bind_test_port, send_signal};

/// Far below the node timeout the tests give redlock (20 s): a redlock that exits within this
/// did not wait the node timeout out.
const PROMPT: Duration = Duration::from_secs(10);

/// A master that accepts connections and never answers: the kernel completes the handshake,
/// the test reads what redlock sends and says nothing back.
struct Silent {
    listener: TcpListener,
    accepted: Vec<TcpStream>,
}

impl Silent {
    fn start() -> Silent {
        Silent {
            listener: bind_test_port(),
            accepted: Vec::new(),
        }
    }

    fn url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}",
            self.listener.local_addr().unwrap().port()
        )
    }

    /// Waits until redlock connected and its first request arrived.
    fn wait_for_request(&mut self) {
        let (mut stream, _) = self.listener.accept().expect("accept");
        let mut byte = [0u8; 1];
        stream.read_exact(&mut byte).expect("a request");
        self.accepted.push(stream);
    }
}

/// Waits for `child`, failing if it takes longer than `limit` (then it is killed).
fn exits_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("redlock did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One real master and two that never answer: the first round can decide nothing before the
/// node timeout, and neither can the clean-up after it.
fn one_real_two_silent() -> (Cluster, Silent, Silent, String) {
    let cluster = Cluster::start(1);
    let (a, b) = (Silent::start(), Silent::start());
    let servers = format!("{},{},{}", cluster.urls()[0], a.url(), b.url());
    (cluster, a, b, servers)
}

fn signal_during_the_first_round(subcommand: &[&str], signal: i32) {
    let (cluster, mut a, mut b, servers) = one_real_two_silent();
    let mut redlock = crate::common::redlock()
        .env("REDLOCK_SERVERS", &servers)
        .args(subcommand)
        .args([
            "--key",
            "first-round",
            "--ttl",
            "60s",
            "--node-timeout",
            "20s",
        ])
        .args(if subcommand == ["run"] {
            &["--", "true"][..]
        } else {
            &[]
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Captured::stderr_of(&mut redlock);
    a.wait_for_request();
    b.wait_for_request();
    // The real master answers at once: its key is there by the time the silent ones got
    // their request, or soon after.
    assert!(
        crate::common::eventually(PROMPT, || cluster.values("first-round")[0].is_some()),
        "{}",
        stderr.text()
    );
    send_signal(redlock.id(), signal);
    let status = exits_within(&mut redlock, PROMPT);
    assert_eq!(status.code(), Some(128 + signal), "{}", stderr.finish());
    // What the interrupted round took was given back.
    assert!(cluster.key_gone_everywhere("first-round"));
}

#[test]
fn a_signal_during_runs_first_round_ends_it_at_once() {
    signal_during_the_first_round(&["run"], libc::SIGTERM);
}

#[test]
fn a_signal_during_acquires_first_round_ends_it_at_once() {
    signal_during_the_first_round(&["acquire"], libc::SIGINT);
}

/// Places master `i` has in the queue of `key` (a key without braces: its own hash tag).
fn places(cluster: &mut Cluster, i: usize, key: &str) -> usize {
    let mut conn = cluster.server(i).connection();
    redis::cmd("ZCARD")
        .arg(format!("__redlock:{{{key}}}:queue:{key}"))
        .query(&mut conn)
        .unwrap()
}

/// SIGUSR1 and SIGUSR2 while `run --wait` waits end the wait (128+N, the place in line given
/// back): they are not held for the command, which would die of them the moment it started.
#[test]
fn sigusr_while_waiting_ends_the_wait_and_never_reaches_the_command() {
    let mut cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "usr"]));
    holder.wait_ready();
    for signal in [libc::SIGUSR1, libc::SIGUSR2] {
        let dir = tempfile::tempdir().unwrap();
        let ran = dir.path().join("ran");
        let mut waiter = cluster
            .redlock()
            .args(["run", "--key", "usr", "--wait", "60s", "--", "touch"])
            .arg(&ran)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Captured::stderr_of(&mut waiter);
        assert!(
            crate::common::eventually(PROMPT, || (0..3)
                .all(|i| places(&mut cluster, i, "usr") == 1)),
            "the waiter never got its place: {}",
            stderr.text()
        );
        send_signal(waiter.id(), signal);
        let status = exits_within(&mut waiter, PROMPT);
        assert_eq!(status.code(), Some(128 + signal), "{}", stderr.finish());
        assert!(!ran.exists(), "the command ran");
        // Its place is gone at once, not after its lease.
        assert!((0..3).all(|i| places(&mut cluster, i, "usr") == 0));
    }
    holder.open_gate();
    assert!(holder.wait_output().status.success());
}

/// `cmd` started with `signals` blocked, as a parent that blocked them before spawning leaves
/// them (std's spawn keeps the parent's mask).
fn blocking<'a>(cmd: &'a mut Command, signals: &'static [i32]) -> &'a mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: sigemptyset, sigaddset and pthread_sigmask are async-signal-safe and touch only
    // the child's own mask and a set on its stack.
    unsafe {
        cmd.pre_exec(move || {
            let mut set = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut set);
            for &signal in signals {
                libc::sigaddset(&mut set, signal);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Ok(())
        })
    }
}

/// The SigBlk line of /proc/PID/status for `signals` blocked: a bit per signal, N − 1.
fn sigblk(signals: &[i32]) -> String {
    let bits = signals.iter().fold(0u64, |bits, s| bits | 1 << (s - 1));
    format!("SigBlk:\t{bits:016x}")
}

/// redlock started with SIGCHLD (and SIGTERM) blocked in its mask: it still hears its command
/// exit (it hung forever after it), and the command starts with the mask redlock inherited, as
/// it would without redlock in between.
#[test]
fn a_mask_blocking_sigchld_neither_hangs_run_nor_is_lost_for_the_command() {
    const BLOCKED: &[i32] = &[libc::SIGCHLD, libc::SIGTERM];
    let cluster = Cluster::start(3);
    let mut redlock = cluster.redlock();
    blocking(&mut redlock, BLOCKED)
        .args(["run", "--key", "mask", "--", "true"])
        .stderr(Stdio::piped());
    let mut child = redlock.spawn().unwrap();
    let stderr = Captured::stderr_of(&mut child);
    let status = exits_within(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{}", stderr.finish());

    let mut redlock = cluster.redlock();
    // grep itself, not through a shell: dash clears its own mask as it starts.
    let output = blocking(&mut redlock, BLOCKED)
        .args([
            "run",
            "--key",
            "mask",
            "--",
            "grep",
            "SigBlk",
            "/proc/self/status",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        crate::common::describe(&output)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        sigblk(BLOCKED)
    );
    assert!(cluster.key_gone_everywhere("mask"));
}
