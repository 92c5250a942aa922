//! Network faults between redlock and its masters, played by the fault proxy in front of real
//! masters: a master that never answers (blackholed), answers too late (delayed past the node
//! timeout), or whose connection is cut in the middle of a reply, during acquire, renewal and
//! release. The promises checked in each:
//!
//! - a decision within the node timeout: a minority at fault costs nothing, a majority gives
//!   exit 69 with one line naming the masters and the cause, before the TTL could run out;
//! - nothing unsafe: the command runs only while a majority confirms the lock, and is stopped
//!   (exit 70) before the validity ends when a majority is lost;
//! - nothing left without a TTL on any master, whatever reached it.

use crate::common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::proxy::{self, Fault, Proxy};
use crate::common::{Cluster, Running, describe, eventually, now_ms};

/// `redlock` going through `proxies`.
fn redlock(proxies: &[Proxy]) -> Command {
    let mut cmd = common::redlock();
    cmd.env("REDLOCK_SERVERS", proxy::servers_env(proxies));
    cmd
}

/// Runs `cmd` to the end, with how long it took.
fn timed(cmd: &mut Command) -> (Output, Duration) {
    let start = Instant::now();
    let output = cmd.output().expect("run redlock");
    (output, start.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whatever reached each master, everything on it expires.
fn assert_no_key_without_ttl(cluster: &Cluster) {
    let found = cluster.keys_without_ttl();
    assert!(found.is_empty(), "keys that would never expire: {found:?}");
}

/// `redlock acquire` through `proxies` with TTL 10 s and the given node timeout.
fn acquire(proxies: &[Proxy], key: &str, node_timeout: &str) -> (Output, Duration) {
    timed(redlock(proxies).args([
        "acquire",
        "--key",
        key,
        "--ttl",
        "10s",
        "--node-timeout",
        node_timeout,
    ]))
}

/// Checks a failed acquire: exit 69, one line, naming exactly the masters at `bad` with
/// `cause`, decided before the 10 s TTL.
fn assert_unavailable(proxies: &[Proxy], bad: &[usize], cause: &str, run: &(Output, Duration)) {
    let (output, elapsed) = run;
    assert_eq!(output.status.code(), Some(69), "{}", describe(output));
    let text = stderr(output);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("need 2"), "{text}");
    for (i, proxy) in proxies.iter().enumerate() {
        let named = text.contains(&format!("{} {cause}", proxy.url()));
        assert_eq!(
            named,
            bad.contains(&i),
            "master {i}, cause {cause:?}: {text}"
        );
    }
    assert!(*elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

/// Checks a successful acquire: exit 0 and a token, before the 10 s TTL; a majority holds it.
fn assert_acquired(cluster: &Cluster, key: &str, run: &(Output, Duration)) -> String {
    let (output, elapsed) = run;
    assert_eq!(output.status.code(), Some(0), "{}", describe(output));
    assert!(*elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let token = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(!token.is_empty(), "no token printed: {}", describe(output));
    assert!(
        cluster.holding(key, &token) >= 2,
        "{:?}",
        cluster.values(key)
    );
    token
}

#[test]
fn a_blackholed_minority_does_not_stop_acquire_status_or_release() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[1].set(Fault::Blackhole);
    let acquired = acquire(&proxies, "bh", "2s");
    let token = assert_acquired(&cluster, "bh", &acquired);
    // The blackholed master never got the request.
    assert_eq!(cluster.servers[1].get("bh"), None);

    let (status, elapsed) =
        timed(redlock(&proxies).args(["status", "--key", "bh", "--node-timeout", "2s"]));
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{}", describe(&status));
    assert!(
        text.contains(&format!("{}  unreachable: timed out", proxies[1].url())),
        "{text}"
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");

    let (released, elapsed) = timed(redlock(&proxies).args([
        "release",
        "--key",
        "bh",
        "--token",
        &token,
        "--node-timeout",
        "2s",
    ]));
    assert_eq!(released.status.code(), Some(0), "{}", describe(&released));
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        cluster.key_gone_everywhere("bh"),
        "{:?}",
        cluster.values("bh")
    );
    assert_no_key_without_ttl(&cluster);
}

#[test]
fn a_blackholed_majority_gives_69_within_the_node_timeout() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[0].set(Fault::Blackhole);
    proxies[2].set(Fault::Blackhole);
    let failed = acquire(&proxies, "bh", "1s");
    assert_unavailable(&proxies, &[0, 2], "timed out", &failed);
    // The master that answered was released; the others never got anything.
    assert!(
        cluster.key_gone_everywhere("bh"),
        "{:?}",
        cluster.values("bh")
    );
    assert_no_key_without_ttl(&cluster);
}

/// A master whose answers come later than the node timeout counts as failed: a minority is
/// not waited for; a majority gives 69. What the late master does run (the acquire, then the
/// release on the same connection, in that order) leaves nothing without a TTL.
#[test]
fn masters_delayed_past_the_node_timeout_count_as_failed() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    // Each way: a round trip takes 1.2 s, against a node timeout of 500 ms.
    proxies[2].set(Fault::Delay(Duration::from_millis(600)));
    let acquired = acquire(&proxies, "late", "500ms");
    let token = assert_acquired(&cluster, "late", &acquired);
    let (released, _) = timed(redlock(&proxies).args([
        "release",
        "--key",
        "late",
        "--token",
        &token,
        "--node-timeout",
        "500ms",
    ]));
    assert_eq!(released.status.code(), Some(0), "{}", describe(&released));

    proxies[0].set(Fault::Delay(Duration::from_millis(600)));
    let failed = acquire(&proxies, "late2", "500ms");
    assert_unavailable(&proxies, &[0, 2], "timed out", &failed);

    // Let the delayed requests land, then check what they left.
    std::thread::sleep(Duration::from_secs(2));
    assert_no_key_without_ttl(&cluster);
    assert_eq!(cluster.servers[1].get("late"), None);
    assert_eq!(cluster.servers[1].get("late2"), None);
}

/// The master runs the acquire, but the connection is cut two bytes into its reply.
#[test]
fn a_connection_cut_mid_reply_during_acquire() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[0].set(Fault::CutReply(2));
    let acquired = acquire(&proxies, "cut", "2s");
    assert_acquired(&cluster, "cut", &acquired);
    assert_no_key_without_ttl(&cluster);

    proxies[1].set(Fault::CutReply(2));
    let failed = acquire(&proxies, "cut2", "2s");
    assert_unavailable(
        &proxies,
        &[0, 1],
        "connection failed: the master closed the connection in the middle of a reply",
        &failed,
    );
    // The cut masters ran the acquire and then the release of the failed attempt (its reply
    // cut too): the key is gone or expiring everywhere, and the good master was released.
    assert_eq!(cluster.servers[2].get("cut2"), None);
    assert_no_key_without_ttl(&cluster);
}

/// `run` with TTL 3 s: renewals every second.
fn start_run(proxies: &[Proxy], key: &str) -> Running {
    Running::start(redlock(proxies).args([
        "-v",
        "run",
        "--key",
        key,
        "--ttl",
        "3s",
        "--node-timeout",
        "300ms",
        "--kill-after",
        "200ms",
    ]))
}

/// Watches `run` for `span`: still running, and a majority holds its token throughout.
fn assert_kept(cluster: &Cluster, run: &mut Running, key: &str, span: Duration) {
    let token = run.token();
    let start = Instant::now();
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
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A minority's connection cut mid-reply at every renewal: the run keeps its lock on the
/// other two, past several TTLs, and ends normally.
#[test]
fn renewals_cut_mid_reply_on_a_minority_keep_the_lock() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    let mut run = start_run(&proxies, "renew-cut");
    run.wait_ready();
    proxies[2].set(Fault::CutReply(2));
    assert_kept(&cluster, &mut run, "renew-cut", Duration::from_secs(7));
    assert!(
        proxies[2].accepted() >= 3,
        "renewals did not reach the cut master"
    );
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = stderr(&output);
    assert!(!text.contains("lost the lock"), "{text}");
    assert_eq!(cluster.servers[0].get("renew-cut"), None);
    assert_eq!(cluster.servers[1].get("renew-cut"), None);
    assert_no_key_without_ttl(&cluster);
}

/// Every connection reset at once while the command runs (a middlebox losing its state, a
/// load balancer restarting): the next renewal reconnects at once, without a failure.
#[test]
fn all_connections_reset_during_the_run_are_replaced() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    let mut run = start_run(&proxies, "reset");
    run.wait_ready();
    for _ in 0..3 {
        for proxy in &proxies {
            proxy.reset();
        }
        assert_kept(&cluster, &mut run, "reset", Duration::from_millis(1500));
    }
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = stderr(&output);
    assert!(!text.contains("not confirmed"), "a renewal failed: {text}");
    assert!(
        cluster.key_gone_everywhere("reset"),
        "{:?}",
        cluster.values("reset")
    );
    assert_no_key_without_ttl(&cluster);
}

/// A majority's connections cut mid-reply at every renewal: no renewal can be confirmed, so
/// the command is stopped before the validity ends and redlock exits 70. (The cut masters do
/// run the extensions; losing their answers must still count as losing them.)
#[test]
fn renewals_cut_mid_reply_on_a_majority_stop_the_command_before_the_validity_ends() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    let started_ms = now_ms();
    let mut run = Running::start_script(
        redlock(&proxies).args([
            "run",
            "--key",
            "renew-lost",
            "--ttl",
            "6s",
            "--node-timeout",
            "300ms",
            "--kill-after",
            "200ms",
        ]),
        "",
        "while :; do date +%s%3N >> \"$d/beats\"; sleep 0.02; done",
    );
    let shell = run.wait_ready();
    proxies[0].set(Fault::CutReply(2));
    proxies[1].set(Fault::CutReply(2));
    let cut_ms = now_ms();
    assert!(
        cut_ms < started_ms + 2000,
        "test setup too slow: the first renewal (due 2 s after the lock was taken) may have \
         been confirmed before the cut, and the validity floor below would be wrong"
    );
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    let text = stderr(&output);
    assert!(
        text.contains("lock \"renew-lost\": lost the lock"),
        "{text}"
    );
    // The lock was taken after `started_ms`, so its validity ends after this floor.
    let validity_floor = started_ms + 6000 - (6000 / 100 + 2);
    let beats = std::fs::read_to_string(run.path("beats")).unwrap();
    let last_beat: u64 = beats
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .max()
        .expect("no heartbeat");
    assert!(
        last_beat < validity_floor,
        "the command ran {} ms past the lock's validity",
        last_beat - validity_floor
    );
    assert!(common::live_group_members(shell).is_empty());
    assert_no_key_without_ttl(&cluster);
}

/// The release at the end of a run meets one master whose connection is cut mid-reply, and
/// one that is blackholed: the run still ends with the command's status, and the lock is gone
/// from the good master and expiring on the others; a contender gets it at once.
#[test]
fn a_release_with_a_master_cut_and_one_blackholed_is_safe() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    let mut run = start_run(&proxies, "rel");
    run.wait_ready();
    proxies[0].set(Fault::CutReply(2));
    proxies[1].set(Fault::Blackhole);
    // Reset, so that the release cannot go out on the kept connections before the faults.
    proxies[0].reset();
    proxies[1].reset();
    run.open_gate();
    let output = run.wait_output();
    // The release is best effort; only the command's status decides the exit.
    assert!(
        matches!(output.status.code(), Some(0)),
        "{}",
        describe(&output)
    );
    // redlock exits once the release is sent: it may still be on its way through the proxies.
    // The cut master runs it too (only its reply is cut).
    assert!(
        eventually(Duration::from_secs(5), || cluster.servers[2]
            .get("rel")
            .is_none()
            && cluster.servers[0].get("rel").is_none()),
        "{:?}",
        cluster.values("rel")
    );
    assert_no_key_without_ttl(&cluster);
    // The blackholed master keeps the key until its TTL: nothing unsafe, a majority is free.
    proxies[0].set(Fault::Pass);
    proxies[1].set(Fault::Pass);
    let contender = redlock(&proxies)
        .args(["run", "--key", "rel", "--ttl", "3s", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(contender.status.code(), Some(0), "{}", describe(&contender));
    assert!(
        eventually(Duration::from_secs(5), || cluster
            .key_gone_everywhere("rel")),
        "{:?}",
        cluster.values("rel")
    );
    assert_no_key_without_ttl(&cluster);
}
