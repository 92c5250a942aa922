//! The fair queue (see src/lock/kinds/queue.rs): waiters take the lock in the order they came, dead
//! or stopped waiters lose their place within a lease, a signal takes a waiter out at once, and the
//! queue survives a paused minority and a master that restarts empty.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::{Cluster, Running, describe, eventually, send_signal};
use serde_json::Value;

/// The queue's sorted set of lock `key` (a key without braces: its own hash tag).
fn queue_key(key: &str) -> String {
    format!("__redlock:{{{key}}}:queue:{key}")
}

/// How many places master `i` has in the queue of `key`.
fn places(cluster: &mut Cluster, i: usize, key: &str) -> usize {
    let mut conn = cluster.server(i).connection();
    redis::cmd("ZCARD")
        .arg(queue_key(key))
        .query(&mut conn)
        .unwrap()
}

/// How many masters have exactly `n` places in the queue of `key`.
fn masters_with_places(cluster: &mut Cluster, key: &str, n: usize) -> usize {
    (0..cluster.urls().len())
        .filter(|&i| cluster.server(i).is_running() && places(cluster, i, key) == n)
        .count()
}

/// Holds `key` until the gate opens.
fn hold(cluster: &Cluster, key: &str) -> Running {
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", key, "--ttl", "20s"]),
    );
    holder.wait_ready();
    holder
}

/// A waiter that appends `name` to `order` once it has the lock.
fn waiter(cluster: &Cluster, key: &str, name: &str, order: &Path) -> Running {
    let body = format!("echo {name} >> {}", order.display());
    Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", key, "--ttl", "20s", "--wait", "60s"]),
        "",
        &body,
    )
}

/// Starts `names` one after the other, each once the previous one has its place on every
/// master (so that the order they came in is known).
fn queue_up(cluster: &mut Cluster, key: &str, names: &[&str], order: &Path) -> Vec<Running> {
    let n = cluster.urls().len();
    let mut waiters = Vec::new();
    for (i, name) in names.iter().enumerate() {
        waiters.push(waiter(cluster, key, name, order));
        assert!(
            eventually(Duration::from_secs(10), || masters_with_places(
                cluster,
                key,
                i + 1
            ) == n),
            "waiter {name} never got its place on every master"
        );
    }
    waiters
}

fn finish_all(waiters: Vec<Running>) {
    for mut waiter in waiters {
        let output = waiter.wait_output();
        assert!(output.status.success(), "{}", describe(&output));
    }
}

fn order_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn eight_waiters_take_the_lock_in_the_order_they_came() {
    let mut cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "fifo");
    let names = ["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"];
    let waiters = queue_up(&mut cluster, "fifo", &names, &order);
    holder.open_gate();
    finish_all(waiters);
    assert_eq!(order_of(&order), names);
    // Every place was given up: each winner's, by releasing the lock.
    assert_eq!(masters_with_places(&mut cluster, "fifo", 0), 5);
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn a_killed_waiter_at_the_head_is_skipped_once_its_place_lapses() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "skip");
    let mut waiters = queue_up(&mut cluster, "skip", &["dead", "next"], &order);
    let mut dead = waiters.remove(0);
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();
    holder.open_gate();
    // Its place lapses after a lease (3 s plus two node timeouts), and the next waiter's
    // heartbeat finds itself first; generous bound, not a timing assertion.
    finish_all(waiters);
    assert_eq!(order_of(&order), ["next"]);
    assert_eq!(masters_with_places(&mut cluster, "skip", 0), 3);
}

#[test]
fn a_queued_waiter_interrupted_by_sigint_leaves_the_queue_at_once() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "leave");
    let mut waiters = queue_up(&mut cluster, "leave", &["quitter", "stayer"], &order);
    let mut quitter = waiters.remove(0);
    send_signal(quitter.child.id(), libc::SIGINT);
    let output = quitter.wait_output();
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    // Gone from every master as soon as it exited, not after its lease.
    assert_eq!(masters_with_places(&mut cluster, "leave", 1), 3);
    holder.open_gate();
    finish_all(waiters);
    assert_eq!(order_of(&order), ["stayer"]);
}

#[test]
fn the_queue_survives_a_paused_minority_and_a_master_that_restarts_empty() {
    let mut cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "rough");
    let names = ["r1", "r2", "r3", "r4"];
    let waiters = queue_up(&mut cluster, "rough", &names, &order);
    cluster.server(0).pause();
    let run_id = |cluster: &mut Cluster| -> String {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut cluster.server(1).connection())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("run_id:"))
            .unwrap()
            .trim()
            .to_string()
    };
    let before = run_id(&mut cluster);
    cluster.server(1).restart();
    // A new process without persistence (`--save ''`, no AOF) starts empty. (Counting the
    // places right after the restart races the waiters' heartbeats, which may already have
    // put some back.)
    assert_ne!(run_id(&mut cluster), before, "the master was not restarted");
    // The waiters put their places back on the restarted master, with their tickets.
    assert!(
        eventually(Duration::from_secs(10), || places(&mut cluster, 1, "rough")
            == 4),
        "the restarted master never got the places back"
    );
    holder.open_gate();
    finish_all(waiters);
    cluster.server(0).resume();
    assert_eq!(order_of(&order), names);
}

#[test]
fn a_newcomer_does_not_pass_a_waiter_and_a_stopped_waiter_loses_its_place() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "nobarge");
    let mut waiters = queue_up(&mut cluster, "nobarge", &["sleeper"], &order);
    let mut sleeper = waiters.remove(0);
    send_signal(sleeper.child.id(), libc::SIGSTOP);
    holder.open_gate();
    assert!(eventually(Duration::from_secs(10), || cluster
        .values("nobarge")
        .iter()
        .all(Option::is_none)));
    // The lock is free, but the stopped waiter's place is still live: no barging past it.
    let output = cluster
        .redlock()
        .args(["acquire", "--key", "nobarge", "--ttl", "10s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is free, but 1 waiter is queued for it first"),
        "{stderr}"
    );
    // Once its place lapsed, the newcomer takes the lock...
    let newcomer = cluster
        .redlock()
        .args([
            "run", "--key", "nobarge", "--ttl", "10s", "--wait", "30s", "--",
        ])
        .args([
            "sh",
            "-c",
            &format!("echo newcomer >> {}; sleep 0.5", order.display()),
        ])
        .spawn()
        .unwrap();
    // ...and the stopped waiter, resumed only once the newcomer has the lock (so its place
    // surely lapsed), finds its place gone and waits again at the back.
    assert!(
        eventually(Duration::from_secs(30), || order_of(&order)
            .contains(&"newcomer".to_string())),
        "the newcomer never got the lock past the stopped waiter"
    );
    send_signal(sleeper.child.id(), libc::SIGCONT);
    let output = newcomer.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let output = sleeper.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(order_of(&order), ["newcomer", "sleeper"]);
}

#[test]
fn status_shows_the_queue_in_order_with_who_waits() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = hold(&cluster, "shown");
    let waiters = queue_up(&mut cluster, "shown", &["a", "b"], &order);
    let output = cluster
        .redlock()
        .args(["status", "--key", "shown", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let status: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["waiting"], 2, "{status}");
    let queue = status["queue"].as_array().expect("a queue");
    assert_eq!(queue.len(), 2, "{status}");
    for (i, (entry, waiter)) in queue.iter().zip(&waiters).enumerate() {
        assert_eq!(entry["position"], i + 1);
        assert_eq!(entry["masters"], 3);
        assert_eq!(entry["holder"]["pid"], waiter.child.id(), "{status}");
        assert!(entry["waited_ms"].as_u64().is_some(), "{status}");
    }
    let text = cluster
        .redlock()
        .args(["status", "--key", "shown"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("queue, first come first served (2 waiting):"),
        "{text}"
    );
    assert!(
        text.contains(&format!("pid {}", waiters[1].child.id())),
        "{text}"
    );
    holder.open_gate();
    finish_all(waiters);
}

#[test]
fn the_uncontended_path_is_one_script_per_master_and_leaves_no_queue() {
    let mut cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["run", "--key", "alone", "--ttl", "10s", "--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    for i in 0..3 {
        let server = cluster.server(i);
        // One script to take the lock, one to release it.
        let scripts = server.command_calls("eval") + server.command_calls("evalsha");
        assert_eq!(scripts, 2, "master {i}");
        for never in ["incr", "zadd", "time", "subscribe"] {
            assert_eq!(server.command_calls(never), 0, "master {i} ran {never}");
        }
        assert_eq!(server.lock_keys(), Vec::<String>::new(), "master {i}");
    }
}

#[test]
fn a_client_outside_the_queue_may_take_the_lock_and_waiters_still_get_it_after() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    // Another Redlock client holds the key with a plain SET NX PX.
    for i in 0..3 {
        let mut conn = cluster.server(i).connection();
        let _: () = redis::cmd("SET")
            .arg("mixed")
            .arg("foreign-token")
            .arg("NX")
            .arg("PX")
            .arg(20_000)
            .query(&mut conn)
            .unwrap();
    }
    let waiters = queue_up(&mut cluster, "mixed", &["m1", "m2"], &order);
    // It releases without a notice (DEL): the first waiter notices by polling.
    for i in 0..3 {
        cluster.server(i).del("mixed");
    }
    finish_all(waiters);
    assert_eq!(order_of(&order), ["m1", "m2"]);
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A master that is down and fails fast (connection refused) while waiters join must not keep
/// them out of the queue: a ticket needs N - q + 1 refusals, and the round waits for them
/// instead of ending at the first sure loss. The other live master answers a little late
/// (through a delaying proxy), so that the down master's error comes first.
#[test]
fn waiters_join_the_queue_while_a_master_is_down() {
    use common::proxy::{Fault, Proxy};
    let mut cluster = Cluster::start(3);
    let proxy = Proxy::before(&cluster.servers[1]);
    proxy.set(Fault::Delay(Duration::from_millis(5)));
    let servers = format!(
        "{},{},{}",
        cluster.servers[0].url(),
        proxy.url(),
        cluster.servers[2].url()
    );
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let holder = Running::start(
        common::redlock()
            .env("REDLOCK_SERVERS", &servers)
            .args(["run", "--key", "down", "--ttl", "20s"]),
    );
    let mut holder = holder;
    holder.wait_ready();
    cluster.server(2).kill();
    let mut waiters = Vec::new();
    for (i, name) in ["d1", "d2", "d3"].iter().enumerate() {
        let body = format!("echo {name} >> {}", order.display());
        waiters.push(Running::start_script(
            common::redlock()
                .env("REDLOCK_SERVERS", &servers)
                .args(["run", "--key", "down", "--ttl", "20s", "--wait", "60s"]),
            "",
            &body,
        ));
        assert!(
            eventually(Duration::from_secs(10), || places(&mut cluster, 0, "down")
                == i + 1),
            "waiter {name} never joined the queue with a master down"
        );
    }
    holder.open_gate();
    finish_all(waiters);
    assert_eq!(order_of(&order), ["d1", "d2", "d3"]);
}

/// A waiter's first turn may make its place only while its ticket is young: less than a lease
/// (3 s and two node timeouts) minus a heartbeat and a node timeout since `since` (see
/// `queue`, "A lapsed place is not re-added"). A refused newcomer that will wait hears every
/// master, so a master that never answers holds its ticket round a whole node timeout; counted
/// from the round's start, that and the node timeout spent subscribing on a silent master
/// left no time at all with a node timeout of 2 s or more: such a waiter lost its place
/// before it had one, and drew a new ticket at the back, again and again. Two of five masters
/// are blackholed (each waiter listens on three of the five, almost surely one of them); each
/// waiter must join once, with the one ticket it drew (the counter counts the draws).
#[test]
fn waiters_with_a_long_node_timeout_join_once_while_a_minority_is_silent() {
    use common::proxy::{self, Fault};
    let mut cluster = Cluster::start(5);
    let proxies = proxy::before_each(&cluster);
    let servers = proxy::servers_env(&proxies);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let mut holder = Running::start(
        common::redlock()
            .env("REDLOCK_SERVERS", &servers)
            .args(["run", "--key", "silent", "--ttl", "20s"]),
    );
    holder.wait_ready();
    proxies[3].set(Fault::Blackhole);
    proxies[4].set(Fault::Blackhole);
    let names = ["s1", "s2", "s3"];
    let waiters: Vec<Running> = names
        .iter()
        .map(|name| {
            let body = format!("echo {name} >> {}", order.display());
            Running::start_script(
                common::redlock().env("REDLOCK_SERVERS", &servers).args([
                    "run",
                    "--key",
                    "silent",
                    "--ttl",
                    "6s",
                    "--node-timeout",
                    "2500ms",
                    "--wait",
                    "120s",
                ]),
                "",
                &body,
            )
        })
        .collect();
    let live = 0..3;
    assert!(
        eventually(Duration::from_secs(30), || live.clone().all(|i| places(
            &mut cluster,
            i,
            "silent"
        ) == names
            .len())),
        "the waiters never all had their places on the live masters"
    );
    let tickets = redlock_cli::lock::keys::tickets("silent");
    for i in live {
        let drawn: Option<String> = cluster.server(i).get(&tickets);
        assert_eq!(
            drawn.as_deref(),
            Some("3"),
            "master {i}: tickets drawn by 3 waiters that each joined once"
        );
    }
    holder.open_gate();
    finish_all(waiters);
    assert_eq!(order_of(&order).len(), names.len());
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}
