//! Faults: masters killed, paused and restarted around `redlock run`, and redlock itself
//! killed. Each test states the promise it checks.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{
    Cluster, describe, eventually, live_group_members, now_ms, process_alive, send_signal,
    wait_for_file,
};

/// Reads the holder record redlock stored beside the lock (from any master that has it).
fn holder_since_ms(cluster: &Cluster, key: &str) -> u64 {
    let holder_key = format!("redlock:holder:{key}");
    let record = cluster
        .values(&holder_key)
        .into_iter()
        .flatten()
        .next()
        .expect("no holder record on any master");
    let value: serde_json::Value = serde_json::from_str(&record).unwrap();
    value["since_ms"].as_u64().unwrap()
}

#[test]
fn a_paused_minority_costs_at_most_one_node_timeout_and_still_gets_the_release() {
    let mut cluster = Cluster::start(5);
    cluster.server(3).pause();
    cluster.server(4).pause();
    let node_timeout = Duration::from_secs(2);
    let start = Instant::now();
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "paused",
            "--ttl",
            "30s",
            "--node-timeout",
            "2s",
        ])
        .args(["--", "sh", "-c", "exit 5"])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    assert_eq!(output.status.code(), Some(5), "{}", describe(&output));
    // Sequential requests would cost a node timeout per paused master (4 s); parallel ones
    // decided at quorum cost less than one.
    assert!(elapsed < node_timeout, "took {elapsed:?}");

    // The paused masters were sent the acquire and then the release on the same connection:
    // once resumed they run both, in that order (the lock and holder keys are SET, then
    // DELeted), and end up without the key.
    cluster.server(3).resume();
    cluster.server(4).resume();
    for i in [3, 4] {
        let server = &cluster.servers[i];
        assert!(
            eventually(Duration::from_secs(5), || server.command_calls("del") == 2),
            "master {i} never ran the release: SET {} DEL {}",
            server.command_calls("set"),
            server.command_calls("del")
        );
        assert_eq!(
            server.command_calls("set"),
            2,
            "master {i} never ran the acquire"
        );
    }
    assert!(
        cluster.key_gone_everywhere("paused"),
        "a resumed master kept the key: {:?}",
        cluster.values("paused")
    );
    assert!(cluster.key_gone_everywhere("redlock:holder:paused"));
}

#[test]
fn a_majority_down_gives_69_and_names_the_masters() {
    let mut cluster = Cluster::start(3);
    let down = [cluster.servers[1].url(), cluster.servers[2].url()];
    cluster.server(1).kill();
    cluster.server(2).kill();
    let output = cluster
        .redlock()
        .args(["run", "--key", "down", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for url in &down {
        assert!(stderr.contains(url.as_str()), "{url} not named: {stderr}");
    }
    assert!(stderr.contains("need 2"), "{stderr}");
    // The attempt's partial hold on the live master was removed.
    assert!(cluster.key_gone_everywhere("down"));
}

#[test]
fn an_even_number_of_masters_with_half_paused_fails_after_one_timeout_instead_of_hanging() {
    let mut cluster = Cluster::start(4);
    cluster.server(0).pause();
    cluster.server(1).pause();
    let start = Instant::now();
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "even",
            "--ttl",
            "10s",
            "--node-timeout",
            "500ms",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    cluster.server(0).resume();
    cluster.server(1).resume();
    assert!(eventually(Duration::from_secs(5), || cluster
        .key_gone_everywhere("even")));
}

#[test]
fn a_minority_killed_while_the_command_runs_does_not_disturb_it() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!("echo ready > {}; sleep 2.5", ready.display());
    let child = cluster
        .redlock()
        .args([
            "run", "--key", "minority", "--ttl", "1s", "--", "sh", "-c", &script,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));
    cluster.server(2).kill();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("minority"));
}

#[test]
fn a_majority_paused_briefly_is_survived_by_retrying_the_renewal() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!("echo ready > {}; sleep 4", ready.display());
    let child = cluster
        .redlock()
        .args([
            "run", "-v", "--key", "blip", "--ttl", "3s", "--", "sh", "-c", &script,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));
    // The first renewal is due 1 s after the start; make it fail for a while, but for much
    // less than the validity.
    std::thread::sleep(Duration::from_millis(800));
    cluster.server(0).pause();
    cluster.server(1).pause();
    std::thread::sleep(Duration::from_millis(700));
    cluster.server(0).resume();
    cluster.server(1).resume();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not confirmed by a majority"), "{stderr}");
    assert!(cluster.key_gone_everywhere("blip"));
}

/// The safety promise: the command never runs past the lock's validity. The command ignores
/// SIGTERM and writes a heartbeat every 20 ms; the last heartbeat must come before the validity
/// ends. The validity ends no earlier than `since + TTL − drift`, where `since` is the holder
/// record's timestamp, taken before the acquire started.
#[test]
fn a_majority_killed_while_the_command_runs_stops_it_before_the_validity_ends() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let beats = dir.path().join("beats");
    let script = format!(
        "trap '' TERM; echo $$ > {ready}; while :; do date +%s%3N >> {beats}; sleep 0.02; done",
        ready = ready.display(),
        beats = beats.display()
    );
    let ttl_ms = 3000u64;
    let child = cluster
        .redlock()
        .args(["run", "--key", "lost", "--ttl", "3s", "--kill-after", "1s"])
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell_pid: i32 = wait_for_file(&ready, Duration::from_secs(10))
        .parse()
        .unwrap();
    let since = holder_since_ms(&cluster, "lost");
    // Kill the majority before the first renewal (due at TTL/3).
    cluster.server(1).kill();
    cluster.server(2).kill();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("lock \"lost\": lost the lock"), "{stderr}");

    let drift_ms = ttl_ms / 100 + 2;
    let validity_floor = since + ttl_ms - drift_ms;
    let last_beat: u64 = std::fs::read_to_string(&beats)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .max()
        .unwrap();
    assert!(
        last_beat < validity_floor,
        "the command ran {} ms past the lock's validity",
        last_beat - validity_floor
    );
    // It ignored SIGTERM, so it was SIGKILLed, and nothing of its group is left.
    assert!(!process_alive(shell_pid));
    assert!(live_group_members(shell_pid).is_empty());
    assert!(now_ms() >= last_beat);
}

/// Lock loss noticed early: when a majority no longer holds the token (deleted, evicted, or a
/// master restarted empty), the next renewal says so and the command is stopped at once,
/// not when the validity would have run out.
#[test]
fn a_lock_deleted_on_a_majority_stops_the_command_at_the_next_renewal() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!("echo ready > {}; sleep 60", ready.display());
    let child = cluster
        .redlock()
        .args(["run", "--key", "gone", "--ttl", "30s"])
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));
    cluster.servers[0].del("gone");
    cluster.servers[1].del("gone");
    let deleted = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no longer hold it"), "{stderr}");
    // The first renewal is due at TTL/3 = 10 s; the validity would last 30 s.
    assert!(
        deleted.elapsed() < Duration::from_secs(15),
        "{:?}",
        deleted.elapsed()
    );
    // The third master's copy is someone else's business now, but ours was released.
    assert!(cluster.key_gone_everywhere("gone"));
}

/// redlock killed with SIGKILL takes the whole command with it (the command's own children
/// too), and the lock, which always has a TTL, expires by itself.
#[test]
fn redlock_killed_with_sigkill_takes_the_command_with_it_and_the_key_expires() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    // The shell starts a grandchild and waits for it: both must die.
    let script = format!("echo $$ > {}; sleep 60 & wait", ready.display());
    let mut child = cluster
        .redlock()
        .args([
            "run", "--key", "killed", "--ttl", "2s", "--", "sh", "-c", &script,
        ])
        .spawn()
        .unwrap();
    let group: i32 = wait_for_file(&ready, Duration::from_secs(10))
        .parse()
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || live_group_members(
        group
    )
    .len()
        == 2));
    // Wherever the lock exists (a majority at least; the decision does not wait for the
    // last master), it has a TTL, and so does the holder record.
    let mut holding = 0;
    for server in &cluster.servers {
        for key in ["killed", "redlock:holder:killed"] {
            let pttl = server.pttl(key);
            assert!(pttl != -1, "{key} has no TTL: it would never expire");
            assert!(pttl <= 2000, "{key} PTTL {pttl}");
        }
        holding += usize::from(server.pttl("killed") > 0);
    }
    assert!(holding >= 2, "only {holding} masters hold the lock");
    send_signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(5), || live_group_members(group)
            .is_empty()),
        "still running without the lock: {:?}",
        live_group_members(group)
    );
    assert!(
        eventually(Duration::from_secs(5), || cluster
            .key_gone_everywhere("killed")),
        "the key did not expire: {:?}",
        cluster.values("killed")
    );
    assert!(cluster.key_gone_everywhere("redlock:holder:killed"));
}

#[test]
fn a_master_restarted_empty_during_the_run_is_tolerated_as_a_minority() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!("echo ready > {}; sleep 2", ready.display());
    let child = cluster
        .redlock()
        .args([
            "run", "--key", "restart", "--ttl", "1s", "--", "sh", "-c", &script,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));
    cluster.server(0).restart();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("restart"));
}
