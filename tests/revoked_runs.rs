//! A `run` revoked by `release --force` whose command ends before the next renewal (issue 47,
//! item 3): no renewal hears of the force, but the release `run` sends at the end does, and
//! the run exits 70 with the one line a renewal's stop says (who revoked it, why), counted
//! `revoked` in its metrics, for the lock, a semaphore's slot and a reader's share, and with
//! `--hold-min`. A force that reached too few masters to take the hold took nothing: that run
//! exits with its command's status. Deterministic: the TTL is 30 s, so the first renewal is
//! 10 s away, and the command ends when the test opens its gate, after the force returned.

use std::process::{Command, Output};
use std::time::Duration;

use crate::common::proxy::{self, Fault};
use crate::common::{Cluster, Running, describe, hostname};
use crate::force_release::{exited_with, force, force_on_first, force_on_master_0_only};
use crate::release_revoked::one_line_with;

const LOCK_LOST: i32 = 70;
const UNAVAILABLE: i32 = 69;

/// `redlock run --key key --ttl 30s OPTIONS --metrics-file …` (`redlock`: with its masters)
/// holding until its gate opens, forced by `force` while it holds; returns its output and its
/// metrics.
fn forced_run(
    mut redlock: Command,
    key: &str,
    options: &[&str],
    force: impl FnOnce() -> Output,
) -> (Output, String) {
    let metrics = tempfile::tempdir().unwrap();
    let metrics_file = metrics.path().join("run.prom");
    let mut running = Running::start(
        redlock
            .args(["run", "--key", key, "--ttl", "30s"])
            .args(options)
            .arg("--metrics-file")
            .arg(&metrics_file),
    );
    running.wait_ready();
    let forced = force();
    assert!(
        matches!(forced.status.code(), Some(0 | UNAVAILABLE)),
        "{}",
        describe(&forced)
    );
    running.open_gate();
    let output = running.wait_output();
    let text = std::fs::read_to_string(&metrics_file).unwrap_or_default();
    (output, text)
}

/// Asserts the one line of a revocation the release found: `what` lost (`lock "k": lost the
/// lock`), by the force of this host, with `reason`, after the command ended by itself.
fn says_revoked_after_the_end(stderr: &str, what: &str, reason: &str) {
    one_line_with(
        stderr,
        &[
            format!("redlock: {what}: it was revoked by `redlock release --force` (user "),
            format!(" on {} (pid ", hostname()),
            format!("reason \"{reason}\")"),
            "; the command had already ended (exit 0), before a renewal could stop it".to_string(),
        ],
    );
}

/// A `run` of `key` with `options`, forced with `reason` while it holds, its command ending
/// right after: exit 70, the line naming `what` it lost, counted `revoked`.
fn revoked_after_the_end(cluster: &Cluster, key: &str, options: &[&str], what: &str) {
    let reason = format!("{key} hung");
    let (output, metrics) = forced_run(cluster.redlock(), key, options, || {
        force(cluster, key, &reason)
    });
    let stderr = exited_with(&output, LOCK_LOST);
    says_revoked_after_the_end(&stderr, what, &reason);
    counted_revoked(&metrics);
    // Its release opened the key (`--hold-min` leaves nothing to keep either).
    assert!(cluster.key_gone_everywhere(key));
}

/// Asserts that the metrics count one revoked run, and no success.
fn counted_revoked(text: &str) {
    assert!(
        text.lines()
            .any(|l| l.contains("outcome=\"revoked\"") && l.ends_with(" 1")),
        "{text}"
    );
    assert!(
        !text.contains("redlock_last_success_timestamp_seconds{"),
        "{text}"
    );
}

#[test]
fn a_revoked_run_whose_command_ends_before_a_renewal_exits_70_naming_who() {
    let cluster = Cluster::start(3);
    revoked_after_the_end(&cluster, "deploy", &[], "lock \"deploy\": lost the lock");
}

#[test]
fn a_revoked_slot_or_share_whose_command_ends_before_a_renewal_exits_70_naming_who() {
    let cluster = Cluster::start(3);
    let slot = "semaphore \"nightly\": lost its slot";
    revoked_after_the_end(&cluster, "nightly", &["--limit", "2"], slot);
    revoked_after_the_end(
        &cluster,
        "docs",
        &["--shared"],
        "lock \"docs\": lost the lock",
    );
}

#[test]
fn a_revoked_run_with_hold_min_exits_70_too() {
    let cluster = Cluster::start(3);
    revoked_after_the_end(
        &cluster,
        "cron",
        &["--hold-min", "1m"],
        "lock \"cron\": lost the lock",
    );
}

#[test]
fn a_force_on_a_majority_but_not_all_is_found_by_the_release_whatever_answers_first() {
    // Masters 0 and 1 hold the revocation, master 2 still has the token, and master 1
    // answers the run last: the release decides on master 0's acknowledgement and master 2's
    // deletion, and must hear master 1 too to tell that the force took the hold.
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    let mut redlock = crate::common::redlock();
    redlock.env("REDLOCK_SERVERS", proxy::servers_env(&proxies));
    let (output, _) = forced_run(redlock, "db", &[], || {
        proxies[1].set(Fault::Delay(Duration::from_millis(300)));
        force_on_first(&cluster, 2, "db", 1, &["--reason", "most"])
    });
    let stderr = exited_with(&output, LOCK_LOST);
    says_revoked_after_the_end(&stderr, "lock \"db\": lost the lock", "most");
}

#[test]
fn a_force_on_a_minority_takes_nothing_and_the_run_exits_with_its_command() {
    let cluster = Cluster::start(3);
    let (output, metrics) = forced_run(cluster.redlock(), "db", &[], || {
        force_on_master_0_only(&cluster, "db", 2, &["--reason", "partial"])
    });
    // The holder kept the lock on a quorum to the end, as its renewals would have.
    assert_eq!(exited_with(&output, 0), "");
    assert!(
        !metrics
            .lines()
            .any(|l| l.contains("outcome=\"revoked\"") && l.ends_with(" 1")),
        "{metrics}"
    );
    assert!(cluster.key_gone_everywhere("db"));
}
