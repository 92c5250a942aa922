//! A Redis Cluster as a master (`redis+cluster://`), against real clusters the tests start:
//! locks on keys in every node's slots (with and without hash tags), the workflow commands,
//! fencing, release notices over sharded pub/sub, a slot migrated while a lock is held and
//! renewed, a primary killed (without and with a replica to fail over to), several clusters
//! as the Redlock masters, TLS with an ACL user, and what `doctor` says about all of it.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{Captured, Cluster, Layout, RedisCluster, describe, eventually, wait_for_file};
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
