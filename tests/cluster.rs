//! A Redis Cluster as a master (`redis+cluster://`), against real clusters the tests start:
//! locks on keys in every node's slots (with and without hash tags), the workflow commands,
//! fencing, release notices over sharded pub/sub, a slot migrated while a lock is held and
//! renewed, a primary killed (without and with a replica to fail over to), several clusters
//! as the Redlock masters, TLS with an ACL user, and what `doctor` says about all of it.

use crate::common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{Captured, Cluster, Layout, RedisCluster, describe, eventually};
use redlock_cli::lock::keys::{self, key_slot};
use serde_json::Value;

fn run(mut command: Command, args: &[&str]) -> Output {
    command.args(args).output().expect("run redlock")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_string()
}

fn acquire(cluster: &RedisCluster, key: &str) -> String {
    let output = run(
        cluster.redlock(),
        &["acquire", "--key", key, "--ttl", "30s"],
    );
    assert!(output.status.success(), "{key}: {}", describe(&output));
    stdout(&output)
}

fn status_json(command: Command, key: &str) -> (Option<i32>, Value) {
    let output = run(command, &["status", "--key", key, "--json"]);
    let json = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("status --json is not JSON ({e}): {}", describe(&output)));
    (output.status.code(), json)
}

#[test]
fn locks_on_keys_in_every_nodes_slots_with_and_without_hash_tags() {
    let cluster = RedisCluster::start(3);
    let mut locks: Vec<String> = (0..3).map(|i| cluster.key_on(i, "job-")).collect();
    // Hash tags keep their meaning: these two share a slot, and the `}` keys cannot be
    // wrapped in braces at all (see `keys`).
    locks.extend(["{tenant-7}.backup", "{tenant-7}.restore", "a}b", "{}x", "}"].map(String::from));
    let owners: Vec<usize> = locks.iter().map(|k| cluster.owner(k)).collect();
    for i in 0..3 {
        assert!(owners.contains(&i), "no lock on node {i}: {owners:?}");
    }
    for key in &locks {
        let token = acquire(&cluster, key);
        // On the node that owns the slot, with its holder record beside it.
        assert_eq!(cluster.get(key).as_deref(), Some(token.as_str()), "{key}");
        let record = cluster.get(&keys::holder(key)).expect("a holder record");
        assert!(record.contains(&token), "{record}");
        let (code, json) = status_json(cluster.redlock(), key);
        assert_eq!(code, Some(0), "{key}: {json}");
        assert_eq!(json["masters"][0]["token"], token.as_str(), "{json}");
        // Taken: a second acquire is refused, and says by whom.
        let refused = run(
            cluster.redlock(),
            &["acquire", "--key", key, "--ttl", "30s", "--wait", "0"],
        );
        assert_eq!(refused.status.code(), Some(75), "{}", describe(&refused));
        let extended = run(
            cluster.redlock(),
            &["extend", "--key", key, "--token", &token, "--ttl", "60s"],
        );
        assert!(extended.status.success(), "{}", describe(&extended));
        assert!(cluster.pttl(key) > 30_000, "{key} not extended");
        let released = run(
            cluster.redlock(),
            &["release", "--key", key, "--token", &token],
        );
        assert!(released.status.success(), "{}", describe(&released));
        assert_eq!(cluster.get(key), None, "{key}");
        assert_eq!(cluster.get(&keys::holder(key)), None, "{key}");
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn fencing_and_release_notices_on_a_cluster_master() {
    let cluster = RedisCluster::start(3);
    // On a node other than the one the URL names: every request is redirected first.
    let key = cluster.key_on(2, "fenced-");
    let owner = cluster.owner(&key);
    assert_ne!(owner, 0);
    let mut fences = Vec::new();
    for _ in 0..3 {
        let output = run(
            cluster.redlock(),
            &[
                "acquire", "--key", &key, "--ttl", "30s", "--fence", "--format", "json",
            ],
        );
        assert!(output.status.success(), "{}", describe(&output));
        let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
        fences.push(json["fence"].as_u64().expect("a fence"));
        let token = json["token"].as_str().unwrap();
        let released = run(
            cluster.redlock(),
            &["release", "--key", &key, "--token", token],
        );
        assert!(released.status.success(), "{}", describe(&released));
    }
    assert_eq!(fences, [1, 2, 3]);
    // The counter lives in the lock's slot, without a TTL (the one key that has none).
    assert_eq!(cluster.get(&keys::fence(&key)).as_deref(), Some("3"));
    assert_eq!(
        cluster.keys_without_ttl(),
        [format!("node {owner}: {}", keys::fence(&key))]
    );
    // `--order`'s register too lives in the lock's slot (redirected there), with its TTL.
    let ran = run(
        cluster.redlock(),
        &["run", "--key", &key, "--order", "5", "--", "true"],
    );
    assert!(ran.status.success(), "{}", describe(&ran));
    let outdated = run(
        cluster.redlock(),
        &["run", "--key", &key, "--order", "4", "--", "true"],
    );
    assert_eq!(outdated.status.code(), Some(81), "{}", describe(&outdated));
    assert_eq!(cluster.get(&keys::order(&key)).as_deref(), Some("5"));
    assert_eq!(cluster.keys_without_ttl().len(), 1);

    // A waiter subscribes (SSUBSCRIBE) on the node that owns the key's slot, and the release
    // is announced there with SPUBLISH.
    let token = acquire(&cluster, &key);
    let mut waiter = cluster.redlock();
    waiter
        .args([
            "-vv", "run", "--key", &key, "--ttl", "5s", "--wait", "30s", "--", "true",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut waiter = waiter.spawn().expect("spawn the waiter");
    let waiter_stderr = Captured::stderr_of(&mut waiter);
    if !common::sharded_pub_sub() {
        // Before Redis 7.0: no sharded pub/sub, and a cluster's plain PUBLISH would reach
        // every node; the waiter says it cannot listen, and takes its turn by its heartbeat.
        waiter_stderr.wait_for(
            &format!("listening for release notices of {key:?} on 0 of 1 master"),
            Duration::from_secs(10),
        );
        let released = run(
            cluster.redlock(),
            &["release", "--key", &key, "--token", &token],
        );
        assert!(released.status.success(), "{}", describe(&released));
        let status = waiter.wait().expect("wait for the waiter");
        assert!(status.success(), "{}", waiter_stderr.text());
        assert!(waiter_stderr.text().contains("started by the heartbeat"));
        assert!(
            cluster
                .nodes
                .iter()
                .all(|n| n.command_calls("publish") == 0)
        );
        return;
    }
    waiter_stderr.wait_for(
        &format!("listening for release notices of {key:?} on 1 of 1 master"),
        Duration::from_secs(10),
    );
    let node = &cluster.nodes[owner];
    // The waiter listens on its own wake channel (see the fair queue), named by its token in
    // the queue, in the lock's slot.
    let queued: Vec<String> = redis::cmd("ZRANGE")
        .arg(keys::queue(&key))
        .arg(0)
        .arg(-1)
        .query(&mut node.connection())
        .expect("ZRANGE");
    assert_eq!(queued.len(), 1, "{queued:?}");
    let channel = keys::wake_channel(&key, &queued[0]);
    let subscribers = || -> i64 {
        let counts: Vec<redis::Value> = redis::cmd("PUBSUB")
            .arg("SHARDNUMSUB")
            .arg(&channel)
            .query(&mut node.connection())
            .expect("PUBSUB SHARDNUMSUB");
        match counts.get(1) {
            Some(redis::Value::Int(n)) => *n,
            other => panic!("SHARDNUMSUB: {other:?}"),
        }
    };
    assert_eq!(subscribers(), 1);
    let published = node.command_calls("spublish");
    let released = run(
        cluster.redlock(),
        &["release", "--key", &key, "--token", &token],
    );
    assert!(released.status.success(), "{}", describe(&released));
    // (The waiter announces its own release too, once it is done.)
    assert!(node.command_calls("spublish") > published);
    let status = waiter.wait().expect("wait for the waiter");
    assert!(status.success(), "{}", waiter_stderr.text());
    // The plain pub/sub of a cluster (broadcast to every node) was not used.
    assert!(
        cluster
            .nodes
            .iter()
            .all(|n| n.command_calls("publish") == 0)
    );
}

#[test]
fn a_slot_migrated_while_the_lock_is_held_and_renewed() {
    let cluster = RedisCluster::start(3);
    let key = cluster.key_on(1, "moving-");
    let slot = key_slot(&key);
    let (from, to) = (1, 2);
    let mut holder = cluster.redlock();
    holder.args(["run", "--key", &key, "--ttl", "3s"]);
    let mut running = common::Running::start(&mut holder);
    running.wait_ready();
    let token = running.token();
    // Renewals (every TTL/3) counted where they land; ASKING where a key is asked for.
    let scripts = |i: usize| {
        let node = &cluster.nodes[i];
        node.command_calls("evalsha") + node.command_calls("eval")
    };
    let renewed_on = |i: usize| {
        let before = scripts(i);
        assert!(
            eventually(Duration::from_secs(10), || scripts(i) > before),
            "no renewal reached node {i}: {}",
            running.stderr_so_far()
        );
    };
    let mut newcomer = None;
    cluster.migrate(slot, from, to, |step| match step {
        // Both keys of the lock are still on the old owner: it serves them.
        "open" => {
            renewed_on(from);
            // A lock in the same slot that nobody holds: its keys are on neither node, and a
            // script's keys split between nodes are refused with TRYAGAIN until the slot has
            // moved. It is taken once the slot has moved, waiting meanwhile.
            let other = format!("{{{key}}}.other");
            let mut acquire = cluster.redlock();
            acquire
                .args([
                    "-vv", "acquire", "--key", &other, "--ttl", "30s", "--wait", "30s",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = acquire.spawn().expect("spawn acquire");
            let stderr = Captured::stderr_of(&mut child);
            stderr.wait_for("TRYAGAIN", Duration::from_secs(10));
            newcomer = Some((child, stderr, other));
        }
        // The keys moved: the old owner answers ASK, the new one serves after ASKING.
        "moved" => {
            assert_eq!(
                cluster.nodes[to].get_asking(&key).as_deref(),
                Some(token.as_str())
            );
            let asked = cluster.nodes[to].command_calls("asking");
            renewed_on(to);
            assert!(cluster.nodes[to].command_calls("asking") > asked);
        }
        // The slot is the new owner's: MOVED, and renewals go there from now on.
        _ => renewed_on(to),
    });
    let (status, json) = status_json(cluster.redlock(), &key);
    assert_eq!(status, Some(0), "{json}");
    assert_eq!(json["masters"][0]["token"], token.as_str());
    assert_eq!(cluster.owner(&key), to);
    let (mut child, stderr, other) = newcomer.expect("the newcomer was started");
    let acquired = child.wait().expect("wait for acquire");
    assert!(acquired.success(), "{}", stderr.text());
    // TRYAGAIN is waited out on the importing node, not bounced between the two as redirects.
    assert!(
        !stderr.text().contains("still redirected"),
        "{}",
        stderr.text()
    );
    assert!(cluster.nodes[to].get(&other).is_some());
    running.open_gate();
    let output = running.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(
        cluster.nodes[to].get(&key),
        None,
        "released on the new owner"
    );
}

#[test]
fn a_killed_primary_takes_only_its_own_slots_out_of_reach() {
    // With full coverage required (Redis's default) a cluster that lost a shard refuses every
    // request once it noticed (CLUSTERDOWN): one master down, for every key. Without, only the
    // lost slots are.
    let mut cluster = RedisCluster::start_with(Layout {
        primaries: 3,
        args: &["--cluster-require-full-coverage", "no"],
        ..Layout::default()
    });
    let keys: Vec<String> = (0..3).map(|i| cluster.key_on(i, "k-")).collect();
    cluster.nodes[1].kill();
    for (i, key) in keys.iter().enumerate() {
        let output = run(
            cluster.redlock(),
            &["acquire", "--key", key, "--ttl", "30s", "--wait", "0"],
        );
        if i == 1 {
            assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
            let port = cluster.nodes[1].port;
            assert!(
                stderr(&output).contains(&format!("node 127.0.0.1:{port}: Connection refused")),
                "{}",
                describe(&output)
            );
        } else {
            assert!(output.status.success(), "{key}: {}", describe(&output));
        }
    }
    // doctor names the dead shard.
    let output = run(cluster.redlock(), &["doctor", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let shards = json["masters"][0]["cluster"]["shards"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(shards.len(), 3, "{json:#}");
    let dead: Vec<&Value> = shards.iter().filter(|s| s["reachable"] == false).collect();
    assert_eq!(dead.len(), 1, "{json:#}");
    assert_eq!(
        dead[0]["primary"],
        format!("127.0.0.1:{}", cluster.nodes[1].port)
    );
}

/// What a failover does to a held lock: the primary that holds it stops answering (paused, as
/// behind a partition: every request to it runs into its deadline), its replica is promoted,
/// and the renewals of `redlock run` find the new primary through the slot map of the other
/// nodes. The lock survives when the replica had it (here it had: the test waits until it
/// does); a replica that had not would have made a majority of masters refuse the renewal,
/// and the command would have been stopped (exit 70). Here the lock lives on the node the URL
/// names, so the run must find the new primary without that node.
#[test]
fn a_failover_under_a_held_lock_moves_the_renewals_to_the_promoted_replica() {
    let mut cluster = RedisCluster::start_with(Layout {
        primaries: 3,
        replicas: 1,
        ..Layout::default()
    });
    // doctor: every shard has a replica in sync, and a lone cluster with replicas is a
    // warning (a failover can lose a lock and nothing outvotes the loss).
    let output = run(cluster.redlock(), &["doctor", "--json"]);
    let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    for shard in json["masters"][0]["cluster"]["shards"].as_array().unwrap() {
        assert_eq!(shard["replicas"].as_array().unwrap().len(), 1, "{shard:#}");
        let replicas = shard["checks"].as_array().unwrap().iter();
        let replicas: Vec<&Value> = replicas.filter(|c| c["check"] == "replicas").collect();
        assert_eq!(replicas[0]["level"], "ok", "{shard:#}");
    }
    let failover = json["checks"].as_array().unwrap().iter();
    let failover: Vec<&Value> = failover.filter(|c| c["check"] == "failover").collect();
    assert_eq!(failover[0]["level"], "warning", "{json:#}");

    let key = cluster.key_on(0, "failover-");
    let mut holder = cluster.redlock();
    holder.args(["-vv", "run", "--key", &key, "--ttl", "6s"]);
    let mut running = common::Running::start(&mut holder);
    running.wait_ready();
    let token = running.token();
    // The first renewal also fetched the slot map (alongside, on the seed's connection).
    assert!(
        running.wait_for_stderr("slot map from", Duration::from_secs(20)),
        "{}",
        running.stderr_so_far()
    );
    let replica = 3; // replica of primary 0 (see `Layout`)
    assert!(
        eventually(Duration::from_secs(5), || cluster.nodes[replica]
            .get_readonly(&key)
            .is_some()),
        "the lock never reached the replica"
    );
    cluster.nodes[0].pause();
    let promoted = eventually(Duration::from_secs(30), || {
        cluster.nodes[replica].info_field(&["INFO", "replication"], "role") == Some("master".into())
    });
    assert!(promoted, "no failover: {}", cluster.describe());
    // A renewal on the new primary: the lock's time to live goes back up to the full TTL.
    let after = cluster.nodes[replica].pttl(&key);
    assert!(after > 0, "the promoted replica lost the lock ({after})");
    assert!(
        eventually(Duration::from_secs(20), || cluster.nodes[replica]
            .pttl(&key)
            > after),
        "no renewal reached the promoted replica: {}",
        running.stderr_so_far()
    );
    // The URL's node is out of reach: other processes go through another node, once that
    // node has learnt of the failover (until then it answers CLUSTERDOWN, as it should).
    let serving = eventually(Duration::from_secs(30), || {
        cluster.nodes[1].info_field(&["CLUSTER", "INFO"], "cluster_state") == Some("ok".into())
    });
    assert!(
        serving,
        "node 1 never saw the failover: {}",
        cluster.describe()
    );
    let mut status = common::redlock();
    status.env("REDLOCK_SERVERS", cluster.url_via(1));
    let (code, json) = status_json(status, &key);
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(json["masters"][0]["token"], token.as_str());
    running.open_gate();
    let output = running.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(cluster.nodes[replica].get(&key), None);
}

#[test]
fn independent_clusters_as_the_masters_with_one_of_them_down() {
    let mut clusters = RedisCluster::start_many(
        3,
        Layout {
            primaries: 2,
            ..Layout::default()
        },
    );
    let servers: Vec<String> = clusters.iter().map(RedisCluster::url).collect();
    let redlock = || {
        let mut cmd = common::redlock();
        cmd.env("REDLOCK_SERVERS", servers.join(","));
        cmd
    };
    let token = {
        let output = run(redlock(), &["acquire", "--key", "shared", "--ttl", "30s"]);
        assert!(output.status.success(), "{}", describe(&output));
        stdout(&output)
    };
    assert!(
        clusters
            .iter()
            .filter(|c| c.get("shared").as_deref() == Some(token.as_str()))
            .count()
            >= 2
    );
    let released = run(
        redlock(),
        &["release", "--key", "shared", "--token", &token],
    );
    assert!(released.status.success(), "{}", describe(&released));

    // One cluster down entirely: two of three still make the quorum.
    for node in &mut clusters[2].nodes {
        node.kill();
    }
    let output = run(
        redlock(),
        &["run", "--key", "shared", "--ttl", "5s", "--", "echo", "ran"],
    );
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(stdout(&output), "ran");
    let (code, json) = status_json(redlock(), "shared");
    assert_eq!(code, Some(1), "{json}");
    let masters = json["masters"].as_array().unwrap();
    assert_eq!(masters[2]["reachable"], false, "{json:#}");
    // A second cluster down: no majority, and the failure says which masters.
    for node in &mut clusters[1].nodes {
        node.kill();
    }
    let output = run(
        redlock(),
        &["acquire", "--key", "shared", "--ttl", "5s", "--wait", "0"],
    );
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    assert!(
        stderr(&output).contains(&servers[1]),
        "{}",
        describe(&output)
    );
}

/// The ACL user of the manual's "Redis Cluster" page, as written there: what locks, notices,
/// fencing and following the cluster need, and `doctor`'s questions; nothing else.
fn manual_acl_user() -> Vec<String> {
    let page = common::manual::page("docs/redis-cluster.md");
    let line = page
        .text
        .lines()
        .find(|line| line.starts_with("ACL SETUSER locker "))
        .expect("docs/redis-cluster.md shows the ACL user for a cluster");
    let words = line.split_whitespace().map(str::to_string);
    // The page says to leave these two out before Redis 7.0, which has no sharded pub/sub.
    let unknown_before_7_0 = |word: &String| word == "+spublish" || word == "+ssubscribe";
    (words)
        .filter(|word| common::sharded_pub_sub() || !unknown_before_7_0(word))
        .collect()
}

#[test]
fn tls_and_an_acl_user_on_every_node() {
    let pki = common::Pki::generate();
    let cluster = RedisCluster::start_with(Layout {
        primaries: 3,
        tls: Some(&pki),
        ..Layout::default()
    });
    let acl_user = manual_acl_user();
    let acl_user: Vec<&str> = acl_user.iter().map(String::as_str).collect();
    for node in &cluster.nodes {
        node.query(&acl_user);
    }
    // The user in the URL, the password from the environment: every node gets both.
    let url = cluster
        .url()
        .replace("rediss+cluster://", "rediss+cluster://locker@");
    let redlock = |password: &str| {
        let mut cmd = common::redlock();
        cmd.env("REDLOCK_SERVERS", &url)
            .env("REDLOCK_PASSWORD", password)
            .arg("--tls-ca-cert")
            .arg(&pki.ca);
        cmd
    };
    for i in 0..3 {
        let key = cluster.key_on(i, "tls-");
        let output = run(
            redlock("secret"),
            &[
                "run",
                "--fence",
                "--key",
                &key,
                "--",
                "sh",
                "-c",
                "echo $REDLOCK_FENCE",
            ],
        );
        assert!(output.status.success(), "{key}: {}", describe(&output));
        assert_eq!(stdout(&output), "1", "{key}");
        assert_eq!(cluster.get(&key), None, "{key}");
    }
    // Every kind's scripts run under the manual's user: the semaphore's, the readers', and
    // the queue's (a waiter woken by the holder's release).
    let key = cluster.key_on(0, "acl-");
    for kind in [&["--limit", "2"][..], &["--shared"][..]] {
        let mut args = vec!["run", "--key", &key];
        args.extend_from_slice(kind);
        args.extend_from_slice(&["--", "true"]);
        let output = run(redlock("secret"), &args);
        assert!(output.status.success(), "{kind:?}: {}", describe(&output));
    }
    let held = run(
        redlock("secret"),
        &["acquire", "--key", &key, "--ttl", "30s"],
    );
    assert!(held.status.success(), "{}", describe(&held));
    let token = stdout(&held);
    let waiter = redlock("secret")
        .args(["run", "--key", &key, "--wait", "20s", "--", "true"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The waiter joins the line, then the release hands it the lock.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let released = run(
        redlock("secret"),
        &["release", "--key", &key, "--token", &token],
    );
    assert!(released.status.success(), "{}", describe(&released));
    let waited = waiter.wait_with_output().unwrap();
    assert!(waited.status.success(), "{}", describe(&waited));
    let output = run(redlock("secret"), &["list", "--problems"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let output = run(redlock("secret"), &["doctor"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let pub_sub = match common::sharded_pub_sub() {
        true => "SSUBSCRIBE allowed",
        false => "no sharded pub/sub before Redis 7.0",
    };
    assert!(stdout(&output).contains(pub_sub), "{}", describe(&output));
    let output = run(redlock("wrong"), &["acquire", "--key", "k", "--wait", "0"]);
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    assert!(
        stderr(&output).contains("authentication failed"),
        "{}",
        describe(&output)
    );
    assert!(!stderr(&output).contains("wrong"), "{}", describe(&output));
}

#[test]
fn mistakes_are_named_a_cluster_node_as_a_server_and_one_cluster_twice() {
    let cluster = RedisCluster::start(2);
    let node = &cluster.nodes[0];
    let key = cluster.key_on(1, "elsewhere-");
    // A cluster node given as a single server redirects the keys it does not serve.
    let mut plain = common::redlock();
    plain.args(["-s", &node.url()]);
    let output = run(plain, &["acquire", "--key", &key, "--wait", "0"]);
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    assert!(
        stderr(&output).contains("give the cluster as redis+cluster://host:port"),
        "{}",
        describe(&output)
    );
    let mut plain = common::redlock();
    plain.args(["-s", &node.url(), "doctor", "--json"]);
    let output = plain.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let checks = json["masters"][0]["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c["check"] == "cluster" && c["level"] == "error"),
        "{json:#}"
    );
    // A single server given as a cluster.
    let single = Cluster::start(1);
    let mut cmd = common::redlock();
    cmd.args([
        "-s",
        &single.urls()[0].replace("redis://", "redis+cluster://"),
    ]);
    let output = run(cmd, &["doctor"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(
        stdout(&output).contains("not a cluster node"),
        "{}",
        describe(&output)
    );
    // The same cluster through two of its nodes would count twice toward the quorum.
    let mut twice = common::redlock();
    twice.args([
        "-s",
        &cluster.url_via(0),
        "-s",
        &cluster.url_via(1),
        "doctor",
        "--json",
    ]);
    let output = twice.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let duplicate = json["checks"].as_array().unwrap().iter();
    let duplicate: Vec<&Value> = duplicate.filter(|c| c["check"] == "duplicate").collect();
    assert_eq!(duplicate[0]["level"], "error", "{json:#}");
    // And a database other than 0 does not exist on a cluster.
    let mut db = common::redlock();
    db.args([
        "-s",
        &format!("{}/2", cluster.url()),
        "status",
        "--key",
        "k",
    ]);
    let output = db.output().unwrap();
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    assert!(
        stderr(&output).contains("database 0"),
        "{}",
        describe(&output)
    );
}

#[test]
fn the_fair_queue_on_a_cluster_master_serves_waiters_in_order() {
    let cluster = RedisCluster::start(3);
    let key = cluster.key_on(1, "fifo-");
    let owner = cluster.owner(&key);
    let token = acquire(&cluster, &key);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let places = || -> usize {
        redis::cmd("ZCARD")
            .arg(keys::queue(&key))
            .query(&mut cluster.nodes[owner].connection())
            .expect("ZCARD")
    };
    let mut waiters = Vec::new();
    for (i, name) in ["c1", "c2", "c3", "c4"].iter().enumerate() {
        let body = format!("echo {name} >> {}", order.display());
        waiters.push(common::Running::start_script(
            cluster
                .redlock()
                .args(["run", "--key", &key, "--ttl", "20s", "--wait", "60s"]),
            "",
            &body,
        ));
        assert!(
            eventually(Duration::from_secs(10), || places() == i + 1),
            "{name} never got its place"
        );
    }
    let released = run(
        cluster.redlock(),
        &["release", "--key", &key, "--token", &token],
    );
    assert!(released.status.success(), "{}", describe(&released));
    for mut waiter in waiters {
        let output = waiter.wait_output();
        assert!(output.status.success(), "{}", describe(&output));
    }
    let served = std::fs::read_to_string(&order).unwrap();
    assert_eq!(served.lines().collect::<Vec<_>>(), ["c1", "c2", "c3", "c4"]);
    assert_eq!(places(), 0);
}

#[test]
fn list_finds_the_locks_on_every_primary_of_a_cluster_master() {
    let cluster = RedisCluster::start(3);
    let locks: Vec<String> = (0..3).map(|i| cluster.key_on(i, "listed-")).collect();
    for key in &locks {
        acquire(&cluster, key);
    }
    let output = run(cluster.redlock(), &["list", "--json"]);
    assert!(output.status.success(), "{}", describe(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).expect("list --json is JSON");
    let mut found: Vec<String> = json["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .map(|lock| {
            assert_eq!(lock["verdict"], "held", "{lock}");
            lock["key"].as_str().unwrap().to_string()
        })
        .collect();
    found.sort();
    let mut expected = locks.clone();
    expected.sort();
    assert_eq!(found, expected);
}
