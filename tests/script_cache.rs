//! How scripts reach a master that lost its script cache (restarted, flushed, or new) and
//! answers after the quorum decided: every request a round may stop waiting for goes with its
//! body on its script's first use on a connection (`wire::node`), so it runs there anyway.
//!
//! Sending such a request by SHA1 first (EVALSHA, the body only after NOSCRIPT) saves the
//! master the body, but the NOSCRIPT of a master slower than the quorum comes back after the
//! round stopped listening, and nothing sends the body: a release leaves the lock there until
//! its TTL, and an acquire never runs there, nor caches its script, so every later lock holds
//! on the quick majority only and one failure more loses it (BENCHMARKS.md, "EVALSHA first").
//! Both tests fail with it.

use std::time::Duration;

use crate::common::proxy::{self, Fault, Proxy};
use crate::common::{Cluster, Running, describe, eventually};

/// Three masters, the third behind a proxy that delays it past the quorum's answers.
fn slow_third(cluster: &Cluster) -> Vec<Proxy> {
    let proxies = proxy::before_each(cluster);
    proxies[2].set(Fault::Delay(Duration::from_millis(200)));
    proxies
}

fn run_holding(proxies: &[Proxy], key: &str) -> Running {
    let mut cmd = crate::common::redlock();
    cmd.env("REDLOCK_SERVERS", proxy::servers_env(proxies));
    cmd.args(["run", "--key", key, "--ttl", "30s"]);
    let mut holder = Running::start(&mut cmd);
    holder.wait_ready();
    holder
}

fn flush_scripts(cluster: &mut Cluster, i: usize) {
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut cluster.server(i).connection())
        .expect("SCRIPT FLUSH");
}

/// A new master (no script cached) that answers after the quorum still takes the lock: the
/// lock tolerates a failure of one of the quick two.
#[test]
fn an_acquire_reaches_a_slow_master_that_has_no_scripts() {
    let cluster = Cluster::start(3);
    let proxies = slow_third(&cluster);
    let mut holder = run_holding(&proxies, "cold");
    let token = holder.token();
    assert!(
        eventually(Duration::from_secs(5), || cluster.servers[2].get("cold")
            == Some(token.clone())),
        "the slow master never got the lock: {:?}",
        cluster.values("cold")
    );
    holder.open_gate();
    let output = holder.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
}

/// The release whose answer nobody waits for: the round decides on the two quick masters and
/// stops, the slow one's release still on its way, to a master that lost its scripts while the
/// command ran.
#[test]
fn a_release_reaches_a_slow_master_that_lost_its_scripts() {
    let mut cluster = Cluster::start(3);
    let proxies = slow_third(&cluster);
    let holder = run_holding(&proxies, "flushed");
    assert!(
        eventually(Duration::from_secs(5), || cluster.servers[2]
            .get("flushed")
            .is_some()),
        "the slow master never got the lock"
    );
    flush_scripts(&mut cluster, 2);
    let mut holder = holder;
    holder.open_gate();
    let output = holder.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        eventually(Duration::from_secs(5), || cluster.servers[2]
            .get("flushed")
            .is_none()),
        "the lock stayed on the slow master, TTL {} ms",
        cluster.servers[2].pttl("flushed")
    );
    assert!(cluster.key_gone_everywhere("flushed"));
}
