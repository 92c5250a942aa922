//! Bounded work per script call: a queue filled by a foreign client with places that have no
//! lease is cleaned a bounded number of places per call (see src/lock/scripts/queue.rs), never
//! all at once, and the waiters are still served.

use crate::common::{Cluster, Server, describe};

/// The cap on places one call drops without a live lease at the head of the queue.
const CAP: usize = 100;

fn queue_key(key: &str) -> String {
    format!("__redlock:{{{key}}}:queue:{key}")
}

fn places(server: &Server, key: &str) -> usize {
    redis::cmd("ZCARD")
        .arg(queue_key(key))
        .query(&mut server.connection())
        .expect("ZCARD")
}

/// `count` places without a lease, ahead of any ticket (score 0), as a foreign client could
/// write them; with a TTL, as every key must have.
fn foreign_places(server: &Server, key: &str, count: usize) {
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(queue_key(key));
    for i in 0..count {
        zadd.arg(0).arg(format!("foreign-{i:06}"));
    }
    let added: usize = zadd.query(&mut server.connection()).expect("ZADD");
    assert_eq!(added, count);
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(queue_key(key))
        .arg(60_000)
        .query(&mut server.connection())
        .expect("PEXPIRE");
}

#[test]
fn one_call_drops_at_most_the_cap_and_repeated_calls_serve_the_waiter() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    let foreign = 3 * CAP + 50;
    foreign_places(server, "k", foreign);

    // One script call (one ACQUIRE, no wait): at most the cap is dropped, and the places left
    // stand for waiters ahead, so the newcomer does not take the lock past them.
    let once = cluster
        .redlock()
        .args(["acquire", "--key", "k", "--ttl", "10s", "--wait", "0"])
        .output()
        .unwrap();
    assert_eq!(once.status.code(), Some(75), "{}", describe(&once));
    assert_eq!(places(server, "k"), foreign - CAP, "one call dropped more");
    assert_eq!(server.get("k"), None, "taken past the queue");

    // A waiter: its own calls (ACQUIRE, then WAIT at each heartbeat) drop the rest, a cap at a
    // time, until it is first; then it takes the lock.
    let waited = cluster
        .redlock()
        .args(["acquire", "--key", "k", "--ttl", "10s", "--wait", "30s"])
        .output()
        .unwrap();
    assert!(waited.status.success(), "{}", describe(&waited));
    let token = String::from_utf8_lossy(&waited.stdout).trim().to_string();
    assert_eq!(server.get("k").as_deref(), Some(token.as_str()));
    // Only the waiter's own place is left (it keeps it until its release).
    assert_eq!(places(server, "k"), 1);
    assert!(cluster.keys_without_ttl().is_empty());
}

/// The semaphore's waiters use the same queue, and the same bounded clean-up.
#[test]
fn a_semaphore_newcomer_drops_at_most_the_cap_and_the_waiter_is_served() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    let foreign = 2 * CAP + 10;
    foreign_places(server, "s", foreign);
    let slot = |wait: &str| {
        let args = ["acquire", "--key", "s", "--limit", "2", "--ttl", "10s"];
        cluster
            .redlock()
            .args(args)
            .args(["--wait", wait])
            .output()
            .unwrap()
    };
    let once = slot("0");
    assert_eq!(once.status.code(), Some(75), "{}", describe(&once));
    assert_eq!(places(server, "s"), foreign - CAP, "one call dropped more");
    let waited = slot("30s");
    assert!(waited.status.success(), "{}", describe(&waited));
    assert_eq!(places(server, "s"), 0);
    assert!(cluster.keys_without_ttl().is_empty());
}

/// Expired slots of `--limit` written by a foreign client: each script prunes at most the cap
/// of them (10,000 at once made every slot script fail, "too many results to unpack"), and the
/// ones left over count for nothing: the semaphore is as free as its live slots say.
#[test]
fn expired_slots_are_pruned_a_cap_at_a_time_and_count_for_nothing() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    let slots = "__redlock:{s}:slots:s";
    let expired = 10_000;
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(slots);
    for i in 0..expired {
        // Score 1: the master's time in ms long past.
        zadd.arg(1).arg(format!("foreign-{i:06}"));
    }
    let _: usize = zadd.query(&mut server.connection()).expect("ZADD");
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(slots)
        .arg(60_000)
        .query(&mut server.connection())
        .expect("PEXPIRE");

    for round in 1..=2 {
        let output = cluster
            .redlock()
            .args([
                "run", "--key", "s", "--limit", "2", "--ttl", "10s", "--", "true",
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let left: usize = redis::cmd("ZCARD")
            .arg(slots)
            .query(&mut server.connection())
            .expect("ZCARD");
        // Each run's scripts (take, renew if any, release) prune at most the cap each.
        assert!(
            left < expired && left >= expired - 3 * round * CAP,
            "round {round}: {left} left"
        );
    }
}
