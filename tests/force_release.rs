//! `release --force` (issue 38; the protocol and its argument are in
//! src/lock/kinds/revoke.rs): it revokes whoever holds the lock without their token, and never
//! makes two holders. A revoked `run` stops its command (exit 70) naming who revoked it, from
//! where and why, and its release opens the key for the next waiter, woken by a notice; a
//! holder whose supervisor is stopped is waited out; the force counts on a majority only; a
//! revoked token cannot renew, even after a pause; a foreign client's `SET NX` fails while
//! the key is revoked; nothing is left without a TTL. Orders are checked from the processes'
//! own timestamps, never by timing.

use std::process::Output;
use std::time::Duration;

use crate::common::{
    Cluster, Running, describe, eventually, hostname, live_group_members, send_signal,
};

const LOCK_LOST: i32 = 70;
const UNAVAILABLE: i32 = 69;
const USAGE: i32 = 64;
const NOTHING_HELD: i32 = 79;

/// A command that writes the time (ns) it ends at into `$d/ended` when it is sent SIGTERM.
pub(crate) const ENDS_ON_TERM: &str = "trap 'date +%s%N > \"$d/ended\"; exit 143' TERM";
/// A body that stays until it is stopped, and says every few ms that it still runs.
pub(crate) const ALIVE: &str =
    "while :; do date +%s%N > \"$d/alive.tmp\"; mv \"$d/alive.tmp\" \"$d/alive\"; sleep 0.02; done";
/// A setup that writes the time (ns) the command starts at into `$d/started`.
pub(crate) const STARTED: &str = "date +%s%N > \"$d/started\"";

pub(crate) fn force(cluster: &Cluster, key: &str, reason: &str) -> Output {
    cluster
        .redlock()
        .args(["release", "--force", "--key", key, "--reason", reason])
        .output()
        .unwrap()
}

/// `release --force --key key` with `args`, sent to master 0 of `cluster` and to `dead` more
/// masters that nobody listens on, so that it reaches a minority: a paused master would not
/// do, since it still runs the force it has on its wire once resumed.
pub(crate) fn force_on_master_0_only(
    cluster: &Cluster,
    key: &str,
    dead: usize,
    args: &[&str],
) -> Output {
    force_on_first(cluster, 1, key, dead, args)
}

/// As [`force_on_master_0_only`], sent to the first `reached` masters of `cluster`.
pub(crate) fn force_on_first(
    cluster: &Cluster,
    reached: usize,
    key: &str,
    dead: usize,
    args: &[&str],
) -> Output {
    let urls = cluster.urls()[..reached]
        .iter()
        .map(ToString::to_string)
        .chain((0..dead).map(|_| format!("redis://127.0.0.1:{}", crate::common::free_port())))
        .collect::<Vec<String>>();
    crate::common::redlock()
        .env("REDLOCK_SERVERS", urls.join(","))
        .args([
            "release",
            "--force",
            "--key",
            key,
            "--node-timeout",
            "300ms",
        ])
        .args(args)
        .output()
        .unwrap()
}

/// Asserts that `output` exited with `code`; returns its stderr.
pub(crate) fn exited_with(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code), "{}", describe(output));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub(crate) fn read_ns(path: &std::path::Path) -> u128 {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.trim().parse().expect("a time in ns")
}

/// Waits until one waiter is in `key`'s queue (on the first master).
pub(crate) fn wait_queued(cluster: &Cluster, key: &str) {
    let queued = || {
        let queued: i64 = redis::cmd("ZCARD")
            .arg(redlock_cli::lock::keys::queue(key))
            .query(&mut cluster.servers[0].connection())
            .expect("ZCARD");
        queued == 1
    };
    assert!(
        eventually(Duration::from_secs(20), queued),
        "nobody queued for {key}"
    );
}

fn acquire(cluster: &Cluster, key: &str) -> String {
    let output = cluster
        .redlock()
        .args(["acquire", "--key", key, "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A foreign Redlock client's attempt on master `i`: `SET key x NX PX 10000`, true when it
/// took the key.
fn foreign_set_nx(cluster: &Cluster, i: usize, key: &str) -> bool {
    let set: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg("foreign")
        .arg("NX")
        .arg("PX")
        .arg(10_000)
        .query(&mut cluster.servers[i].connection())
        .expect("SET NX");
    set.is_some()
}

#[test]
fn a_forced_run_stops_names_who_and_the_next_enters_only_after_it_is_dead() {
    let cluster = Cluster::start(3);
    let metrics = tempfile::tempdir().unwrap();
    let metrics_of = |name: &str| metrics.path().join(format!("{name}.prom"));
    let mut holder = Running::start_script(
        cluster
            .redlock()
            .args([
                "run",
                "--key",
                "deploy",
                // Renewals every 2.5 s, half-way between the first waiter's 1 s timer turns:
                // the revoked holder's release comes far from one, so the turn it starts is
                // told from a timer's (a turn at the same moment counts as a heartbeat).
                "--ttl",
                "7500ms",
                "--kill-after",
                "1s",
            ])
            .arg("--metrics-file")
            .arg(metrics_of("holder")),
        ENDS_ON_TERM,
        ALIVE,
    );
    let group = holder.wait_ready();
    // The next command looks for the old one's group itself, as it starts.
    let next_setup = format!(
        "{STARTED}\nif kill -0 -{group} 2>/dev/null; then echo alive > \"$d/old_group\"; fi"
    );
    let mut next = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--ttl", "3s", "--wait", "60s"])
            .arg("--metrics-file")
            .arg(metrics_of("next")),
        &next_setup,
        "",
    );
    // The waiter is in line before the force.
    wait_queued(&cluster, "deploy");

    let forced = cluster
        .redlock()
        .args([
            "release",
            "--force",
            "--key",
            "deploy",
            "--reason",
            "runner hung",
        ])
        .arg("--metrics-file")
        .arg(metrics_of("force"))
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let said = String::from_utf8_lossy(&forced.stdout);
    assert!(
        said.contains("revoked the holder") && said.contains("on 3 masters"),
        "{said}"
    );

    let output = holder.wait_output();
    let stderr = exited_with(&output, LOCK_LOST);
    assert!(
        stderr.contains("revoked by `redlock release --force`")
            && stderr.contains(&format!("on {}", hostname()))
            && stderr.contains("reason \"runner hung\""),
        "{stderr}"
    );
    next.wait_ready();
    // From the processes' own clocks: the old command ended before the next one started; and
    // from the next command itself: nothing of the old group was left when it started.
    let ended = read_ns(&holder.path("ended"));
    let started = read_ns(&next.path("started"));
    assert!(
        ended <= started,
        "old command ended at {ended}, next started at {started}"
    );
    assert!(read_ns(&holder.path("alive")) <= started);
    assert!(
        !next.path("old_group").exists(),
        "the old command's group still had a process when the next command started"
    );
    assert!(live_group_members(group).is_empty());
    next.open_gate();
    let output = next.wait_output();
    assert!(output.status.success(), "{}", describe(&output));

    // Woken by the revoked holder's release (its notice), not by a poll; each file counts its
    // own side.
    let text = |name: &str| std::fs::read_to_string(metrics_of(name)).unwrap();
    let line = |name: &str, needle: &str| {
        let text = text(name);
        assert!(
            text.lines()
                .any(|l| l.contains(needle) && l.ends_with(" 1")),
            "{name}: no {needle} 1 in\n{text}"
        );
    };
    line("holder", "outcome=\"revoked\"");
    line("force", "outcome=\"forced\"");
    line("next", "cause=\"notice\"");
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}

#[test]
fn a_holder_whose_supervisor_is_stopped_is_waited_out_and_cannot_renew_when_resumed() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "cron", "--ttl", "3s", "--kill-after", "1s"]),
        "",
        ALIVE,
    );
    holder.wait_ready();
    let old_token = holder.token();
    let redlock_pid = holder.child.id();
    send_signal(redlock_pid, libc::SIGSTOP);

    let forced = force(&cluster, "cron", "host froze");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let mut next = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "cron", "--ttl", "30s", "--wait", "60s"]),
        STARTED,
        crate::common::WAIT_FOR_GATE,
    );
    next.wait_ready();
    let next_token = next.token();
    let started = read_ns(&next.path("started"));

    // Resumed, the old holder cannot renew: its token is gone, the next holder keeps a majority.
    send_signal(redlock_pid, libc::SIGCONT);
    exited_with(&holder.wait_output(), LOCK_LOST);
    // The old command was killed by the guard at its validity, before the next one started:
    // the last time it said it was alive (read once it is certainly dead) is before that.
    assert!(read_ns(&holder.path("alive")) <= started);
    assert!(cluster.holding("cron", &next_token) >= 2);
    assert_eq!(cluster.holding("cron", &old_token), 0);
    next.open_gate();
    assert!(next.wait_output().status.success());
}

#[test]
fn a_force_counts_on_a_majority_and_keeps_the_key_closed_to_foreign_clients() {
    let mut cluster = Cluster::start(3);
    let token = acquire(&cluster, "db");
    cluster.server(2).pause();
    let forced = force(&cluster, "db", "");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    assert!(String::from_utf8_lossy(&forced.stdout).contains("on 2 masters"));

    // Closed on the majority it reached: a foreign client's SET NX fails there.
    assert!(!foreign_set_nx(&cluster, 0, "db"));
    assert!(!foreign_set_nx(&cluster, 1, "db"));
    // The revoked token cannot renew, and hears by whom.
    let extend = cluster
        .redlock()
        .args(["extend", "--key", "db", "--token", &token, "--ttl", "30s"])
        .output()
        .unwrap();
    let stderr = exited_with(&extend, LOCK_LOST);
    assert!(
        stderr.contains("was revoked by") && stderr.contains("no reason given"),
        "{stderr}"
    );
    cluster.server(2).resume();
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );

    // Its release says it stopped: the key opens at once, everywhere.
    let release = cluster
        .redlock()
        .args(["release", "--key", "db", "--token", &token])
        .output()
        .unwrap();
    assert!(release.status.success(), "{}", describe(&release));
    assert!(cluster.key_gone_everywhere("db"));
}

#[test]
fn a_force_that_reaches_a_minority_does_not_count() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "half");
    let forced = force_on_master_0_only(&cluster, "half", 2, &[]);
    let stderr = exited_with(&forced, UNAVAILABLE);
    assert!(
        stderr.contains("the force reached 1 master (it needs 2)"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The holder keeps the lock: its renewals reach a majority.
    let extend = cluster
        .redlock()
        .args(["extend", "--key", "half", "--token", &token, "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(extend.status.success(), "{}", describe(&extend));
    assert_eq!(cluster.holding("half", &token), 2);
    // Sent again to all, the force completes.
    assert_eq!(force(&cluster, "half", "again").status.code(), Some(0));
}

#[test]
fn nothing_held_and_bad_uses_have_their_own_codes() {
    let cluster = Cluster::start(3);
    let output = force(&cluster, "idle", "just in case");
    assert_eq!(
        output.status.code(),
        Some(NOTHING_HELD),
        "{}",
        describe(&output)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing was revoked"));
    for args in [
        &["release", "--force", "--key", "k", "--token", "t"][..],
        &["release", "--key", "k", "--reason", "why"][..],
    ] {
        let output = cluster.redlock().args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(USAGE),
            "{args:?}: {}",
            describe(&output)
        );
    }
    // A token in the environment (after `eval "$(redlock acquire --format env)"`) is no
    // obstacle: only one on the command line is refused.
    let output = cluster
        .redlock()
        .env("REDLOCK_TOKEN", "0123456789abcdef")
        .args(["release", "--force", "--key", "idle"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(NOTHING_HELD),
        "{}",
        describe(&output)
    );
    let long = "x".repeat(300);
    let output = force(&cluster, "idle", &long);
    assert_eq!(output.status.code(), Some(USAGE), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at most 256 bytes"));
    let output = cluster
        .redlock()
        .args(["release", "--key", "k", "--token", "__redlock:revoked"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(USAGE), "{}", describe(&output));
}

#[test]
fn status_and_list_show_who_revoked_when_why_and_until_when() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "shown");
    let forced = force(&cluster, "shown", "INC-7: runner hung");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let run = |args: &[&str]| {
        let output = cluster.redlock().args(args).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let said = "reason \"INC-7: runner hung\"";
    for text in [run(&["status", "--key", "shown"]), run(&["list"])] {
        assert!(
            text.contains("is revoked by user ")
                && text.contains(&format!("on {} (pid ", hostname()))
                && text.contains(said)
                && text.contains("at the latest"),
            "{text}"
        );
    }
    let status: serde_json::Value =
        serde_json::from_str(&run(&["status", "--key", "shown", "--json"])).unwrap();
    let list: serde_json::Value = serde_json::from_str(&run(&["list", "--json"])).unwrap();
    for revoked in [&status["revoked"], &list["locks"][0]["revoked"]] {
        assert_eq!(revoked["reason"], "INC-7: runner hung", "{revoked}");
        assert_eq!(revoked["by"]["host"], hostname().as_str(), "{revoked}");
        assert_eq!(revoked["revoked"][0]["token"], token.as_str(), "{revoked}");
        let (at, until) = (&revoked["at_ms"], &revoked["until_ms"]);
        assert!(at.as_u64().unwrap() < until.as_u64().unwrap(), "{revoked}");
    }
}

#[test]
fn a_force_revokes_every_reader_and_a_writer_enters_only_after_they_all_stopped() {
    let cluster = Cluster::start(3);
    let reader = || {
        let mut running = Running::start_script(
            cluster.redlock().args([
                "run",
                "--key",
                "docs",
                "--shared",
                "--ttl",
                "6s",
                "--kill-after",
                "1s",
            ]),
            ENDS_ON_TERM,
            ALIVE,
        );
        running.wait_ready();
        running
    };
    let mut readers = [reader(), reader()];
    let mut writer = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "docs", "--ttl", "6s", "--wait", "60s"]),
        STARTED,
        "",
    );
    wait_queued(&cluster, "docs");
    let forced = force(&cluster, "docs", "reindex");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let said = String::from_utf8_lossy(&forced.stdout);
    assert_eq!(said.matches("the holder ").count(), 2, "{said}");
    for reader in &mut readers {
        let stderr = exited_with(&reader.wait_output(), LOCK_LOST);
        assert!(stderr.contains("reason \"reindex\""), "{stderr}");
    }
    writer.wait_ready();
    let started = read_ns(&writer.path("started"));
    for reader in &readers {
        assert!(read_ns(&reader.path("ended")) <= started);
        assert!(read_ns(&reader.path("alive")) <= started);
    }
    assert!(writer.wait_output().status.success());
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}
