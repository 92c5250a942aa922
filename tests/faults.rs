//! Faults: masters killed, paused and restarted around `redlock run`, and redlock itself
//! killed. Each test states the promise it checks.

use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::{
    Cluster, Running, describe, eventually, live_group_members, now_ms, process_alive, send_signal,
};

/// Reads the holder record redlock stored beside the lock (from any master that has it).
fn holder_since_ms(cluster: &Cluster, key: &str) -> u64 {
    let holder_key = format!("__redlock:{{{key}}}:holder:{key}");
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
    // A node timeout long enough that waiting for the paused masters would show plainly: one
    // node timeout (10 s) if the attempt waited for every answer, two (20 s) if the masters
    // were asked one after the other. Deciding at quorum costs a small fraction of one.
    let start = Instant::now();
    let output = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "paused",
            "--ttl",
            "60s",
            "--node-timeout",
            "10s",
        ])
        .args(["--", "sh", "-c", "exit 5"])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    assert_eq!(output.status.code(), Some(5), "{}", describe(&output));
    assert!(
        elapsed < Duration::from_secs(8),
        "took {elapsed:?}: the paused masters were waited for (node timeout 10 s)"
    );

    // The paused masters were sent the acquire and then the release on the same connection:
    // once resumed they run both, in that order, and end up without the key (whose TTL, 60 s,
    // cannot have run out: only the release can have removed it).
    cluster.server(3).resume();
    cluster.server(4).resume();
    for i in [3, 4] {
        let server = &cluster.servers[i];
        assert!(
            eventually(Duration::from_secs(10), || server.command_calls("set") >= 1
                && server.command_calls("del") >= 1),
            "master {i} did not run both the acquire and the release: SET {} DEL {}",
            server.command_calls("set"),
            server.command_calls("del")
        );
    }
    assert!(
        eventually(Duration::from_secs(5), || cluster
            .key_gone_everywhere("paused")),
        "a resumed master kept the key: {:?}",
        cluster.values("paused")
    );
    assert!(cluster.key_gone_everywhere("__redlock:{paused}:holder:paused"));
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

/// A contender for `key`, trying once: refused with 75 while the lock is held.
fn contend(cluster: &Cluster, key: &str) -> Output {
    cluster
        .redlock()
        .args(["run", "--key", key, "--", "true"])
        .output()
        .unwrap()
}

/// Watches `run` for `span` (several TTLs: without renewals on a majority the lock would
/// expire meanwhile): it keeps running, a majority holds its token throughout, and a contender
/// is refused with 75.
fn assert_kept_while_running(cluster: &Cluster, run: &mut Running, key: &str, span: Duration) {
    let token = run.token();
    assert!(!token.is_empty(), "the command saw no REDLOCK_TOKEN");
    let start = Instant::now();
    let mut contended = false;
    while start.elapsed() < span {
        assert!(
            run.is_running(),
            "the run ended: {}",
            describe(&run.wait_output())
        );
        let holding = cluster.holding(key, &token);
        assert!(
            holding >= 2,
            "after {:?}, only {holding} masters hold the token: {:?}",
            start.elapsed(),
            cluster.values(key)
        );
        if !contended && start.elapsed() >= span / 2 {
            let contender = contend(cluster, key);
            assert_eq!(
                contender.status.code(),
                Some(75),
                "{}",
                describe(&contender)
            );
            contended = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(contended);
}

#[test]
fn a_minority_killed_while_the_command_runs_does_not_disturb_it() {
    let mut cluster = Cluster::start(3);
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "minority", "--ttl", "2s"]),
    );
    run.wait_ready();
    cluster.server(2).kill();
    // Three TTLs: the two live masters must have been renewed several times.
    assert_kept_while_running(&cluster, &mut run, "minority", Duration::from_secs(6));
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // Released on the live masters (not left to expire: the TTL is longer than this check).
    assert!(
        cluster.key_gone_everywhere("minority"),
        "{:?}",
        cluster.values("minority")
    );
    assert!(cluster.key_gone_everywhere("__redlock:{minority}:holder:minority"));
}

/// Masters that close idle connections (`timeout 1`): every renewal finds its kept connection
/// closed. Each must go through at the first try, on a new connection, rather than fail, wait
/// and be retried.
#[test]
fn connections_closed_by_an_idle_timeout_are_replaced_without_a_failed_renewal() {
    let cluster = Cluster::start_with(3, &["--timeout", "1"]);
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["-vv", "run", "--key", "idle", "--ttl", "6s"]),
    );
    run.wait_ready();
    // Renewals every 2 s, each after more than a second of silence on every connection.
    assert_kept_while_running(&cluster, &mut run, "idle", Duration::from_secs(5));
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("renewed"), "{stderr}");
    assert!(
        !stderr.contains("not confirmed"),
        "a renewal failed on a closed connection: {stderr}"
    );
    assert!(cluster.key_gone_everywhere("idle"));
}

/// A majority paused around a renewal: the renewal is not confirmed, is retried, succeeds once
/// the masters are back, and the command runs on past the validity it started with.
#[test]
fn a_majority_paused_briefly_is_survived_by_retrying_the_renewal() {
    let mut cluster = Cluster::start(3);
    let ttl_ms = 6000;
    // TTL 6 s: the first renewal is due 2 s after the start; each attempt gives up after the
    // node timeout and is retried every 200 ms. With --kill-after 200ms the command would only
    // be stopped about 5.5 s after the start: the test has over 3 s to resume the masters once
    // a renewal failed.
    let mut run = Running::start(cluster.redlock().args([
        "run",
        "-v",
        "--key",
        "blip",
        "--ttl",
        "6s",
        "--node-timeout",
        "200ms",
        "--kill-after",
        "200ms",
    ]));
    run.wait_ready();
    let since = holder_since_ms(&cluster, "blip");
    let token = run.token();
    // Paused as soon as the command runs: the first renewal is still ahead, and fails.
    cluster.server(0).pause();
    cluster.server(1).pause();
    let line = "renewal of \"blip\" not confirmed by a majority";
    let mut ended = false;
    let seen = eventually(Duration::from_secs(20), || {
        ended = !run.is_running();
        ended || run.stderr_so_far().contains(line)
    });
    cluster.server(0).resume();
    cluster.server(1).resume();
    assert!(
        seen && !ended,
        "no failed renewal was reported while the command ran: {}",
        run.stderr_so_far()
    );
    // Without a renewal confirmed after the resume, the command would be stopped before the
    // validity it started with ends: it must still run, and still hold the lock, past it.
    while now_ms() < since + ttl_ms + 500 {
        assert!(
            run.is_running(),
            "the command was stopped: {}",
            describe(&run.wait_output())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        cluster.holding("blip", &token) >= 2,
        "{:?}",
        cluster.values("blip")
    );
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("lost the lock"), "{stderr}");
    assert!(
        cluster.key_gone_everywhere("blip"),
        "{:?}",
        cluster.values("blip")
    );
    assert!(cluster.key_gone_everywhere("__redlock:{blip}:holder:blip"));
}

/// The safety promise: the command never runs past the lock's validity, and on loss it gets
/// SIGTERM first and SIGKILL only `--kill-after` later. The command records SIGTERM and keeps
/// going, writing a heartbeat every 20 ms, so only SIGKILL stops it; the last heartbeat must
/// come before the validity ends. The validity ends no earlier than `since + TTL − drift`, where
/// `since` is the holder record's timestamp, taken before the acquire started, as long as no
/// renewal extended it: the masters are killed before the first one is due.
#[test]
fn a_majority_killed_while_the_command_runs_stops_it_before_the_validity_ends() {
    let mut cluster = Cluster::start(3);
    let ttl_ms = 6000u64;
    let mut run = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "lost", "--ttl", "6s", "--kill-after", "1s"]),
        "trap 'echo TERM >> \"$d/beats\"' TERM",
        "while :; do date +%s%3N >> \"$d/beats\"; sleep 0.02; done",
    );
    let shell_pid = run.wait_ready();
    cluster.server(1).kill();
    cluster.server(2).kill();
    let killed_at = now_ms();
    let since = holder_since_ms(&cluster, "lost");
    // The first renewal is due TTL/3 after the command started, which is after `since`.
    assert!(
        killed_at < since + ttl_ms / 3,
        "test setup too slow: the masters were killed {} ms after the lock was taken, when the \
         first renewal may already have extended the validity; the floor below would be wrong",
        killed_at - since
    );
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("lock \"lost\": lost the lock"), "{stderr}");

    let log = std::fs::read_to_string(run.path("beats")).unwrap();
    let lines: Vec<&str> = log.lines().map(str::trim).collect();
    let beat = |line: &&str| line.parse::<u64>().ok();
    let term = lines
        .iter()
        .position(|line| *line == "TERM")
        .unwrap_or_else(|| panic!("the command never got SIGTERM:\n{log}\n{stderr}"));
    // It went on after SIGTERM: what stopped it came later (SIGKILL, as it ignores TERM).
    assert!(
        lines[term + 1..].iter().filter_map(beat).count() >= 1,
        "no heartbeat after SIGTERM: SIGKILL came with it, not --kill-after later:\n{log}"
    );
    let drift_ms = ttl_ms / 100 + 2;
    let validity_floor = since + ttl_ms - drift_ms;
    let last_beat = lines.iter().filter_map(beat).max().unwrap();
    assert!(
        last_beat < validity_floor,
        "the command ran {} ms past the lock's validity",
        last_beat - validity_floor
    );
    // Nothing of its group is left.
    assert!(!process_alive(shell_pid));
    assert!(live_group_members(shell_pid).is_empty());
}

/// Lock loss noticed early: when a majority no longer holds the token (deleted, evicted, or a
/// master restarted empty), the next renewal says so and the command is stopped at once,
/// not when the validity would have run out.
#[test]
fn a_lock_deleted_on_a_majority_stops_the_command_at_the_next_renewal() {
    let cluster = Cluster::start(3);
    // The gate is never opened: only redlock can end the command.
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "gone", "--ttl", "30s"]),
    );
    run.wait_ready();
    cluster.servers[0].del("gone");
    cluster.servers[1].del("gone");
    let deleted = Instant::now();
    let output = run.wait_output();
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
    // The shell starts a grandchild and waits for it: both must die.
    let mut run = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "killed", "--ttl", "2s"]),
        "",
        "sleep 60 & wait",
    );
    let group = run.wait_ready();
    assert!(eventually(Duration::from_secs(5), || live_group_members(
        group
    )
    .len()
        == 2));
    // Wherever the lock exists (a majority at least; the decision does not wait for the
    // last master), it has a TTL, and so does the holder record.
    let mut holding = 0;
    for server in &cluster.servers {
        for key in ["killed", "__redlock:{killed}:holder:killed"] {
            let pttl = server.pttl(key);
            assert!(pttl != -1, "{key} has no TTL: it would never expire");
            assert!(pttl <= 2000, "{key} PTTL {pttl}");
        }
        holding += usize::from(server.pttl("killed") > 0);
    }
    assert!(holding >= 2, "only {holding} masters hold the lock");
    send_signal(run.child.id(), libc::SIGKILL);
    run.child.wait().unwrap();
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
    assert!(cluster.key_gone_everywhere("__redlock:{killed}:holder:killed"));
}

#[test]
fn a_master_restarted_empty_during_the_run_is_tolerated_as_a_minority() {
    let mut cluster = Cluster::start(3);
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "restart", "--ttl", "2s"]),
    );
    run.wait_ready();
    cluster.server(0).restart();
    assert!(
        cluster.servers[0].get("restart").is_none(),
        "not restarted empty"
    );
    // Three TTLs: the renewals, refused by the empty master, must still be confirmed by the
    // other two.
    assert_kept_while_running(&cluster, &mut run, "restart", Duration::from_secs(6));
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        cluster.key_gone_everywhere("restart"),
        "{:?}",
        cluster.values("restart")
    );
    assert!(cluster.key_gone_everywhere("__redlock:{restart}:holder:restart"));
}

/// A refused attempt leaves nothing behind, also on a master whose "yes" comes after the round
/// had already decided: held by another client on two masters of three, the third is paused
/// (its requests wait in its socket) and grants our attempt once resumed, after the refusals
/// decided it. The undo must follow on the same connection, not leave the key to its TTL.
#[test]
fn a_refused_attempt_undoes_what_a_master_it_did_not_wait_for_granted() {
    let mut cluster = Cluster::start(3);
    for server in &cluster.servers[..2] {
        server.set("late-yes", "another-client");
    }
    cluster.server(2).pause();
    let output = cluster
        .redlock()
        .args([
            "acquire",
            "--key",
            "late-yes",
            "--ttl",
            "10s",
            "--node-timeout",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    cluster.server(2).resume();
    assert!(
        eventually(Duration::from_secs(3), || cluster.servers[2]
            .get("late-yes")
            .is_none()),
        "the paused master kept the refused attempt's key: {:?}",
        cluster.servers[2].get("late-yes")
    );
    // The other client's keys (set without a TTL by this test) are its own business.
    for server in &cluster.servers[..2] {
        server.del("late-yes");
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}
