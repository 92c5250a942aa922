//! `--wait forever`: waits as long as it takes, and a signal still ends the wait at once.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{Cluster, Running, describe, eventually, send_signal};

#[test]
fn wait_forever_ends_at_once_on_sigterm_and_releases_nothing_it_does_not_hold() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "patient"]));
    holder.wait_ready();
    let mut waiter = cluster
        .redlock()
        .args([
            "-v", "run", "--key", "patient", "--wait", "forever", "--", "true",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = common::Captured::stderr_of(&mut waiter);
    assert!(
        eventually(Duration::from_secs(10), || stderr
            .text()
            .contains("waiting for lock")),
        "{}",
        stderr.text()
    );
    let signalled = Instant::now();
    send_signal(waiter.id(), libc::SIGTERM);
    let status = waiter.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGTERM),
        "{}",
        stderr.finish()
    );
    assert!(signalled.elapsed() < Duration::from_secs(5));
    // The holder still holds its lock.
    assert_eq!(cluster.holding("patient", &holder.token()), 3);
    holder.open_gate();
    assert!(holder.wait_output().status.success());
}

#[test]
fn wait_forever_takes_the_lock_once_it_is_free() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "later"]));
    holder.wait_ready();
    let waiter = cluster
        .redlock()
        .args([
            "run", "--key", "later", "--wait", "forever", "--", "echo", "mine",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    holder.open_gate();
    let output = waiter.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "mine");
}

#[test]
fn a_bad_wait_says_forever_is_allowed() {
    let output = common::redlock()
        .args(["run", "--key", "k", "--wait", "always", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("forever"));
}

/// Without `--wait`, with `--wait 0` and with `--no-wait` (all three: try once), the refusal
/// says that redlock did not wait and how to, rather than "use --wait DURATION" to someone who
/// just gave `--wait 0` (issue 33).
#[test]
fn trying_once_says_it_did_not_wait_and_how_to() {
    let cluster = Cluster::start(1);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "once"]));
    holder.wait_ready();
    for flags in [&[][..], &["--wait", "0"], &["--no-wait"]] {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", "once"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(75),
            "{flags:?}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{flags:?}: {stderr}");
        assert!(
            stderr.contains("tried once without waiting: to wait for it, pass --wait DURATION")
                && stderr.contains("or --wait forever"),
            "{flags:?}: {stderr}"
        );
    }
}
