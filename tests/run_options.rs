//! The cron and CI options of `run` (--hold-min, --max-duration) and the diagnostics formats.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{Cluster, Running, describe};

#[test]
fn hold_min_keeps_the_lock_after_a_quick_command_so_a_second_cron_host_skips() {
    let cluster = Cluster::start(3);
    let hold_ms = 10_000;
    let start = Instant::now();
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "cron",
            "--ttl",
            "30s",
            "--hold-min",
            "10s",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    // The key stays, set to expire when the hold ends (10 s after the start), not after the
    // full TTL (30 s): it expires by itself, with nothing left to release it. The holder
    // record goes with it.
    for key in ["cron", "__redlock:{cron}:holder:cron"] {
        let held: Vec<i64> = cluster
            .servers
            .iter()
            .map(|s| s.pttl(key))
            .filter(|ttl| *ttl > 0)
            .collect();
        // Taken after the reads: each PTTL was read at most this long after the start.
        let read_at = start.elapsed().as_millis() as i64;
        assert!(held.len() >= 2, "{key} not held on a majority: {held:?}");
        for ttl in &held {
            assert!(*ttl <= hold_ms, "{key} outlives the hold: {held:?}");
            // Not shorter than the hold either (with a few ms for rounding).
            assert!(
                *ttl >= hold_ms - read_at - 20,
                "{key} expires before the hold ends: PTTL {ttl} ms, {read_at} ms after the start"
            );
        }
    }
    // The same job fired a moment later on another host finds it taken.
    let second = cluster
        .redlock()
        .args([
            "run",
            "-q",
            "--key",
            "cron",
            "--conflict-exit-code",
            "0",
            "--",
        ])
        .args(["sh", "-c", "echo ran"])
        .output()
        .unwrap();
    assert!(second.status.success(), "{}", describe(&second));
    assert!(second.stdout.is_empty(), "the second job ran");
    assert!(
        cluster
            .servers
            .iter()
            .filter(|s| s.pttl("cron") > 0)
            .count()
            >= 2,
        "the refused job took the hold away: {:?}",
        cluster.values("cron")
    );
}

#[test]
fn hold_min_shorter_than_the_run_changes_nothing() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "long",
            "--hold-min",
            "100ms",
            "--",
            "sleep",
            "0.3",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("long"));
}

#[test]
fn max_duration_stops_the_command_releases_and_exits_124() {
    let cluster = Cluster::start(3);
    let start = Instant::now();
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "cap",
            "--ttl",
            "10s",
            "--max-duration",
            "1s",
        ])
        .args(["--", "sleep", "30"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(124), "{}", describe(&output));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("longer than --max-duration 1s"), "{stderr}");
    assert!(cluster.key_gone_everywhere("cap"));
}

#[test]
fn max_duration_kills_a_command_that_ignores_sigterm() {
    let cluster = Cluster::start(3);
    let mut run = Running::start_script(
        cluster.redlock().args([
            "run",
            "--key",
            "stubborn",
            "--ttl",
            "10s",
            "--max-duration",
            "500ms",
            "--kill-after",
            "500ms",
        ]),
        "trap '' TERM",
        "while :; do sleep 0.05; done",
    );
    let pid = run.wait_ready();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(124), "{}", describe(&output));
    assert!(!common::process_alive(pid));
    assert!(common::live_group_members(pid).is_empty());
    assert!(cluster.key_gone_everywhere("stubborn"));
}

#[test]
fn log_format_json_makes_every_stderr_line_a_json_object() {
    let cluster = Cluster::start(3);
    cluster.servers.iter().for_each(|s| s.set("taken", "other"));
    let output = cluster
        .redlock()
        .args([
            "--log-format",
            "json",
            "-vv",
            "run",
            "--key",
            "taken",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 4, "{stderr}");
    for line in &lines {
        assert!(
            line["time"].is_string() && line["message"].is_string(),
            "{line}"
        );
    }
    let last = lines.last().unwrap();
    assert_eq!(last["level"], "error");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("held by another client")
    );
    assert!(lines.iter().any(|l| l["level"] == "debug"));
}

#[test]
fn vv_says_what_each_master_answered() {
    let mut cluster = Cluster::start(3);
    cluster.server(2).kill();
    let output = cluster
        .redlock()
        .args(["-vv", "run", "--key", "talk", "--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for url in cluster.urls() {
        assert!(
            stderr.contains(&format!("acquire \"talk\": {url}")),
            "{url}: {stderr}"
        );
    }
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(stderr.contains("2 of 3 masters confirmed\n"), "{stderr}");
}
