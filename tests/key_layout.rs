//! The key layout against real masters: no lock key can alias one of redlock's own keys, a
//! holder record is believed only for the token now in the lock, and every auxiliary key of a
//! lock lives in the lock key's cluster hash slot.

use crate::common::{Cluster, Running, describe};
use redlock_cli::lock::keys;

/// Names that are, or could become, redlock's own keys.
const RESERVED: [&str; 5] = [
    "__redlock:{X}:holder:X",
    "__redlock:{X}:fence:X",
    "__redlock:anything",
    "redlock:holder:X",
    "redlock:fence:X",
];

#[test]
fn reserved_names_are_refused_as_lock_keys_by_every_command() {
    let cluster = Cluster::start(3);
    for key in RESERVED {
        let invocations: [&[&str]; 5] = [
            &["run", "--key", key, "--", "true"],
            &["acquire", "--key", key, "--ttl", "5s"],
            &["release", "--key", key, "--token", "t"],
            &["extend", "--key", key, "--token", "t", "--ttl", "5s"],
            &["status", "--key", key],
        ];
        for args in invocations {
            let output = cluster.redlock().args(args).output().expect("run redlock");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                output.status.code(),
                Some(64),
                "{args:?}: {}",
                describe(&output)
            );
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(stderr.contains("reserved"), "{args:?}: {stderr}");
            assert!(output.stdout.is_empty(), "{args:?}");
        }
    }
    for server in &cluster.servers {
        assert!(server.keys().is_empty(), "a refused key touched a master");
    }
}

/// The scenario: B holds the lock whose name was A's holder record. A taking lock X must
/// not overwrite or delete B's lock, and a third process must not get in while B holds it.
#[test]
fn a_lock_cannot_be_named_after_another_locks_holder_record() {
    let cluster = Cluster::start(3);
    let holder_of_x = keys::holder("X");
    let mut b = Running::start(cluster.redlock().args(["run", "--key", "X", "--ttl", "5s"]));
    b.wait_ready();
    let token_b = b.token();
    // A user naming the holder record of X as a lock is refused, and changes nothing.
    let a = cluster
        .redlock()
        .args(["run", "--key", &holder_of_x, "--ttl", "5s", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(a.status.code(), Some(64), "{}", describe(&a));
    assert_eq!(cluster.holding("X", &token_b), 3);
    let record: serde_json::Value =
        serde_json::from_str(&cluster.servers[0].get(&holder_of_x).expect("record")).unwrap();
    assert_eq!(record["token"], token_b.as_str());
    // Under the old layout (`redlock:holder:X`), a lock of that name is now simply refused.
    let c = cluster
        .redlock()
        .args(["run", "--key", "redlock:holder:X", "--", "echo", "C"])
        .output()
        .unwrap();
    assert_eq!(c.status.code(), Some(64), "{}", describe(&c));
    assert!(c.stdout.is_empty(), "C ran while B held the lock");
    b.open_gate();
    let b = b.wait_output();
    assert_eq!(b.status.code(), Some(0), "{}", describe(&b));
}

/// Another Redlock client replaced the key (after deleting it, or after it expired and the
/// record had not): status and the conflict message must not name redlock's old holder.
#[test]
fn a_holder_record_is_shown_only_for_the_token_in_the_key() {
    let cluster = Cluster::start(3);
    let mut b = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "k", "--ttl", "20s"]),
    );
    let b_pid = b.child.id();
    b.wait_ready();
    for server in &cluster.servers {
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg("another-clients-token")
            .arg("PX")
            .arg(20_000)
            .query(&mut server.connection())
            .unwrap();
    }
    // B's record is still there, with B's token: exactly the stale case.
    assert!(cluster.servers[0].get(&keys::holder("k")).is_some());

    let status = cluster
        .redlock()
        .args(["status", "--key", "k", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(report["verdict"], "held", "{}", describe(&status));
    assert_eq!(report["token"], "another-clients-token");
    assert!(report["holder"].is_null(), "{report}");
    for master in report["masters"].as_array().unwrap() {
        assert!(master["holder"].is_null(), "{master}");
    }
    let text = cluster
        .redlock()
        .args(["status", "--key", "k"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("held by another client"), "{text}");
    assert!(!text.contains(&format!("pid {b_pid}")), "{text}");

    let conflict = cluster
        .redlock()
        .args(["acquire", "--key", "k", "--ttl", "5s", "--wait", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&conflict.stderr);
    assert_eq!(conflict.status.code(), Some(75), "{}", describe(&conflict));
    assert!(stderr.contains("held by another client"), "{stderr}");
    assert!(!stderr.contains(&format!("pid {b_pid}")), "{stderr}");

    // B finds the lock gone at its next renewal and stops its command; its record expires.
    b.open_gate();
    let _ = b.wait_output();
    for server in &cluster.servers {
        assert!(
            server.pttl(&keys::holder("k")) != -1,
            "a record without TTL"
        );
    }
}

/// redlock's own names agree with the slot Redis Cluster computes, for keys with and without
/// hash tags and with stray braces.
#[test]
fn auxiliary_keys_hash_to_the_lock_keys_slot_on_a_real_cluster_node() {
    let cluster = Cluster::start_with(1, &["--cluster-enabled", "yes"]);
    let mut connection = cluster.servers[0].connection();
    let mut slot = |name: &str| -> i64 {
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(name)
            .query(&mut connection)
            .expect("CLUSTER KEYSLOT")
    };
    let locks = [
        "deploy-prod",
        "{tenant-7}.backup",
        "a{b",
        "a}b",
        "{}x",
        "x{}y{z}",
        "}{",
        "ünïcödé/ジョブ",
        "k with spaces",
    ];
    for key in locks {
        let expected = slot(key);
        assert_eq!(i64::from(keys::key_slot(key)), expected, "{key}");
        for aux in [
            keys::holder(key),
            keys::fence(key),
            keys::released_channel(key),
        ] {
            assert_eq!(slot(&aux), expected, "{key:?} -> {aux:?}");
        }
    }
    // Nothing redlock wrote is left behind, and the test itself wrote nothing.
    assert!(cluster.servers[0].keys().is_empty());
}
