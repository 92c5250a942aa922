//! The counting semaphore (`--limit L`) against real masters: at most L critical sections at
//! once among 8 contenders (and L reached), also with a master paused within the tolerance;
//! per-holder expiry; a different L and a key in use as a lock refused; a lost quorum stopping
//! the command; status; the token workflow. Every test ends with no key left without a TTL.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::{Cluster, RedisCluster, Running, describe, eventually};
use redlock_cli::lock::keys;

/// 8 contenders, `sections` each, run `redlock run --limit L` around a critical section that
/// logs its begin and end, and waits (up to a second) for L sections to be inside at once, so
/// that L is reached whenever the semaphore allows it. Returns the log.
fn contend(cluster: &Cluster, key: &str, limit: usize, sections: usize) -> String {
    const CONTENDERS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let active = dir.path().join("active");
    std::fs::create_dir(&active).unwrap();
    let section = format!(
        "echo \"begin $$\" >> {log}; touch {active}/$$; i=0; \
         while [ $(ls {active} | wc -l) -lt {limit} ] && [ $i -lt 100 ]; do sleep 0.01; i=$((i + 1)); done; \
         sleep 0.02; rm -f {active}/$$; echo \"end $$\" >> {log}",
        log = log.display(),
        active = active.display(),
    );
    let limit = limit.to_string();
    std::thread::scope(|scope| {
        for _ in 0..CONTENDERS {
            scope.spawn(|| {
                for _ in 0..sections {
                    let output = cluster
                        .redlock()
                        .args(["run", "--key", key, "--limit", &limit, "--ttl", "5s"])
                        .args(["--node-timeout", "100ms", "--wait", "120s"])
                        .args(["--", "sh", "-c", &section])
                        .output()
                        .unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                }
            });
        }
    });
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log.lines().count(), 2 * CONTENDERS * sections, "{log}");
    log
}

/// The most sections the log shows inside at once. A section's begin is logged after its slot
/// was taken and its end before it is released, so the log can only under-count overlaps.
fn most_at_once(log: &str) -> usize {
    let mut inside = 0usize;
    let mut most = 0;
    for line in log.lines() {
        if line.starts_with("begin ") {
            inside += 1;
            most = most.max(inside);
        } else {
            inside -= 1;
        }
    }
    most
}

fn assert_at_most_and_reached(cluster: &Cluster, key: &str, limit: usize) {
    let log = contend(cluster, key, limit, 3);
    assert_eq!(
        most_at_once(&log),
        limit,
        "at most {limit} at once, and {limit} reached:\n{log}"
    );
}

/// Every slot was released, and nothing is left without a TTL.
fn assert_clean(cluster: &Cluster, key: &str) {
    // A release waits for a quorum and for its request to be on every master's wire.
    assert!(
        eventually(Duration::from_secs(5), || slots_everywhere(cluster, key)
            .iter()
            .all(Vec::is_empty)),
        "{:?}",
        slots_everywhere(cluster, key)
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// The members of the slots key on every running master that is not paused.
fn slots_everywhere(cluster: &Cluster, key: &str) -> Vec<Vec<String>> {
    let slots = format!("__redlock:{{{key}}}:slots:{key}");
    cluster
        .servers
        .iter()
        .filter(|s| s.is_running())
        .map(|s| {
            redis::cmd("ZRANGE")
                .arg(&slots)
                .arg(0)
                .arg(-1)
                .query(&mut s.connection())
                .expect("ZRANGE")
        })
        .collect()
}

#[test]
fn two_slots_eight_contenders_never_more_than_two_at_once() {
    let cluster = Cluster::start(5);
    assert_at_most_and_reached(&cluster, "sem-two", 2);
    assert_clean(&cluster, "sem-two");
}

#[test]
fn three_slots_eight_contenders_never_more_than_three_at_once() {
    let cluster = Cluster::start(5);
    assert_at_most_and_reached(&cluster, "sem-three", 3);
    assert_clean(&cluster, "sem-three");
}

/// N = 5 with L = 2 or 3 needs q = 4: one master may be down. One is paused (it takes
/// connections and answers nothing) for the whole run.
#[test]
fn a_paused_master_within_the_tolerance_changes_nothing() {
    let mut cluster = Cluster::start(5);
    cluster.server(2).pause();
    assert_at_most_and_reached(&cluster, "sem-paused-two", 2);
    assert_at_most_and_reached(&cluster, "sem-paused-three", 3);
    cluster.server(2).resume();
    // The resumed master works through what was sent to it meanwhile (every attempt's slot,
    // then its release, in order on each connection) as it gets to each connection.
    for key in ["sem-paused-two", "sem-paused-three"] {
        let drained = eventually(Duration::from_secs(10), || {
            slots_everywhere(&cluster, key).iter().all(Vec::is_empty)
        });
        assert!(drained, "{:?}", slots_everywhere(&cluster, key));
        assert_clean(&cluster, key);
    }
}

fn run_slot(cluster: &Cluster, key: &str, limit: &str, ttl: &str) -> Running {
    let mut running = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", key, "--limit", limit, "--ttl", ttl]),
    );
    running.wait_ready();
    running
}

/// A holder killed with SIGKILL stops renewing; its slot expires by itself while the other
/// holder keeps renewing its own (which keeps the keys alive: a TTL on the key alone would
/// never free the dead holder's slot), and a waiter gets it.
#[test]
fn a_killed_holders_slot_expires_while_the_other_holder_renews() {
    let cluster = Cluster::start(5);
    let mut dead = run_slot(&cluster, "sem-kill", "2", "2s");
    let mut alive = run_slot(&cluster, "sem-kill", "2", "2s");
    let (dead_token, alive_token) = (dead.token(), alive.token());
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();

    let output = cluster
        .redlock()
        .args([
            "acquire", "--key", "sem-kill", "--limit", "2", "--ttl", "30s",
        ])
        .args(["--wait", "60s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let waiter_token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    // The waiter's slot is on q = 4 of the 5 masters at least (a fifth may have refused it:
    // its clock had not expired the dead slot yet), and wherever it is, the dead slot is gone.
    let everywhere = slots_everywhere(&cluster, "sem-kill");
    let with_waiter: Vec<&Vec<String>> = everywhere
        .iter()
        .filter(|slots| slots.contains(&waiter_token))
        .collect();
    assert!(with_waiter.len() >= 4, "{everywhere:?}");
    for slots in with_waiter {
        assert!(!slots.contains(&dead_token), "{slots:?}");
        assert!(slots.contains(&alive_token), "{slots:?}");
    }
    assert!(alive.is_running(), "{}", alive.stderr_so_far());
    alive.open_gate();
    let output = alive.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let released = cluster
        .redlock()
        .args(["release", "--key", "sem-kill", "--token", &waiter_token])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    // A release waits for a quorum and for its request to be on every master's wire.
    assert!(
        eventually(Duration::from_secs(5), || slots_everywhere(
            &cluster, "sem-kill"
        )
        .iter()
        .all(Vec::is_empty)),
        "{:?}",
        slots_everywhere(&cluster, "sem-kill")
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn a_holder_with_another_limit_is_refused_and_its_command_never_runs() {
    let cluster = Cluster::start(3);
    let taken = cluster
        .redlock()
        .args(["acquire", "--key", "sem-l", "--limit", "2", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(taken.status.success(), "{}", describe(&taken));
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let refused = cluster
        .redlock()
        .args(["run", "--key", "sem-l", "--limit", "3", "--wait", "5s"])
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(64), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("is held with --limit 2, not 3"), "{stderr}");
    assert!(!Path::new(&marker).exists(), "the command ran");
    // The refused attempt left nothing behind: one slot, the first holder's.
    assert!(
        slots_everywhere(&cluster, "sem-l")
            .iter()
            .all(|s| s.len() == 1),
        "{:?}",
        slots_everywhere(&cluster, "sem-l")
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn a_key_held_as_a_lock_is_refused_as_a_semaphore() {
    let cluster = Cluster::start(3);
    let lock = cluster
        .redlock()
        .args(["acquire", "--key", "both", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(lock.status.success(), "{}", describe(&lock));
    let token = String::from_utf8(lock.stdout).unwrap().trim().to_string();
    let refused = cluster
        .redlock()
        .args(["acquire", "--key", "both", "--limit", "2", "--wait", "5s"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(64), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("\"both\" is in use as a lock"), "{stderr}");
    assert!(slots_everywhere(&cluster, "both").iter().all(Vec::is_empty));
    let released = cluster
        .redlock()
        .args(["release", "--key", "both", "--token", &token])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn a_key_in_use_as_a_semaphore_is_refused_as_a_lock_also_to_a_queued_waiter() {
    let cluster = Cluster::start(3);
    let slot = cluster
        .redlock()
        .args(["acquire", "--key", "either", "--limit", "2", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(slot.status.success(), "{}", describe(&slot));
    let token = String::from_utf8(slot.stdout).unwrap().trim().to_string();
    // A newcomer without and with --wait: refused at once, never queued, nothing taken.
    for wait in ["0", "5s"] {
        let refused = cluster
            .redlock()
            .args(["acquire", "--key", "either", "--wait", wait])
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(64), "{}", describe(&refused));
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("\"either\" is in use as a semaphore (--limit 2)"),
            "{stderr}"
        );
        assert!(cluster.values("either").iter().all(Option::is_none));
    }
    let released = cluster
        .redlock()
        .args(["release", "--key", "either", "--token", &token])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// N = 5, L = 2: q = 4. With two masters killed while the command runs, no renewal can reach
/// 4: the slot may be lost, and the command is stopped (exit 70).
#[test]
fn a_renewal_that_cannot_reach_the_quorum_stops_the_command() {
    let mut cluster = Cluster::start(5);
    let mut running = run_slot(&cluster, "sem-lost", "2", "2s");
    cluster.server(3).kill();
    cluster.server(4).kill();
    let output = running.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Two slots of L = 2 on 3 masters (q = 3: a warning that no master may be down), shown by
/// `status` as text and JSON; extended and released by their tokens.
#[test]
fn status_extend_and_release_of_slots() {
    let cluster = Cluster::start(3);
    let acquire = || {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", "sem-st", "--limit", "2", "--ttl", "30s"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("warning: --limit 2 with 3 masters needs a slot on all 3"),
            "{stderr}"
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    let tokens = [acquire(), acquire()];
    assert!(tokens.iter().all(|t| t.starts_with("sem2-")), "{tokens:?}");
    let status = |json: bool| {
        let mut cmd = cluster.redlock();
        cmd.args(["status", "--key", "sem-st"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let text = status(false);
    assert_eq!(text.status.code(), Some(0), "{}", describe(&text));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.starts_with(
            "semaphore \"sem-st\" (limit 2, a slot needs 3 of 3 masters): 2 of 2 slots held"
        ),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_slice(&status(true).stdout).unwrap();
    assert_eq!(json["kind"], "semaphore");
    assert_eq!(
        (json["limit"].as_u64(), json["quorum"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(json["verdict"], "held");
    assert_eq!(json["holders"].as_array().unwrap().len(), 2);
    assert_eq!(json["masters"][0]["slots"].as_array().unwrap().len(), 2);

    let token_cmd = |verb: &str, token: &str| {
        cluster
            .redlock()
            .args([verb, "--key", "sem-st", "--token", token])
            .output()
            .unwrap()
    };
    let extended = token_cmd("extend", &tokens[0]);
    assert!(extended.status.success(), "{}", describe(&extended));
    for token in &tokens {
        let released = token_cmd("release", token);
        assert!(released.status.success(), "{}", describe(&released));
    }
    let again = token_cmd("release", &tokens[0]);
    assert_eq!(again.status.code(), Some(70), "{}", describe(&again));
    let gone = token_cmd("extend", &tokens[1]);
    assert_eq!(gone.status.code(), Some(70), "{}", describe(&gone));
    assert_eq!(status(false).status.code(), Some(1));
    assert!(cluster.servers.iter().all(|s| s.lock_keys().is_empty()));
}

#[test]
fn fence_with_more_than_one_slot_is_refused() {
    let output = common::redlock()
        .args(["acquire", "--key", "k", "--limit", "2", "--fence"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--fence with --limit 2"), "{stderr}");
}

/// The counterexample is why a majority is not enough: with N = 5 and L = 2, three
/// holders could each hold 3 masters. So with two masters down a slot is refused, although a
/// majority answers (and the lock, which needs only that majority, is taken).
#[test]
fn a_majority_is_not_enough_for_a_slot() {
    let mut cluster = Cluster::start(5);
    cluster.server(3).kill();
    cluster.server(4).kill();
    let slot = cluster
        .redlock()
        .args(["acquire", "--key", "sem-q", "--limit", "2", "--ttl", "5s"])
        .output()
        .unwrap();
    assert_eq!(slot.status.code(), Some(69), "{}", describe(&slot));
    let stderr = String::from_utf8_lossy(&slot.stderr);
    assert!(stderr.contains("need 4 masters"), "{stderr}");
    assert!(
        slots_everywhere(&cluster, "sem-q")
            .iter()
            .all(Vec::is_empty)
    );
    let lock = cluster
        .redlock()
        .args(["acquire", "--key", "lock-q", "--ttl", "5s"])
        .output()
        .unwrap();
    assert!(lock.status.success(), "{}", describe(&lock));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// The number of places in `key`'s fair queue on every running master.
fn queued(cluster: &Cluster, key: &str) -> Vec<usize> {
    let queue = format!("__redlock:{{{key}}}:queue:{key}");
    cluster
        .servers
        .iter()
        .map(|s| {
            redis::cmd("ZCARD")
                .arg(&queue)
                .query(&mut s.connection())
                .expect("ZCARD")
        })
        .collect()
}

/// Waiters for a slot are served in the order they came: with both slots of L = 2 taken, four
/// waiters queue one after the other; each freed slot goes to the first of them, and a
/// waiter's section only starts in its turn.
#[test]
fn waiters_for_a_slot_take_it_in_the_order_they_came() {
    let cluster = Cluster::start(3);
    let key = "sem-fifo";
    let acquire = || {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", key, "--limit", "2", "--ttl", "60s"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    let holders = [acquire(), acquire()];
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let mut waiters = Vec::new();
    for n in 1..=4 {
        let section = format!(
            "echo {n} >> {order}; while [ ! -e {gate}{n} ]; do sleep 0.02; done",
            order = order.display(),
            gate = dir.path().join("gate").display(),
        );
        let waiter = cluster
            .redlock()
            .args(["run", "--key", key, "--limit", "2", "--ttl", "10s"])
            .args(["--wait", "60s", "--", "sh", "-c", &section])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        waiters.push(waiter);
        // In line on every master before the next one comes.
        assert!(
            eventually(Duration::from_secs(20), || queued(&cluster, key)
                .iter()
                .all(|q| *q == n)),
            "waiter {n} never queued: {:?}",
            queued(&cluster, key)
        );
    }
    let status = cluster
        .redlock()
        .args(["status", "--key", key, "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["waiting"], 4, "{json}");
    let entered = |n: usize| {
        eventually(Duration::from_secs(20), || {
            std::fs::read_to_string(&order)
                .unwrap_or_default()
                .lines()
                .count()
                >= n
        })
    };
    let release = |token: &str| {
        let output = cluster
            .redlock()
            .args(["release", "--key", key, "--token", token])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
    };
    let open = |n: usize| std::fs::write(dir.path().join(format!("gate{n}")), "").unwrap();
    release(&holders[0]);
    assert!(entered(1));
    release(&holders[1]);
    assert!(entered(2));
    open(1);
    assert!(entered(3));
    open(2);
    assert!(entered(4));
    open(3);
    open(4);
    for mut waiter in waiters {
        assert!(waiter.wait().unwrap().success());
    }
    let order = std::fs::read_to_string(&order).unwrap();
    assert_eq!(order, "1\n2\n3\n4\n");
    assert!(slots_everywhere(&cluster, key).iter().all(Vec::is_empty));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A Redis Cluster as the master: the slots, the limit, the records and the queue all live in
/// the key's hash slot on the node that owns it (here not the node the URL names), and a
/// waiter for a slot is woken there with SPUBLISH on its own channel, never with PUBLISH.
#[test]
fn slots_on_a_cluster_master_and_a_waiter_woken_by_sharded_pub_sub() {
    let cluster = RedisCluster::start(3);
    let key = cluster.key_on(2, "sem-");
    let owner = cluster.owner(&key);
    let acquire = || {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", &key, "--limit", "2", "--ttl", "30s"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    let tokens = [acquire(), acquire()];
    let slots: Vec<String> = redis::cmd("ZRANGE")
        .arg(keys::slots(&key))
        .arg(0)
        .arg(-1)
        .query(&mut cluster.nodes[owner].connection())
        .expect("ZRANGE");
    assert_eq!(slots.len(), 2, "{slots:?}");
    let mut waiter = cluster
        .redlock()
        .args(["run", "--key", &key, "--limit", "2", "--ttl", "5s"])
        .args(["--wait", "30s", "--", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let queued = || -> usize {
        redis::cmd("ZCARD")
            .arg(keys::queue(&key))
            .query(&mut cluster.nodes[owner].connection())
            .expect("ZCARD")
    };
    assert!(eventually(Duration::from_secs(10), || queued() == 1));
    let published = cluster.nodes[owner].command_calls("spublish");
    let released = cluster
        .redlock()
        .args(["release", "--key", &key, "--token", &tokens[0]])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    // Before Redis 7.0 there is no SPUBLISH: the waiter is woken by its heartbeat.
    let woken = cluster.nodes[owner].command_calls("spublish") > published;
    assert_eq!(woken, common::sharded_pub_sub());
    assert!(waiter.wait().unwrap().success());
    let released = cluster
        .redlock()
        .args(["release", "--key", &key, "--token", &tokens[1]])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert!(
        cluster
            .nodes
            .iter()
            .all(|n| n.command_calls("publish") == 0)
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Issue 33, item 3: a slot another client wrote with a score past any TTL redlock gives (1e20
/// ms, past 2^63: `%d` wrapped it negative, and PEXPIREAT at that time deleted the slots key
/// with the slot just taken) is not a slot: four contenders for two slots get two, each
/// keeps its slot on every master, and nothing is left without a TTL.
#[test]
fn a_foreign_slot_scored_past_any_ttl_admits_no_third_holder() {
    let cluster = Cluster::start(3);
    let key = "sm2";
    // The foreign member, scored `score` on every master.
    let write_foreign = |score: &str| {
        for server in &cluster.servers {
            let _: i64 = redis::cmd("ZADD")
                .arg(keys::slots(key))
                .arg(score)
                .arg("foreign")
                .query(&mut server.connection())
                .unwrap();
        }
    };
    write_foreign("1e20");
    // Not a slot: `status` does not count it either.
    let status = cluster
        .redlock()
        .args(["status", "--key", key])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "{}", describe(&status));
    let mut tokens = Vec::new();
    for _ in 0..4 {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", key, "--limit", "2", "--ttl", "30s"])
            .args(["--wait", "0"])
            .output()
            .unwrap();
        match output.status.code() {
            Some(0) => tokens.push(String::from_utf8(output.stdout).unwrap().trim().to_string()),
            code => assert_eq!(code, Some(75), "{}", describe(&output)),
        }
    }
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    for members in slots_everywhere(&cluster, key) {
        for token in &tokens {
            assert!(members.contains(token), "{token} not in {members:?}");
        }
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
    // Written again beside the holders: `status` counts the holders' slots alone.
    write_foreign("+inf");
    let status = cluster
        .redlock()
        .args(["status", "--key", key, "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        json["masters"][0]["slots"].as_array().unwrap().len(),
        2,
        "{json:#}"
    );
    assert_eq!(json["holders"].as_array().unwrap().len(), 2, "{json:#}");
    for token in &tokens {
        let released = cluster
            .redlock()
            .args(["release", "--key", key, "--token", token])
            .output()
            .unwrap();
        assert!(released.status.success(), "{}", describe(&released));
    }
    assert_clean(&cluster, key);
}
