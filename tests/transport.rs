//! The one connection path, seen from outside: release notices travel on the connection the
//! waiter keeps where the server speaks RESP3, else on connections opened and logged in like
//! every other (password, ACL user, database number, TLS); they wake a waiter, cost no memory
//! however many arrive, and end when the wait ends; a kept connection dropped mid-wait costs
//! no turn; and a `redis://` URL that points at a TLS port is named as such.
//!
//! A notice is recognised in the waiter's log: the turn it starts says so ("started by a
//! release notice"). To make that deterministic, the tests publish on the waiter's wake channel
//! themselves while the lock is still held: only a notice can wake the waiter then, and its
//! attempt fails.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::common::{
    Cluster, Inspector, Pki, Running, Server, describe, eventually, redlock, run_measured,
};
use redlock_cli::lock::keys::wake_channel;

const LISTENING: &str = "listening for release notices of";
const WOKEN: &str = "started by a release notice";

/// A connection to `url` (credentials and all), for the test's own commands.
fn connect(url: &str) -> Inspector {
    Inspector::open(url).expect("connect")
}

/// Publishes one message on the wake channel of the (one) waiter queued for `key`, found in
/// the queue on that master; how many subscribers got it.
///
/// The waiter's place is waited for, not read once: the waiter logs "(queued with ticket N)"
/// when its subscription is made, and its place in the queue appears only when its first turn
/// joins it, a few milliseconds later (about 20 under qemu-user), so a test that went on from
/// that line could find the queue still empty.
fn publish(connection: &mut impl redis::ConnectionLike, key: &str, payload: &[u8]) -> i64 {
    let mut queued: Vec<String> = Vec::new();
    let placed = eventually(Duration::from_secs(10), || {
        queued = redis::cmd("ZRANGE")
            .arg(format!("__redlock:{{{key}}}:queue:{key}"))
            .arg(0)
            .arg(-1)
            .query(connection)
            .expect("ZRANGE");
        !queued.is_empty()
    });
    let [token] = &queued[..] else {
        panic!("expected one waiter in the queue (placed: {placed}), found {queued:?}");
    };
    redis::cmd("PUBLISH")
        .arg(wake_channel(key, token))
        .arg(payload)
        .query(connection)
        .expect("PUBLISH")
}

/// The subscribed (pub/sub) connections a master has.
fn pubsub_clients(connection: &mut impl redis::ConnectionLike) -> usize {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .arg("TYPE")
        .arg("pubsub")
        .query(connection)
        .expect("CLIENT LIST");
    list.lines().filter(|line| !line.trim().is_empty()).count()
}

/// `redlock` with `servers` (and `extra` global options) for `run --key KEY` plus `args`.
fn redlock_run(servers: &[String], extra: &[&str], key: &str, args: &[&str]) -> Command {
    let mut cmd = redlock();
    for server in servers {
        cmd.args(["-s", server]);
    }
    cmd.args(extra).args(["run", "--key", key]).args(args);
    cmd
}

/// A holder on `servers`, running until its gate opens; and a waiter (`-vv`, `--wait 60s`)
/// that has subscribed, on `subscribed` (`2 of 3 masters`), by the time this returns.
fn holder_and_waiter(
    servers: &[String],
    extra: &[&str],
    key: &str,
    subscribed: &str,
) -> (Running, Running) {
    let mut holder = Running::start(&mut redlock_run(servers, extra, key, &["--ttl", "30s"]));
    holder.wait_ready();
    let mut waiter_cmd = redlock_run(servers, extra, key, &["--wait", "60s"]);
    waiter_cmd.arg("-vv");
    let waiter = Running::start(&mut waiter_cmd);
    let listening = format!("{LISTENING} {key:?} on {subscribed}");
    assert!(
        waiter.wait_for_stderr(&listening, Duration::from_secs(30)),
        "{listening:?} never came: {}",
        waiter.stderr_so_far()
    );
    (holder, waiter)
}

/// The notice published by the test wakes the waiter (whose attempt fails: the lock is still
/// held); then the holder releases, and the waiter takes the lock and runs.
fn woken_then_runs(
    holder: &mut Running,
    waiter: &mut Running,
    publisher: &mut impl redis::ConnectionLike,
    key: &str,
) {
    assert!(!waiter.stderr_so_far().contains(WOKEN));
    assert_eq!(publish(publisher, key, b""), 1, "the waiter is subscribed");
    assert!(
        waiter.wait_for_stderr(WOKEN, Duration::from_secs(30)),
        "the notice did not wake the waiter: {}",
        waiter.stderr_so_far()
    );
    assert!(waiter.is_running(), "{}", waiter.stderr_so_far());
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.wait_ready();
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}

#[test]
fn a_notice_wakes_the_waiter_and_its_subscriptions_end_with_the_wait() {
    let cluster = Cluster::start(3);
    let urls = cluster.urls();
    // A waiter listens on a majority (2 of 3): with the one master the quorum may lose
    // down, one of them still announces the release.
    let (mut holder, mut waiter) = holder_and_waiter(&urls, &[], "handoff", "2 of 3 masters");
    let mut connections: Vec<Inspector> = cluster.servers.iter().map(|s| s.connection()).collect();
    // One subscribed connection on each of two masters, the waiter's.
    let subscribed: Vec<usize> = connections.iter_mut().map(pubsub_clients).collect();
    assert_eq!(subscribed.iter().sum::<usize>(), 2, "{subscribed:?}");
    assert!(subscribed.iter().all(|n| *n <= 1), "{subscribed:?}");
    let listened = subscribed.iter().position(|n| *n == 1).unwrap();
    assert!(!waiter.stderr_so_far().contains(WOKEN));
    assert_eq!(publish(&mut connections[listened], "handoff", b""), 1);
    assert!(
        waiter.wait_for_stderr(WOKEN, Duration::from_secs(30)),
        "the notice did not wake the waiter: {}",
        waiter.stderr_so_far()
    );
    assert!(waiter.is_running(), "{}", waiter.stderr_so_far());

    released_to_the_waiter(&mut holder, &mut waiter, &mut connections);
    assert!(cluster.key_gone_everywhere("handoff"));
}

/// The real release: the waiter gets the lock; its command runs, and by then (give the
/// masters a moment to see the subscriptions end) no master has a subscribed connection;
/// then it exits 0.
fn released_to_the_waiter(
    holder: &mut Running,
    waiter: &mut Running,
    connections: &mut [Inspector],
) {
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.wait_ready();
    for (i, connection) in connections.iter_mut().enumerate() {
        assert!(
            eventually(Duration::from_secs(5), || pubsub_clients(connection) == 0),
            "master {i} still has the waiter's subscription while its command runs"
        );
    }
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}

/// A server whose default user is off, with `locker` (may use every channel) and `muted`
/// (may use no channel at all, as new users are by default since Redis 7).
fn acl_server() -> Server {
    Cluster::start_with(
        1,
        &[
            "--user",
            "locker",
            "on",
            ">s3cret",
            "~*",
            "&*",
            "+@all",
            "--user",
            "muted",
            "on",
            ">s3cret",
            "~*",
            "resetchannels",
            "+@all",
            "--user",
            "default",
            "off",
        ],
    )
    .servers
    .pop()
    .unwrap()
}

#[test]
fn notices_log_in_as_the_acl_user_and_select_the_database() {
    let server = acl_server();
    let url = format!("redis://locker:s3cret@127.0.0.1:{}/3", server.port);
    let mut publisher = connect(&url);
    let (mut holder, mut waiter) = holder_and_waiter(
        std::slice::from_ref(&url),
        &[],
        "acl-notice",
        "1 of 1 master",
    );
    woken_then_runs(&mut holder, &mut waiter, &mut publisher, "acl-notice");
}

#[test]
fn a_user_who_may_not_subscribe_still_waits_by_polling() {
    let server = acl_server();
    let url = format!("redis://muted:s3cret@127.0.0.1:{}", server.port);
    let (mut holder, mut waiter) =
        holder_and_waiter(std::slice::from_ref(&url), &[], "muted", "0 of 1 master");
    let said = waiter.stderr_so_far();
    assert!(
        said.contains("no release notices from redis://muted:***@127.0.0.1")
            && said.contains("NOPERM"),
        "{said}"
    );
    assert!(!said.contains("s3cret"), "{said}");
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.wait_ready();
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}

#[test]
fn notices_travel_over_tls() {
    let pki = Pki::generate();
    let server = Server::start_tls(&pki, true);
    let tls = [
        "--tls-ca-cert",
        pki.ca.to_str().unwrap(),
        "--tls-cert",
        pki.client_cert.to_str().unwrap(),
        "--tls-key",
        pki.client_key.to_str().unwrap(),
    ];
    // The test publishes on the plain port the harness keeps open.
    let mut publisher = server.connection();
    let (mut holder, mut waiter) =
        holder_and_waiter(&[server.tls_url()], &tls, "tls-notice", "1 of 1 master");
    woken_then_runs(&mut holder, &mut waiter, &mut publisher, "tls-notice");
}

/// The bound on a waiter's peak resident memory while messages flood its channel: a debug
/// build of `run` peaks near 11 MiB against healthy masters (see tests/bad_replies.rs).
const PEAK_RSS_KIB: u64 = 20 * 1024;

#[test]
fn a_flood_of_messages_on_the_channel_costs_the_waiter_no_memory() {
    let cluster = Cluster::start(3);
    // Someone else's lock, on every master, for as long as the flood lasts.
    for server in &cluster.servers {
        server.set("flooded", "someone-else");
    }
    let flooding = Arc::new(AtomicBool::new(true));
    let published = Arc::new(AtomicU64::new(0));
    let mut connections: Vec<Inspector> = cluster.servers.iter().map(|s| s.connection()).collect();
    let flooder = {
        let flooding = Arc::clone(&flooding);
        let published = Arc::clone(&published);
        std::thread::spawn(move || {
            // Once the waiter listens on every master: two seconds of 4 KiB messages, in
            // pipelines of 64, to all three masters in turn.
            let subscribed = eventually(Duration::from_secs(30), || {
                connections.iter_mut().map(pubsub_clients).sum::<usize>() == 2
            });
            let payload = vec![b'x'; 4096];
            // The waiter listens on its own wake channel, named by its token in the queue.
            let queued: Vec<String> = redis::cmd("ZRANGE")
                .arg("__redlock:{flooded}:queue:flooded")
                .arg(0)
                .arg(-1)
                .query(&mut connections[0])
                .expect("ZRANGE");
            let channel = wake_channel("flooded", queued.first().map_or("", String::as_str));
            let start = std::time::Instant::now();
            while subscribed && start.elapsed() < Duration::from_secs(2) {
                for connection in &mut connections {
                    let mut pipe = redis::pipe();
                    for _ in 0..64 {
                        pipe.cmd("PUBLISH").arg(&channel).arg(&payload).ignore();
                    }
                    let () = pipe.query(connection).expect("PUBLISH");
                    published.fetch_add(64, Ordering::Relaxed);
                }
            }
            // Then the lock goes, and one real notice says so.
            for connection in &mut connections {
                let _: i64 = redis::cmd("DEL").arg("flooded").query(connection).unwrap();
                let _: i64 = redis::cmd("PUBLISH")
                    .arg(&channel)
                    .arg("")
                    .query(connection)
                    .unwrap();
            }
            flooding.store(false, Ordering::Relaxed);
            subscribed
        })
    };
    let mut waiter = redlock();
    waiter
        .args([
            "-s",
            &cluster.urls()[0],
            "-s",
            &cluster.urls()[1],
            "-s",
            &cluster.urls()[2],
        ])
        .args(["run", "--key", "flooded", "--wait", "60s", "--", "true"]);
    let measured = run_measured(&mut waiter, 512 * 1024, Duration::from_secs(60));
    let subscribed = flooder.join().expect("flooder");
    eprintln!(
        "waiter: peak RSS {} KiB in {:?} while {} messages were published",
        measured.peak_rss_kib,
        measured.elapsed,
        published.load(Ordering::Relaxed)
    );
    assert!(subscribed, "the waiter never subscribed on every master");
    assert!(!flooding.load(Ordering::Relaxed));
    assert!(measured.output.status.success(), "{}", measured.describe());
    assert!(
        measured.killed.is_none() && measured.peak_rss_kib < PEAK_RSS_KIB,
        "the waiter must stay under {PEAK_RSS_KIB} KiB: {}",
        measured.describe()
    );
}

#[test]
fn redis_url_to_a_tls_port_says_to_use_rediss() {
    let pki = Pki::generate();
    let server = Server::start_tls(&pki, false);
    let port = server.tls_port.unwrap();
    // Without a login (the first request meets the TLS port), and with one (AUTH does).
    for url in [
        format!("redis://127.0.0.1:{port}"),
        format!("redis://user:pw@127.0.0.1:{port}"),
    ] {
        let output = redlock()
            .env("REDLOCK_SERVERS", &url)
            .args(["run", "--key", "scheme", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(78),
            "{url}: {}",
            describe(&output)
        );
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains("this port speaks TLS: use rediss:// (and --tls-ca-cert)"),
            "{url}: {message}"
        );
        assert!(!message.contains(":pw@"), "{message}");
    }
    // Nothing was locked through the plain port either.
    assert!(server.lock_keys().is_empty());
}

/// The clients of a master that are subscribed and speak `resp` (2 or 3), from CLIENT LIST.
fn subscribed_clients_speaking(connection: &mut impl redis::ConnectionLike, resp: u8) -> usize {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(connection)
        .expect("CLIENT LIST");
    let field = |line: &str, name: &str| {
        line.split_whitespace()
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or("0")
            .to_string()
    };
    list.lines()
        .filter(|line| field(line, "resp") == resp.to_string())
        .filter(|line| field(line, "sub") != "0" || field(line, "ssub") != "0")
        .count()
}

/// Where the server speaks RESP3, the waiter's notices come on the connection it keeps for its
/// turns: no master has a connection of the waiter's that only listens, the listened ones
/// have its kept connection subscribed (`resp=3`), a notice there wakes it, and the
/// subscription ends when it takes the lock.
#[test]
fn notices_ride_on_the_connection_the_waiter_keeps() {
    let cluster = Cluster::start(3);
    let urls = cluster.urls();
    let (mut holder, mut waiter) = holder_and_waiter(
        &urls,
        &[],
        "kept",
        "2 of 3 masters (2 on the kept connection",
    );
    let mut connections: Vec<Inspector> = cluster.servers.iter().map(|s| s.connection()).collect();
    let on_kept: Vec<usize> = connections
        .iter_mut()
        .map(|c| subscribed_clients_speaking(c, 3))
        .collect();
    let on_own: Vec<usize> = connections
        .iter_mut()
        .map(|c| subscribed_clients_speaking(c, 2))
        .collect();
    assert_eq!(on_kept.iter().sum::<usize>(), 2, "{on_kept:?}");
    assert_eq!(on_own.iter().sum::<usize>(), 0, "{on_own:?}");
    let listened = on_kept.iter().position(|n| *n == 1).unwrap();
    assert_eq!(publish(&mut connections[listened], "kept", b""), 1);
    assert!(
        waiter.wait_for_stderr(WOKEN, Duration::from_secs(30)),
        "the notice did not wake the waiter: {}",
        waiter.stderr_so_far()
    );
    released_to_the_waiter(&mut holder, &mut waiter, &mut connections);
    assert!(cluster.key_gone_everywhere("kept"));
}

/// On `cluster`'s one master: its URL, a connection of the test's, and a holder and a waiter
/// (see [`holder_and_waiter`]) whose notices ride on the kept connection `kept` (0 or 1) times.
fn one_master_waiter(
    cluster: &Cluster,
    key: &str,
    kept: usize,
) -> (String, Inspector, Running, Running) {
    let url = cluster.urls().pop().unwrap();
    let connection = connect(&url);
    let subscribed = format!("1 of 1 master ({kept} on the kept connection");
    let (holder, waiter) = holder_and_waiter(std::slice::from_ref(&url), &[], key, &subscribed);
    (url, connection, holder, waiter)
}

/// A server that refuses HELLO (as Redis 5 does, having no RESP3; here renamed away): the
/// waiter's notices come on a connection of their own, as before, and still wake it; doctor
/// says which a master gets.
#[test]
fn a_server_without_resp3_sends_notices_on_a_connection_of_their_own() {
    let cluster = Cluster::start_with(1, &["--rename-command", "HELLO", "HELLO-RENAMED-AWAY"]);
    let (url, mut publisher, mut holder, mut waiter) = one_master_waiter(&cluster, "resp2", 0);
    let said = waiter.stderr_so_far();
    assert!(said.contains("refused HELLO 3"), "{said}");
    assert_eq!(subscribed_clients_speaking(&mut publisher, 2), 1);
    woken_then_runs(&mut holder, &mut waiter, &mut publisher, "resp2");

    let doctor = redlock().args(["-s", &url, "doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains(
            "SUBSCRIBE allowed (waiting for release notices, on a connection of their own"
        ),
        "{text}"
    );
    let kept = Cluster::start(1);
    let doctor = redlock()
        .args(["-s", &kept.urls()[0], "doctor"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("SUBSCRIBE allowed (waiting for release notices, on the connection a waiter keeps: RESP3)"),
        "{text}"
    );
}

/// The master drops the kept connection, subscription and all, while the waiter waits: its
/// next turn reconnects, the release still gives it the lock (by its heartbeat, the notice
/// having gone with the connection), and it runs once.
#[test]
fn a_kept_connection_dropped_while_waiting_costs_the_waiter_no_turn() {
    let cluster = Cluster::start(1);
    let (_, mut admin, mut holder, mut waiter) = one_master_waiter(&cluster, "dropped", 1);
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut admin)
        .expect("CLIENT LIST");
    let id = list
        .lines()
        .find(|line| line.contains(" resp=3") && line.contains(" sub=1"))
        .and_then(|line| line.split_whitespace().find_map(|f| f.strip_prefix("id=")))
        .unwrap_or_else(|| panic!("no subscribed RESP3 client: {list}"))
        .to_string();
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&id)
        .query(&mut admin)
        .expect("CLIENT KILL");
    assert_eq!(killed, 1);
    assert_eq!(pubsub_clients(&mut admin), 0);
    // A heartbeat turn after the drop: the waiter is still in line, on a new connection.
    let turns = waiter.stderr_so_far().matches("turn in line for").count();
    assert!(
        eventually(Duration::from_secs(10), || {
            waiter.stderr_so_far().matches("turn in line for").count() > turns
        }),
        "{}",
        waiter.stderr_so_far()
    );
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.wait_ready();
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.matches("redlock: started pid").count(), 1, "{said}");
    assert!(cluster.key_gone_everywhere("dropped"));
}
