//! `release --token` of a token that `release --force` revoked (issue 38's gap): the release
//! acknowledges the revocation, which frees what the revocation kept closed for that token,
//! and says so on one line naming who revoked it, from which host and why (as `extend` does),
//! then exits 0: the revocation kept everyone else out until this release, so nothing the
//! holder did overlapped another holder. The lock (also released by a shell script that took
//! it with `eval "$(redlock acquire --format env)"`), a semaphore's slot, a reader's share,
//! and a force that reached only a minority. A release of a token nobody revoked stays quiet.

use std::process::{Command, Output};

use crate::common::{Cluster, describe, hostname, redlock_binary};
use crate::force_release::{exited_with, force, force_on_master_0_only};
use crate::force_slots::{acquire_slot, slots_on};

const UNAVAILABLE: i32 = 69;

fn release(cluster: &Cluster, key: &str, token: &str, extra: &[&str]) -> Output {
    cluster
        .redlock()
        .args(["release", "--key", key, "--token", token])
        .args(extra)
        .output()
        .unwrap()
}

/// Asserts that `stderr` is the one line saying `what` was revoked by `reason`'s force from
/// this host, and released.
fn says_revoked(stderr: &str, what: &str, reason: &str) {
    one_line_with(
        stderr,
        &[
            format!("{what} was revoked by `redlock release --force`: user "),
            format!(" on {} (pid ", hostname()),
            format!("reason \"{reason}\""),
            "released: this release acknowledged the revocation on ".to_string(),
        ],
    );
}

/// Asserts that `stderr` is one line (beside warnings) holding every one of `needles`.
pub(crate) fn one_line_with(stderr: &str, needles: &[String]) {
    // A setup may earn a warning (`--limit 2` on 3 masters has no fault tolerance).
    let lines = stderr
        .lines()
        .filter(|l| !l.starts_with("redlock: warning:"));
    assert_eq!(lines.count(), 1, "not one line: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "no {needle:?} in: {stderr}");
    }
}

#[test]
fn a_shell_scripts_release_of_a_revoked_lock_says_who_revoked_it_and_exits_0() {
    let cluster = Cluster::start(3);
    let bin = redlock_binary();
    let metrics = tempfile::tempdir().unwrap();
    let metrics_file = metrics.path().join("deploy.prom");
    // The script takes the lock, someone forces it meanwhile, and the script releases it as
    // it always does, from REDLOCK_KEY and REDLOCK_TOKEN.
    let script = format!(
        "eval \"$({bin} acquire --key deploy --ttl 30s --format env)\" && \
         {bin} release --force --key deploy --reason 'runner 7 hung' >/dev/null 2>&1 && \
         {bin} release --metrics-file {}",
        metrics_file.display()
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .env_remove("REDLOCK_KEY")
        .env_remove("REDLOCK_TOKEN")
        .output()
        .unwrap();
    let stderr = exited_with(&output, 0);
    says_revoked(&stderr, "lock \"deploy\"", "runner 7 hung");
    assert!(
        stderr.contains("on 3 masters") || stderr.contains("on 2 masters"),
        "{stderr}"
    );
    // It opened the key, and counted the run as revoked, not lost.
    assert!(cluster.key_gone_everywhere("deploy"));
    let text = std::fs::read_to_string(&metrics_file).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("outcome=\"revoked\"") && l.ends_with(" 1")),
        "{text}"
    );

    // A release of a token nobody revoked says nothing.
    let token = cluster.acquire("deploy", &["--ttl", "30s"]);
    let quiet = release(&cluster, "deploy", &token, &[]);
    assert_eq!(exited_with(&quiet, 0), "");
}

#[test]
fn a_revoked_slots_release_says_who_revoked_it_and_frees_that_slot_alone() {
    let cluster = Cluster::start(3);
    let (a, b) = (
        acquire_slot(&cluster, "nightly"),
        acquire_slot(&cluster, "nightly"),
    );
    let forced = force(&cluster, "nightly", "both hung");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));

    let stderr = exited_with(&release(&cluster, "nightly", &a, &[]), 0);
    says_revoked(&stderr, "the slot of semaphore \"nightly\"", "both hung");
    // Its revoked slot is gone; the other revoked slot stays counted.
    for i in 0..3 {
        let members = slots_on(&cluster, i, "nightly");
        assert_eq!(members, [format!("__redlock:revoked:{b}")], "master {i}");
    }
    // Sent again, there is nothing left to acknowledge: not held (exit 70), as before.
    let again = release(&cluster, "nightly", &a, &[]);
    assert_eq!(again.status.code(), Some(70), "{}", describe(&again));
    exited_with(&release(&cluster, "nightly", &b, &[]), 0);
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}

#[test]
fn a_revoked_readers_release_says_who_revoked_it_and_the_last_one_opens_the_key() {
    let cluster = Cluster::start(3);
    let reader = || cluster.acquire("docs", &["--shared", "--ttl", "30s"]);
    let (first, second) = (reader(), reader());
    let forced = force(&cluster, "docs", "reindex");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));

    let stderr = exited_with(&release(&cluster, "docs", &first, &[]), 0);
    says_revoked(&stderr, "the reader's share of lock \"docs\"", "reindex");
    // The other revoked reader has not said it stopped: the key stays closed.
    assert!(cluster.values("docs").iter().all(Option::is_some));
    let stderr = exited_with(&release(&cluster, "docs", &second, &[]), 0);
    says_revoked(&stderr, "the reader's share of lock \"docs\"", "reindex");
    assert!(cluster.key_gone_everywhere("docs"));
}

#[test]
fn a_release_after_a_force_on_a_minority_says_on_how_many_masters() {
    let mut cluster = Cluster::start(3);
    let token = cluster.acquire("db", &["--ttl", "30s"]);
    let forced = force_on_master_0_only(&cluster, "db", 2, &["--reason", "partial"]);
    assert_eq!(
        forced.status.code(),
        Some(UNAVAILABLE),
        "{}",
        describe(&forced)
    );

    // With master 2 paused, the release decides on master 0, which acknowledges the
    // revocation, and master 1, which deletes the token: released, and said, on 1 master.
    cluster.server(2).pause();
    let stderr = exited_with(&release(&cluster, "db", &token, &[]), 0);
    says_revoked(&stderr, "lock \"db\"", "partial");
    assert!(stderr.contains("on 1 master,"), "{stderr}");
    cluster.server(2).resume();
    assert!(cluster.key_gone_everywhere("db"));
}
