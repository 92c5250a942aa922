//! `release --force` at its edges (issue 38, a review of src/lock/kinds/revoke.rs): the values
//! K holds that are nobody's token are never an inherited lock, and what `status` says while a
//! force holds only a minority.

use std::process::Output;

use crate::common::{Cluster, describe};
use crate::force_release::force_on_master_0_only;

const CONFLICT: i32 = 75;

fn output(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().unwrap()
}

fn acquired(cluster: &Cluster, args: &[&str]) -> String {
    let output = output(cluster, args);
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// `PEXPIRE key ms` on master `i`, as another client could.
fn pexpire(cluster: &Cluster, i: usize, key: &str, ms: u64) {
    let _: () = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(ms)
        .query(&mut cluster.servers[i].connection())
        .unwrap();
}

/// A run under REDLOCK_KEY=K and REDLOCK_TOKEN=`marker` (copied from `status --json`'s
/// `token`, say) that tries once: it must not take K's marker for its own lock.
fn run_with_inherited(cluster: &Cluster, key: &str, marker: &str) -> Output {
    cluster
        .redlock()
        .env("REDLOCK_KEY", key)
        .env("REDLOCK_TOKEN", marker)
        .args(["run", "--key", key, "--wait", "0", "--", "echo", "inside"])
        .output()
        .unwrap()
}

/// Before the fix, both runs printed "inside" and exited 0: the revocation's marker (while
/// the revoked holder may still be inside) and the readers' marker (while readers hold) were
/// taken for a lock this process inherited.
#[test]
fn a_marker_in_redlock_token_is_no_inherited_lock() {
    let cluster = Cluster::start(3);
    acquired(&cluster, &["acquire", "--key", "revoked", "--ttl", "30s"]);
    let forced = output(&cluster, &["release", "--force", "--key", "revoked"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    acquired(
        &cluster,
        &["acquire", "--key", "read", "--ttl", "30s", "--shared"],
    );
    for (key, marker) in [
        ("revoked", redlock_cli::lock::REVOKED_MARKER),
        ("read", redlock_cli::lock::SHARED_MARKER),
    ] {
        let output = run_with_inherited(&cluster, key, marker);
        assert_eq!(
            output.status.code(),
            Some(CONFLICT),
            "{}",
            describe(&output)
        );
        assert!(output.stdout.is_empty(), "{}", describe(&output));
    }
}

/// A force that reached one master of three revoked nobody (it exits 69 and says the holder
/// keeps the lock): `status` and `list` name the holder, which holds a majority, and say
/// nothing of a revocation. Before the fix both said the lock "is revoked by" the forcer, on
/// the two masters where it was not.
#[test]
fn a_force_on_a_minority_is_not_shown_as_a_revocation() {
    let cluster = Cluster::start(3);
    let token = acquired(
        &cluster,
        &[
            "acquire", "--key", "half", "--ttl", "30s", "--note", "job 7",
        ],
    );
    let forced = force_on_master_0_only(&cluster, "half", 2, &[]);
    assert_eq!(forced.status.code(), Some(69), "{}", describe(&forced));
    assert_eq!(cluster.holding("half", &token), 2);

    for args in [&["status", "--key", "half"][..], &["list"][..]] {
        let text = String::from_utf8(output(&cluster, args).stdout).unwrap();
        let verdict = text.lines().find(|l| l.starts_with("lock ")).unwrap_or("");
        assert!(
            verdict.contains("is held by") && verdict.contains("job 7"),
            "{args:?}: {text}"
        );
        assert!(!verdict.contains("revoked"), "{args:?}: {text}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&output(&cluster, &["status", "--key", "half", "--json"]).stdout)
            .unwrap();
    assert_eq!(json["token"], token.as_str(), "{json}");
    assert!(json["revoked"].is_null(), "{json}");
    let list: serde_json::Value =
        serde_json::from_slice(&output(&cluster, &["list", "--json"]).stdout).unwrap();
    assert!(list["locks"][0]["revoked"].is_null(), "{list}");
}

/// A newcomer refused by a revoked key is told it was revoked, not that the forcer holds it:
/// before the fix the line said "is held by" whoever forced (the record K has while revoked),
/// "`redlock release --force …`", "expires in 30s unless renewed".
#[test]
fn a_newcomer_refused_by_a_revoked_key_is_told_so() {
    let cluster = Cluster::start(3);
    acquired(&cluster, &["acquire", "--key", "gone", "--ttl", "30s"]);
    let forced = output(&cluster, &["release", "--force", "--key", "gone"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let refused = output(&cluster, &["acquire", "--key", "gone", "--wait", "0"]);
    assert_eq!(
        refused.status.code(),
        Some(CONFLICT),
        "{}",
        describe(&refused)
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("was revoked by `redlock release --force` and stays closed")
            && !stderr.contains("held by")
            && !stderr.contains("unless renewed"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// A partial hold (another client's `SET NX` that won one master of three) is revoked where it
/// is, and the force says so. Before, it exited 79 saying "nothing was revoked" while that
/// master held the revocation for the partial hold's TTL.
#[test]
fn a_partial_hold_revoked_on_a_minority_is_said() {
    let cluster = Cluster::start(3);
    cluster.servers[0].set("part", "foreign");
    pexpire(&cluster, 0, "part", 30_000);
    let forced = output(&cluster, &["release", "--force", "--key", "part"]);
    assert_eq!(forced.status.code(), Some(79), "{}", describe(&forced));
    let stderr = String::from_utf8_lossy(&forced.stderr);
    assert!(
        stderr.contains("nobody held it; it is revoked on 1 master all the same"),
        "{stderr}"
    );
    assert_eq!(
        cluster.servers[0].get("part").as_deref(),
        Some(redlock_cli::lock::REVOKED_MARKER)
    );
}

/// Each master keeps K closed for its own token's remaining TTL plus drift: where the token
/// had 120 s left (extended there by hand), the revocation lasts far more than the 30 s plus
/// drift (30 s · 0.01 + 2 ms) it lasts at most where the token had 30 s. Both keys carry the
/// TTL.
#[test]
fn each_master_keeps_the_key_closed_for_its_own_ttl_plus_drift() {
    let cluster = Cluster::start(3);
    acquired(&cluster, &["acquire", "--key", "ttls", "--ttl", "30s"]);
    pexpire(&cluster, 1, "ttls", 120_000);
    let forced = output(&cluster, &["release", "--force", "--key", "ttls"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let holder = redlock_cli::lock::keys::holder("ttls");
    for (i, server) in cluster.servers.iter().enumerate() {
        let (k, record) = (server.pttl("ttls"), server.pttl(&holder));
        assert!(k > 0 && record > 0, "master {i}: {k} {record}");
        if i == 1 {
            assert!(k > 60_000, "master {i}: {k}");
        } else {
            assert!(k <= 30_302, "master {i}: {k}");
        }
    }
}

/// The revocation record names what was done, not the forcer's whole command line, which may
/// carry a password: before the fix, `--server redis://:s3cret@…` was kept on the masters and
/// printed by `status --json`.
#[test]
fn the_revocation_record_keeps_no_password_from_the_command_line() {
    let server = crate::common::Server::start_inner(&["--requirepass", "s3cret"], None);
    let url = server.url().replacen("redis://", "redis://:s3cret@", 1);
    let run = |args: &[&str]| {
        crate::common::redlock()
            .env_remove("REDLOCK_SERVERS")
            .args(["--server", &url])
            .args(args)
            .output()
            .unwrap()
    };
    let taken = run(&["acquire", "--key", "pw", "--ttl", "30s"]);
    assert!(taken.status.success(), "{}", describe(&taken));
    let forced = run(&["release", "--force", "--key", "pw", "--reason", "hung"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let status = run(&["status", "--key", "pw", "--json"]);
    let json = String::from_utf8_lossy(&status.stdout);
    assert!(json.contains("release --force --key pw"), "{json}");
    assert!(!json.contains("s3cret"), "{json}");
}

/// The tokens in `key`'s line on master `i`.
fn in_line(cluster: &Cluster, i: usize, key: &str) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(redlock_cli::lock::keys::queue(key))
        .arg(0)
        .arg(-1)
        .query(&mut cluster.servers[i].connection())
        .unwrap()
}

/// A waiter at the head of the line holds K for a moment on a master where the holder's token
/// is missing (master 0 here; the token is put there as its turn would): a force in that
/// moment revokes the holder on every master, and the waiter's token where it is, but names
/// only the holder as revoked, and the waiter's as a partial hold. (It printed the waiter as a
/// second holder, "the holder with token ...".)
#[test]
fn a_waiters_partial_hold_caught_by_a_force_is_no_second_holder() {
    let cluster = Cluster::start(3);
    let holder = acquired(&cluster, &["acquire", "--key", "k", "--ttl", "30s"]);
    let waiter = "0123456789abcdef0123456789abcdef";
    cluster.servers[0].set("k", waiter);
    pexpire(&cluster, 0, "k", 30_000);
    let forced = output(&cluster, &["release", "--force", "--key", "k"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let said = String::from_utf8_lossy(&forced.stdout);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("revoked the holder"), "{said}");
    assert!(!said.contains("the holder with token"), "{said}");
    assert!(
        said.contains("also closed a partial hold that held nowhere"),
        "{said}"
    );
    assert!(said.contains(waiter), "{said}");
    // The holder's release opens masters 1 and 2; master 0 stays closed for the partial hold.
    let released = output(&cluster, &["release", "--key", "k", "--token", &holder]);
    assert_eq!(released.status.code(), Some(0), "{}", describe(&released));
    assert_eq!(
        cluster.servers[0].get("k").as_deref(),
        Some(redlock_cli::lock::REVOKED_MARKER)
    );
}

/// A force that caught a waiter's partial hold on master 0, whose undo never arrives there (its
/// route to master 0 drops everything meanwhile): the revocation there keeps naming its token.
/// The waiter takes the lock properly on masters 1 and 2, its route to master 0 comes back, and
/// it loses its majority when master 2 stops: its renewal hears master 0's revocation naming
/// its token, and master 2 not at all. It exits 70 as a lost lock: that revocation is of a
/// hold that never ran, and master 0 did not give this hold the lock. (It exited 70 "revoked
/// by `redlock release --force`", by a force that ran before it held the lock.)
#[test]
fn a_revocation_of_an_earlier_partial_hold_is_not_this_holds() {
    use crate::common::proxy::{Fault, Proxy};
    let mut cluster = Cluster::start(3);
    let route = Proxy::before(&cluster.servers[0]);
    let urls = cluster.urls();
    let holder = acquired(&cluster, &["acquire", "--key", "k", "--ttl", "30s"]);
    let mut waiter = crate::common::Running::start(
        cluster
            .redlock()
            .env(
                "REDLOCK_SERVERS",
                format!("{},{},{}", route.url(), urls[1], urls[2]),
            )
            .args(["run", "--key", "k", "--ttl", "6s", "--wait", "60s"]),
    );
    assert!(
        crate::common::eventually(std::time::Duration::from_secs(20), || {
            (0..3).all(|i| in_line(&cluster, i, "k").len() == 1)
        }),
        "the waiter never queued"
    );
    let token = in_line(&cluster, 1, "k").remove(0);
    // Its partial hold on master 0, caught there by a force that only master 0 hears; the
    // waiter is stopped meanwhile, so that no turn of its own finds its token there, and from
    // then on what it sends master 0 is dropped, its undos included (a real undo crosses the
    // revocation off).
    let pid = waiter.child.id();
    crate::common::send_signal(pid, libc::SIGSTOP);
    std::thread::sleep(std::time::Duration::from_millis(100));
    route.set(Fault::Blackhole);
    cluster.servers[0].set("k", &token);
    pexpire(&cluster, 0, "k", 30_000);
    let forced = cluster
        .redlock()
        .env("REDLOCK_SERVERS", urls[0].clone())
        .args(["release", "--force", "--key", "k"])
        .output()
        .unwrap();
    crate::common::send_signal(pid, libc::SIGCONT);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    // The holder goes; the waiter takes the lock on masters 1 and 2.
    let released = output(&cluster, &["release", "--key", "k", "--token", &holder]);
    assert_eq!(released.status.code(), Some(0), "{}", describe(&released));
    waiter.wait_ready();
    assert_eq!(waiter.token(), token);
    assert_eq!(cluster.holding("k", &token), 2);
    assert_eq!(
        cluster.servers[0].get("k").as_deref(),
        Some(redlock_cli::lock::REVOKED_MARKER)
    );
    // Master 0 answers it again (on a new connection), and master 2 stops.
    route.set(Fault::Pass);
    route.reset();
    cluster.server(2).pause();
    let ran = waiter.wait_output();
    cluster.server(2).resume();
    assert_eq!(ran.status.code(), Some(70), "{}", describe(&ran));
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(!said.contains("revoked"), "{said}");
    assert!(said.contains("lost"), "{said}");
}
