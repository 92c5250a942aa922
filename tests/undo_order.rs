//! An undo is never overtaken by what it undoes (see src/lock/kinds/undo.rs): when the connection
//! that carried an attempt breaks before the attempt is answered, and the undo has to go on a
//! new connection, the attempt may still reach its master after the undo. The fault proxy
//! plays a middlebox that drops the client's connection while it still holds the attempt.

use crate::common;

use std::time::Duration;

use crate::common::proxy::{self, Fault};
use crate::common::{Cluster, describe, eventually};

#[test]
fn an_attempt_that_lands_after_its_undo_on_a_new_connection_is_undone_again() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    // Another client holds the lock on masters 1 and 2: the attempt fails there, and must be
    // undone on master 3, where it takes the key.
    for server in &cluster.servers[..2] {
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg("foreign")
            .arg("PX")
            .arg(60_000)
            .query(&mut server.connection())
            .unwrap();
    }
    // Masters 1 and 2 refuse only after about a second; master 3's proxy holds the attempt
    // for 2.5 s.
    proxies[0].set(Fault::Delay(Duration::from_millis(500)));
    proxies[1].set(Fault::Delay(Duration::from_millis(500)));
    proxies[2].set(Fault::Delay(Duration::from_millis(2500)));
    let mut attempt = common::redlock();
    attempt
        .env("REDLOCK_SERVERS", proxy::servers_env(&proxies))
        .args([
            "acquire",
            "--key",
            "k",
            "--ttl",
            "30s",
            "--node-timeout",
            "3s",
        ])
        .args(["--wait", "0"]);
    let attempt = std::thread::spawn(move || attempt.output());
    // Once the attempt is in master 3's proxy: the proxy drops the client's side (the attempt
    // still goes on to the master later), and lets the next connection through at once.
    assert!(
        eventually(Duration::from_secs(10), || proxies[2].received() >= 1),
        "the attempt never reached master 3's proxy"
    );
    proxies[2].set(Fault::Pass);
    proxies[2].drop_clients();
    let output = attempt.join().unwrap().unwrap();
    assert!(!output.status.success(), "{}", describe(&output));
    // The held attempt and the undo sent on the new connection both reached master 3.
    assert!(
        eventually(Duration::from_secs(10), || proxies[2].forwarded() >= 2),
        "the attempt was never passed on to master 3"
    );
    // Whatever the late attempt took on master 3 is gone: it was undone once more.
    assert!(
        !eventually(Duration::from_secs(1), || cluster.servers[2]
            .get("k")
            .is_some()),
        "the late attempt holds master 3 (ttl {} ms): {}",
        cluster.servers[2].pttl("k"),
        describe(&output)
    );
}
