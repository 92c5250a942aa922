//! The guard process, against real masters: it keeps the promise "the command never runs past
//! the lock's validity" when redlock itself cannot, because redlock is stopped.

use crate::common;

use std::os::unix::process::CommandExt;
use std::time::Duration;

use crate::common::procfs::stat_fields;
use crate::common::{Cluster, Running, describe, eventually, live_group_members, now_ms, procfs};

/// Every key on every master has a TTL (none would stay forever if its holder vanished).
fn assert_every_key_expires(cluster: &Cluster) {
    for server in &cluster.servers {
        for key in server.keys() {
            assert_ne!(
                server.pttl(&key),
                -1,
                "{key} on {} has no TTL",
                server.url()
            );
        }
    }
}

/// The latest instant, on the test's clock in ms, at which the lock `key` can still be valid
/// for its holder: no later than the moment the last master holding it will expire it.
fn validity_upper_bound_ms(cluster: &Cluster, key: &str) -> u64 {
    cluster
        .servers
        .iter()
        .filter_map(|server| {
            let pttl = server.pttl(key);
            let read_at = now_ms();
            (pttl > 0).then(|| read_at + pttl as u64)
        })
        .max()
        .expect("no master holds the lock")
}

#[test]
fn the_guard_has_a_group_of_its_own_and_only_its_pipe() {
    let cluster = Cluster::start(1);
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "guard", "--ttl", "5s"]),
    );
    let command = run.wait_ready();
    let redlock = run.child.id() as i32;
    let guard = procfs::guard_of(redlock, command);
    // The guard leaves redlock's group right after the fork (both sides call setpgid), and it
    // closes what it inherited; on a busy machine neither may have run yet when the command
    // is ready: wait for it to settle, then look.
    let group = || stat_fields(guard).unwrap()[2].clone();
    eventually(Duration::from_secs(5), || group() == guard.to_string());
    assert_eq!(
        group(),
        guard.to_string(),
        "the guard does not lead its group"
    );
    let fds = || -> Vec<String> {
        std::fs::read_dir(format!("/proc/{guard}/fd"))
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
            .map(|link| link.to_string_lossy().into_owned())
            .collect()
    };
    let cwd = || std::fs::read_link(format!("/proc/{guard}/cwd")).unwrap();
    eventually(Duration::from_secs(5), || {
        fds().len() == 1 && cwd() == std::path::Path::new("/")
    });
    let fds = fds();
    assert_eq!(fds.len(), 1, "the guard holds more than its pipe: {fds:?}");
    assert!(fds[0].starts_with("pipe:"), "{fds:?}");
    assert_eq!(cwd(), std::path::Path::new("/"));
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // Dismissed, it leaves without killing anything and without being waited for.
    assert!(eventually(Duration::from_secs(5), || stat_fields(guard)
        .is_none_or(|f| f[0] == "Z")));
}

/// redlock stopped (its whole process group, as `kill -STOP -PGID` or a debugger would) while
/// the command runs: renewal stops, the validity runs out. The guard, not stopped with it,
/// kills the command's whole group before the validity ends; a second `redlock run` gets the
/// lock only after that. Resumed, redlock says in one line that the lock was lost while it was
/// stopped, exits 70, and does not release the lock its successor now holds.
#[test]
fn a_stopped_redlock_cannot_let_the_command_outlive_the_lock() {
    let cluster = Cluster::start(3);
    let mut first = cluster.redlock();
    first
        .args(["run", "--key", "stopped", "--ttl", "2s"])
        .process_group(0);
    // A grandchild in the command's group, and a heartbeat every 20 ms until it is killed.
    let mut run = Running::start_script(
        &mut first,
        "sleep 600 &",
        "while :; do date +%s%3N >> \"$d/beats\"; sleep 0.02; done",
    );
    let group = run.wait_ready();
    let redlock_group = run.child.id() as i32;
    send_signal_group(redlock_group, libc::SIGSTOP);
    let valid_until = validity_upper_bound_ms(&cluster, "stopped");
    assert_every_key_expires(&cluster);

    let mut second = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "stopped", "--wait", "30s"]),
        "date +%s%3N > \"$d/got\"",
        common::WAIT_FOR_GATE,
    );
    second.wait_ready();
    let got: u64 = std::fs::read_to_string(second.path("got"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let beats = std::fs::read_to_string(run.path("beats")).unwrap();
    let last_beat: u64 = beats
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .max()
        .unwrap();
    assert!(
        last_beat < valid_until,
        "the command ran {} ms past the lock's validity",
        last_beat - valid_until
    );
    assert!(
        last_beat < got,
        "the command ran {} ms after another redlock took the lock",
        last_beat - got
    );
    // The whole group, the grandchild too, and not only its heartbeat.
    assert!(
        eventually(Duration::from_secs(5), || live_group_members(group)
            .is_empty()),
        "still running without the lock: {:?}",
        live_group_members(group)
    );
    let successor = second.token();
    assert_eq!(cluster.holding("stopped", &successor), 3);

    send_signal_group(redlock_group, libc::SIGCONT);
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("lock \"stopped\": lost the lock")
            && lines[0].contains("while redlock was stopped"),
        "{stderr}"
    );
    // Its release (compare-and-delete) left the successor's lock alone.
    assert_eq!(cluster.holding("stopped", &successor), 3);
    assert_every_key_expires(&cluster);
    second.open_gate();
    let output = second.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("stopped"));
    assert_every_key_expires(&cluster);
}

fn send_signal_group(group: i32, signal: i32) {
    // SAFETY: kill takes plain integers.
    let rc = unsafe { libc::kill(-group, signal) };
    assert_eq!(rc, 0, "kill(-{group}, {signal})");
}

/// redlock stopped, every master healthy, past the moment the command had to be sent SIGTERM
/// but before the guard's deadline: resumed, it stops the command (exit 70) and says that it
/// did not run, not that no renewal reached the masters (none was even tried).
#[test]
fn a_stop_of_redlock_that_leaves_too_little_validity_says_so() {
    let cluster = Cluster::start(3);
    let mut run = Running::start(cluster.redlock().args([
        "run",
        "--key",
        "stalled",
        "--ttl",
        "10s",
        "--kill-after",
        "5s",
    ]));
    run.wait_ready();
    // Stopped before the first renewal was due (TTL/3).
    crate::common::send_signal(run.child.id(), libc::SIGSTOP);
    // The key expires at `expires` (a master's reply); the validity ends before that, so the
    // SIGTERM deadline (validity − margin − 5 s) has passed by `expires` − 5 s, and the guard's
    // (validity − margin) is about 4.5 s later.
    let expires = validity_upper_bound_ms(&cluster, "stalled");
    while now_ms() < expires - 5_000 {
        std::thread::sleep(Duration::from_millis(20));
    }
    crate::common::send_signal(run.child.id(), libc::SIGCONT);
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("lock \"stalled\": lost the lock: redlock did not run for ")
            && stderr.contains(
                "which left too little validity to renew the lock and still stop the command \
                 within --kill-after 5s"
            )
            && !stderr.contains("no renewal reached"),
        "{stderr}"
    );
    assert!(cluster.key_gone_everywhere("stalled"));
}
