//! `redlock list` and `list --problems` against real masters: locks found through their holder
//! records, the quorum verdict, queued waiters (the fair queue's keys written here as a waiter
//! would, per the documented layout), the leak scan with each kind of finding, and masters that
//! cannot be scanned.

use crate::common;

use std::process::Output;
use std::time::Duration;

use crate::common::{Cluster, Running, Server, describe, eventually};
use serde_json::Value;

pub(crate) fn list(cluster: &Cluster, args: &[&str]) -> Output {
    cluster
        .redlock()
        .arg("list")
        .args(args)
        .output()
        .expect("run redlock")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn list_json(cluster: &Cluster, args: &[&str]) -> (Option<i32>, Value) {
    let output = list(cluster, &[&["--json"], args].concat());
    let json = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("list --json is not JSON ({e}): {}", describe(&output)));
    (output.status.code(), json)
}

fn acquire(cluster: &Cluster, key: &str, extra: &[&str]) -> String {
    let output = cluster
        .redlock()
        .args(["acquire", "--key", key, "--ttl", "60s"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    stdout(&output).trim().to_string()
}

fn cmd(server: &Server, args: &[&str]) -> redis::Value {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The master's clock, in ms.
fn master_ms(server: &Server) -> u64 {
    let (seconds, micros): (u64, u64) = redis::cmd("TIME").query(&mut server.connection()).unwrap();
    seconds * 1000 + micros / 1000
}

fn name(kind: &str, key: &str) -> String {
    format!("__redlock:{{{key}}}:{kind}:{key}")
}

fn locks(json: &Value) -> Vec<&Value> {
    json["locks"].as_array().expect("locks").iter().collect()
}

pub(crate) fn lock<'a>(json: &'a Value, key: &str) -> &'a Value {
    locks(json)
        .into_iter()
        .find(|l| l["key"] == key)
        .unwrap_or_else(|| panic!("no lock {key:?} in {json:#}"))
}

pub(crate) fn problems(json: &Value) -> Vec<(String, String)> {
    json["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                p["redis_key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_lock_with_its_verdict_holder_ttl_and_masters_and_never_keys() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "deploy-prod", &[]);
    let mut running = Running::start(cluster.redlock().args(["run", "--key", "nightly"]));
    let pid = running.wait_ready();
    // Held by another Redlock client: no holder record, so not seen.
    for server in &cluster.servers {
        server.set("other-client", "their-token");
    }

    let (code, json) = list_json(&cluster, &[]);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(json["complete"], true);
    assert_eq!(json["problems"], Value::Null);
    let servers: Vec<Value> = cluster.urls().into_iter().map(Value::from).collect();
    let masters = json["masters"].as_array().unwrap();
    assert_eq!(masters.len(), 3);
    for (master, url) in masters.iter().zip(&servers) {
        assert_eq!(&master["server"], url);
        assert_eq!(master["scanned"], "complete");
        assert_eq!(master["error"], Value::Null);
    }
    let keys: Vec<&str> = locks(&json)
        .iter()
        .map(|l| l["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["deploy-prod", "nightly"]);

    let deploy = lock(&json, "deploy-prod");
    assert_eq!(deploy["verdict"], "held");
    assert_eq!(deploy["token"], token.as_str());
    assert_eq!(deploy["held_on"], Value::Array(servers.clone()));
    let expires = deploy["expires_in_ms"].as_u64().unwrap();
    assert!(expires > 30_000 && expires <= 60_000, "{expires}");
    assert_eq!(deploy["since_ms"], deploy["holder"]["since_ms"]);
    assert_eq!(deploy["waiting"], 0);
    assert_eq!(deploy["queue"], Value::Array(vec![]));
    for master in deploy["masters"].as_array().unwrap() {
        assert_eq!(master["held"], true);
        assert_eq!(master["token"], token.as_str());
    }
    let nightly = lock(&json, "nightly");
    assert_eq!(nightly["verdict"], "held");
    assert_eq!(nightly["token"], running.token().as_str());
    // The holder is redlock itself, the command's parent.
    let holder_pid = nightly["holder"]["pid"].as_u64().unwrap();
    assert_eq!(
        holder_pid,
        u64::from(running.child.id()),
        "command pid {pid}"
    );

    let output = list(&cluster, &[]);
    let text = stdout(&output);
    assert!(
        text.contains("lock \"deploy-prod\" is held by ") && text.contains("on 3 of 3 masters"),
        "{text}"
    );
    assert!(!text.contains("other-client"), "{text}");
    for server in &cluster.servers {
        assert_eq!(server.command_calls("keys"), 0);
        assert!(server.command_calls("scan") >= 1);
    }
    running.open_gate();
    running.wait_output();
}

#[test]
fn split_locks_and_patterns_with_every_kind_of_key() {
    let cluster = Cluster::start(3);
    // Two contenders each on one master, the third free: split.
    for (server, token) in cluster.servers.iter().zip(["t1", "t2"]) {
        cmd(server, &["SET", "race", token, "PX", "60000"]);
        let record = format!(
            r#"{{"host":"h{token}","pid":1,"user":"u","command":"c","since_ms":1,"token":"{token}"}}"#
        );
        cmd(
            server,
            &["SET", &name("holder", "race"), &record, "PX", "60000"],
        );
    }
    for key in ["deploy-a", "deploy-b", "a}b", "{u1}.job", "other"] {
        acquire(&cluster, key, &[]);
    }

    let (_, json) = list_json(&cluster, &[]);
    let race = lock(&json, "race");
    assert_eq!(race["verdict"], "split");
    assert_eq!(race["token"], Value::Null);
    assert_eq!(race["held_on"].as_array().unwrap().len(), 2);
    let text = stdout(&list(&cluster, &[]));
    assert!(text.contains("lock \"race\" is split"), "{text}");
    assert!(text.contains("token t1 by ht1"), "{text}");

    for (pattern, expected) in [
        ("deploy-*", &["deploy-a", "deploy-b"][..]),
        ("a}*", &["a}b"]),
        ("{u1}*", &["{u1}.job"]),
        ("*b", &["a}b", "deploy-b", "{u1}.job"]),
        ("deploy-[^a]", &["deploy-b"]),
        ("nothing*", &[]),
    ] {
        let (code, json) = list_json(&cluster, &["--pattern", pattern]);
        assert_eq!(code, Some(0));
        let keys: Vec<&str> = locks(&json)
            .iter()
            .map(|l| l["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, expected, "{pattern}");
    }
    let text = stdout(&list(&cluster, &["--pattern", "nothing*"]));
    assert!(
        text.contains("no locks held matching \"nothing*\""),
        "{text}"
    );
}

/// Writes a waiter into lock `key`'s queue on `server`, as the fair queue does.
fn enqueue(server: &Server, key: &str, id: &str, ticket: u64, lease_ms: u64, since_ms: u64) {
    let record = format!(
        r#"{{"host":"ci-{ticket}","pid":{ticket},"user":"ci","command":"make deploy","since_ms":{since_ms}}}"#
    );
    cmd(
        server,
        &["ZADD", &name("queue", key), &ticket.to_string(), id],
    );
    cmd(
        server,
        &["ZADD", &name("lease", key), &lease_ms.to_string(), id],
    );
    cmd(server, &["HSET", &name("waiters", key), id, &record]);
    cmd(server, &["INCR", &name("tickets", key)]);
    for kind in ["queue", "lease", "waiters", "tickets"] {
        cmd(server, &["PEXPIRE", &name(kind, key), "60000"]);
    }
}

#[test]
fn queued_waiters_in_ticket_order_and_lapsed_ones_as_problems() {
    let cluster = Cluster::start(3);
    acquire(&cluster, "deploy", &[]);
    let first = "0".repeat(31) + "1";
    let second = "0".repeat(31) + "2";
    let dead = "0".repeat(31) + "3";
    for server in &cluster.servers {
        let now = master_ms(server);
        // Out of order on purpose: the ticket decides.
        enqueue(server, "deploy", &second, 12, now + 30_000, now - 5_000);
        enqueue(server, "deploy", &first, 11, now + 30_000, now - 65_000);
    }
    // A dead waiter, on one master only: its lease lapsed a minute ago.
    let now = master_ms(&cluster.servers[2]);
    enqueue(
        &cluster.servers[2],
        "deploy",
        &dead,
        13,
        now - 60_000,
        now - 120_000,
    );

    let (code, json) = list_json(&cluster, &[]);
    assert_eq!(code, Some(0));
    let deploy = lock(&json, "deploy");
    // Three places on the third master, one of them lapsed: the line shows the live ones.
    assert_eq!(deploy["waiting"], 3);
    let queue = deploy["queue"].as_array().unwrap();
    let order: Vec<(u64, &str, u64)> = queue
        .iter()
        .map(|w| {
            (
                w["position"].as_u64().unwrap(),
                w["token"].as_str().unwrap(),
                w["masters"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, [(1, first.as_str(), 3), (2, second.as_str(), 3)]);
    assert_eq!(queue[0]["ticket"], 11);
    assert_eq!(queue[0]["holder"]["host"], "ci-11");
    assert_eq!(queue[0]["holder"]["command"], "make deploy");
    let waited = queue[0]["waited_ms"].as_u64().unwrap();
    assert!((60_000..600_000).contains(&waited), "{waited}");
    let text = stdout(&list(&cluster, &[]));
    assert!(text.contains("  2 waiting:"), "{text}");
    assert!(
        text.contains("    1. ci-11 (pid 11, user ci, \"make deploy\") waiting for 1m"),
        "{text}"
    );
    assert!(
        text.contains("  … and 1 more place on some master"),
        "{text}"
    );

    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(
        problems(&json),
        [("dead_waiter".to_string(), name("queue", "deploy"))]
    );
    let problem = &json["problems"][0];
    assert_eq!(problem["server"], cluster.urls()[2].as_str());
    assert_eq!(problem["lock"], "deploy");
    assert!(
        problem["action"]
            .as_str()
            .unwrap()
            .contains(&format!("ZREM '{}' {dead}", name("queue", "deploy"))),
        "{problem:#}"
    );
}

#[test]
fn real_waiters_are_listed_in_the_order_they_came() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "line"]));
    holder.wait_ready();
    let waiter = || {
        cluster
            .redlock()
            .args(["run", "--key", "line", "--wait", "60s", "--", "true"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let in_line = |n: usize| {
        eventually(Duration::from_secs(20), || {
            let (_, json) = list_json(&cluster, &[]);
            locks(&json)
                .first()
                .is_some_and(|l| l["queue"].as_array().unwrap().len() == n)
        })
    };
    let mut first = waiter();
    assert!(in_line(1), "the first waiter never showed in line");
    let mut second = waiter();
    assert!(in_line(2), "the second waiter never showed in line");
    let (_, json) = list_json(&cluster, &[]);
    let queue = lock(&json, "line")["queue"].as_array().unwrap().clone();
    let pids: Vec<u64> = queue
        .iter()
        .map(|w| w["holder"]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids, [u64::from(first.id()), u64::from(second.id())]);
    assert!(queue.iter().all(|w| w["masters"] == 3), "{queue:#?}");
    holder.open_gate();
    holder.wait_output();
    assert!(first.wait().unwrap().success());
    assert!(second.wait().unwrap().success());
}

/// `list --problems` finds nothing: exit 0, "no problems found".
fn assert_no_problems(cluster: &Cluster) {
    let output = list(cluster, &["--problems"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).contains("no problems found"),
        "{}",
        describe(&output)
    );
}

#[test]
fn a_clean_keyspace_has_no_problems() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "fenced", &["--fence"]);
    let output = cluster
        .redlock()
        .args(["release", "--key", "fenced", "--token", &token])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    acquire(&cluster, "held", &["--fence"]);
    assert_no_problems(&cluster);
}

#[test]
fn keys_without_ttl_and_stale_holder_records_are_found_with_what_to_do() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "job", &[]);
    // Something else deleted the lock key on one master, and replaced it on another.
    cluster.servers[0].del("job");
    cmd(
        &cluster.servers[1],
        &["SET", "job", "not-ours", "PX", "60000"],
    );
    // Keys that never expire: a lock key with its holder record (the record names the token
    // in the key: not stale), a key of no known kind.
    let leaked = name("holder", "leaked");
    cmd(&cluster.servers[2], &["SET", &leaked, r#"{"token":"x"}"#]);
    cmd(&cluster.servers[2], &["SET", "leaked", "x"]);
    cmd(&cluster.servers[0], &["SET", "__redlock:junk", "1"]);
    // Fine: a stray with a TTL.
    cmd(
        &cluster.servers[0],
        &["SET", "__redlock:tmp", "1", "EX", "60"],
    );

    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(code, Some(1), "{json:#}");
    let mut found = problems(&json);
    found.sort();
    let holder = name("holder", "job");
    let expected = [
        ("no_ttl", "__redlock:junk"),
        ("no_ttl", leaked.as_str()),
        ("no_ttl", "leaked"),
        ("stale_holder", holder.as_str()),
        ("stale_holder", holder.as_str()),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .collect();
    assert_eq!(found, expected, "{json:#}");
    for problem in json["problems"].as_array().unwrap() {
        let action = problem["action"].as_str().unwrap();
        assert!(action.contains("DEL '"), "{problem:#}");
        assert!(!problem["detail"].as_str().unwrap().is_empty());
    }
    // Our token on one master, another on the second, none on the first: split.
    let job = lock(&json, "job");
    assert_eq!(job["verdict"], "split");
    assert_eq!(job["masters"][2]["token"], token.as_str());

    let text = stdout(&list(&cluster, &["--problems"]));
    assert!(text.contains("5 problems:"), "{text}");
    assert!(
        text.contains(&format!(
            "  no_ttl on [1] {}: '__redlock:junk'",
            cluster.urls()[0]
        )),
        "{text}"
    );
    assert!(text.contains("    what to do: "), "{text}");
}

/// Issue 48: a fencing counter is judged by its value, not by how the server stores it.
/// Valkey 9 kept the number a script SETs as text (`OBJECT ENCODING` `embstr`), and
/// `list --problems` called redlock's own counter malformed on every master.
#[test]
fn a_fencing_counter_is_judged_by_its_value_not_its_encoding() {
    let cluster = Cluster::start(3);
    acquire(&cluster, "f", &["--fence"]);
    let counter = name("fence", "f");
    let encoding = |server: &Server| match cmd(server, &["OBJECT", "ENCODING", &counter]) {
        redis::Value::BulkString(bytes) => String::from_utf8(bytes).unwrap(),
        other => panic!("OBJECT ENCODING: {other:?}"),
    };
    for server in &cluster.servers {
        // What redlock writes is stored as a number on every server, so that `list` reads it
        // without a GET, which would reset the idle time it reports.
        assert_eq!(encoding(server), "int");
        // The same number stored as text (APPEND makes a string `raw`): still a counter.
        cmd(server, &["APPEND", &counter, ""]);
        assert_eq!(encoding(server), "raw");
    }
    assert_no_problems(&cluster);
}

/// Makes the fencing counter of `key` look unused for `days` on `server` (RESTORE ... IDLETIME
/// sets what OBJECT IDLETIME reports).
fn age_counter(server: &Server, key: &str, days: u64) {
    let counter = name("fence", key);
    let dump: Vec<u8> = redis::cmd("DUMP")
        .arg(&counter)
        .query(&mut server.connection())
        .unwrap();
    let _: () = redis::cmd("RESTORE")
        .arg(&counter)
        .arg(0)
        .arg(dump)
        .arg("REPLACE")
        .arg("IDLETIME")
        .arg(days * 86_400)
        .query(&mut server.connection())
        .unwrap();
}

fn idle_seconds(server: &Server, key: &str) -> u64 {
    redis::cmd("OBJECT")
        .arg("IDLETIME")
        .arg(name("fence", key))
        .query(&mut server.connection())
        .unwrap()
}

#[test]
fn idle_fencing_counters_only_past_the_threshold_and_never_touched_by_the_scan() {
    let cluster = Cluster::start(3);
    for key in ["retired", "active"] {
        let token = acquire(&cluster, key, &["--fence"]);
        if key == "retired" {
            let output = cluster
                .redlock()
                .args(["release", "--key", key, "--token", &token])
                .output()
                .unwrap();
            assert!(output.status.success(), "{}", describe(&output));
        }
    }
    for server in &cluster.servers {
        age_counter(server, "retired", 40);
        // Held: its counter is in use whatever its idle time says.
        age_counter(server, "active", 40);
    }

    // 40 days is under the default (90d). What the masters report is what counts: Redis 6.2
    // restores a longer idle time than asked while its LRU clock (seconds since the epoch,
    // modulo 2^24) is below the one asked for.
    let aged = (cluster.servers.iter())
        .map(|server| idle_seconds(server, "retired"))
        .max()
        .unwrap();
    let (code, json) = list_json(&cluster, &["--problems"]);
    let past_default = aged >= 90 * 86_400;
    assert_eq!(code, Some(past_default as i32), "idle {aged}s: {json:#}");
    for _ in 0..2 {
        let (code, json) = list_json(&cluster, &["--problems", "--idle", "30d"]);
        assert_eq!(code, Some(1), "{json:#}");
        let counter = name("fence", "retired");
        assert_eq!(
            problems(&json),
            vec![("idle_fence".to_string(), counter); 3],
            "{json:#}"
        );
        let action = json["problems"][0]["action"].as_str().unwrap();
        assert!(action.contains("restarts the numbers"), "{action}");
    }
    // Listing left the counters' idle time alone.
    for server in &cluster.servers {
        assert!(idle_seconds(server, "retired") >= 40 * 86_400);
    }
    // --idle means nothing without --problems.
    let output = list(&cluster, &["--idle", "30d"]);
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
}

#[test]
fn masters_that_cannot_be_scanned_are_named() {
    let mut cluster = Cluster::start(3);
    acquire(&cluster, "deploy", &[]);
    cluster.server(0).pause();
    let output = list(&cluster, &["--timeout", "500ms", "--node-timeout", "200ms"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let paused = &cluster.urls()[0];
    assert!(
        stderr.contains(&format!("warning: master {paused} was not scanned fully")),
        "{stderr}"
    );
    assert!(
        stdout(&output).contains("lock \"deploy\" is held"),
        "{}",
        describe(&output)
    );
    // Nothing found is no proof when a master was not looked at.
    let output = list(
        &cluster,
        &[
            "--problems",
            "--timeout",
            "500ms",
            "--node-timeout",
            "200ms",
        ],
    );
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot tell that nothing leaks"),
        "{}",
        describe(&output)
    );
    cluster.server(0).resume();

    cluster.server(1).kill();
    cluster.server(2).kill();
    let (code, json) = list_json(&cluster, &[]);
    assert_eq!(code, Some(69), "{json:#}");
    assert_eq!(json["complete"], false);
    assert_eq!(json["masters"][1]["scanned"], "failed");
    assert!(
        json["masters"][1]["error"]
            .as_str()
            .unwrap()
            .contains("connect")
    );
}

#[test]
fn long_key_names_are_scanned_in_smaller_pages() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    // 700 holder records of 2 KiB names: one SCAN page of 1000 would be over the 1 MiB reply
    // cap.
    let mut pipe = redis::pipe();
    for i in 0..700 {
        let key = format!("{i:04}-{}", "x".repeat(2000));
        pipe.cmd("SET")
            .arg(name("holder", &key))
            .arg(r#"{"token":"t"}"#)
            .arg("EX")
            .arg(600)
            .ignore();
    }
    let _: () = pipe.query(&mut server.connection()).unwrap();
    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(json["complete"], true, "{json:#}");
    assert_eq!(json["masters"][0]["keys"], 700);
    // Each record is stale (no lock key): all were read.
    assert_eq!(problems(&json).len(), 700);
    assert_eq!(code, Some(1));
}

#[test]
fn bad_input_is_one_line_and_64() {
    let cluster = Cluster::start(1);
    for args in [
        &["--pattern", ""][..],
        &["--timeout", "0s"],
        &["--node-timeout", "0s"],
        &["--timeout", "soon"],
    ] {
        let output = list(&cluster, args);
        assert_eq!(
            output.status.code(),
            Some(64),
            "{args:?}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// Writes lock `key` held with `token` and its holder record on `server`, in `pipe`.
fn held_with_record(pipe: &mut redis::Pipeline, key: &str, token: &str) {
    let record = format!(
        r#"{{"host":"h","pid":1,"user":"u","command":"job {key}","since_ms":1,"token":"{token}"}}"#
    );
    pipe.cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(600_000)
        .ignore();
    pipe.cmd("SET")
        .arg(name("holder", key))
        .arg(record)
        .arg("PX")
        .arg(600_000)
        .ignore();
}

/// Thousands of locks, some held on every master and some split, read in many batches: every
/// lock is listed once, in key order, and the streamed JSON is one compact document, exactly
/// what serializing it whole gives; and memory stays small (a report built whole held some
/// 13 KB per lock on three masters: 90 MB here).
#[test]
fn thousands_of_locks_are_listed_whole_in_key_order_in_little_memory() {
    let cluster = Cluster::start(3);
    let everywhere: Vec<String> = (0..6000).map(|i| format!("lock-{:05}", i * 2)).collect();
    let on_two: Vec<String> = (0..600).map(|i| format!("lock-{:05}", i * 2 + 1)).collect();
    for (i, server) in cluster.servers.iter().enumerate() {
        let mut pipe = redis::pipe();
        // Written in reverse: the order of the report is not the order of the keyspace.
        for key in everywhere.iter().rev() {
            held_with_record(&mut pipe, key, &format!("t-{key}"));
        }
        // Held with another token on each of two masters: split.
        if i < 2 {
            for key in &on_two {
                held_with_record(&mut pipe, key, &format!("t{i}-{key}"));
            }
        }
        let () = pipe.query(&mut server.connection()).unwrap();
    }
    let mut expected: Vec<&str> = everywhere
        .iter()
        .chain(&on_two)
        .map(String::as_str)
        .collect();
    expected.sort_unstable();

    let measured = common::run_measured(
        cluster
            .redlock()
            .args(["list", "--json", "--timeout", "60s"]),
        48 * 1024,
        Duration::from_secs(120),
    );
    let output = &measured.output;
    assert!(
        measured.killed.is_none() && output.status.code() == Some(0),
        "{:?}, peak RSS {} KiB, killed: {:?}: {}",
        output.status,
        measured.peak_rss_kib,
        measured.killed,
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(output);
    let json: Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(serde_json::to_string(&json).unwrap(), text.trim_end());
    let keys: Vec<&str> = locks(&json)
        .iter()
        .map(|l| l["key"].as_str().unwrap())
        .collect();
    assert_same_keys(&keys, &expected);
    let held = locks(&json)
        .iter()
        .filter(|l| l["verdict"] == "held")
        .count();
    let split = locks(&json)
        .iter()
        .filter(|l| l["verdict"] == "split")
        .count();
    assert_eq!((held, split), (everywhere.len(), on_two.len()));

    let text = stdout(&list(&cluster, &["--timeout", "60s"]));
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("lock \"")?.split('"').next())
        .collect();
    assert_same_keys(&listed, &expected);
}

/// `keys` are `expected`, in order; on failure, says where they part rather than printing
/// thousands of keys.
fn assert_same_keys(keys: &[&str], expected: &[&str]) {
    let first_difference = keys.iter().zip(expected).position(|(a, b)| a != b);
    assert!(
        keys.len() == expected.len() && first_difference.is_none(),
        "{} keys listed, {} expected; first difference at {first_difference:?}",
        keys.len(),
        expected.len()
    );
}

/// Issue 33, item 8: more readers than a master lists (100 for `list`, 1000 for `status`) are
/// counted as the masters count them, "N shown of M", where `list` said 100 readers and
/// `status` 1000. The shares are written here as readers would write them.
#[test]
fn more_readers_than_listed_are_counted_as_the_masters_count_them() {
    let cluster = Cluster::start(3);
    let key = "many-readers";
    for server in &cluster.servers {
        let until = master_ms(server) + 120_000;
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(name("readers", key));
        for i in 0..1500 {
            zadd.arg(until).arg(format!("shr-{i:05}"));
        }
        let _: i64 = zadd.query(&mut server.connection()).unwrap();
        cmd(server, &["PEXPIRE", &name("readers", key), "120000"]);
        cmd(server, &["SET", key, "__redlock:shared", "PX", "120000"]);
    }
    let output = list(&cluster, &[]);
    let text = stdout(&output);
    assert!(
        text.contains("is held by 1500 readers (--shared, 100 shown)"),
        "{}",
        describe(&output)
    );
    assert!(text.contains("readers (100 shown of 1500):"), "{text}");
    let (_, json) = list_json(&cluster, &[]);
    let found = lock(&json, key);
    assert_eq!(found["reader_count"], 1500, "{found:#}");
    assert_eq!(found["readers_shown"], 100, "{found:#}");

    let status = |json: bool| {
        let mut command = cluster.redlock();
        command.args(["status", "--key", key]);
        if json {
            command.arg("--json");
        }
        command.output().unwrap()
    };
    let text = status(false);
    assert_eq!(text.status.code(), Some(0), "{}", describe(&text));
    let text = stdout(&text);
    assert!(
        text.contains("is held by 1500 readers (--shared, 1000 shown)"),
        "{text}"
    );
    assert!(text.contains("readers (1000 shown of 1500):"), "{text}");
    let json: Value = serde_json::from_slice(&status(true).stdout).unwrap();
    assert_eq!(
        (
            json["reader_count"].as_u64(),
            json["readers_shown"].as_u64()
        ),
        (Some(1500), Some(1000))
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Issue 33, item 8: a key name under the prefix too long for one reply (2.2 MB; or 400 KB
/// names, more than one page can hold) is reported by its start and length, and the scan goes
/// on past it: the lock beside it is listed. One such name ended the scan of its master: "no
/// locks held", "no problems found", exit 69.
#[test]
fn key_names_too_long_for_a_reply_are_reported_and_the_scan_goes_on() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    acquire(&cluster, "beside-long-names", &[]);
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(name("holder", &"z".repeat(1_100_000)))
        .arg("x")
        .arg("EX")
        .arg(600)
        .ignore();
    for i in 0..6 {
        let key = format!("{i}{}", "y".repeat(200_000));
        pipe.cmd("SET")
            .arg(name("holder", &key))
            .arg("x")
            .arg("EX")
            .arg(600)
            .ignore();
    }
    let _: () = pipe.query(&mut server.connection()).unwrap();
    let output = list(&cluster, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).contains("lock \"beside-long-names\" is held by"),
        "{}",
        describe(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("too long to read").count(), 7, "{stderr}");
    assert!(stderr.contains("name is 2200020 bytes"), "{stderr}");
    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(json["complete"], true, "{json:#}");
    let found = problems(&json);
    assert_eq!(found.len(), 7, "{found:?}");
    assert!(
        found.iter().all(|(kind, _)| kind == "oversized_key"),
        "{found:?}"
    );
    lock(&json, "beside-long-names");
}

/// Issue 33, items 8 and 9: `--problems` reports data under the prefix that redlock never
/// writes (a fencing counter that is not a number, a readers key of another type, shares
/// scored past any TTL), and says what stale readers still do: redlock's writers are refused
/// there, another client's `SET NX` is not.
#[test]
fn malformed_counters_and_readers_keys_are_problems() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    acquire(&cluster, "bad-fence", &[]);
    cmd(server, &["HSET", &name("fence", "bad-fence"), "f", "v"]);
    acquire(&cluster, "text-fence", &[]);
    cmd(server, &["SET", &name("fence", "text-fence"), "seventeen"]);
    cmd(
        server,
        &["SET", &name("readers", "bad-readers"), "x", "EX", "600"],
    );
    let far = name("readers", "far-readers");
    cmd(server, &["ZADD", &far, "1e20", "shr-foreign"]);
    cmd(server, &["PEXPIRE", &far, "600000"]);
    let stale = name("readers", "stale-readers");
    let until = (master_ms(server) + 600_000).to_string();
    cmd(server, &["ZADD", &stale, &until, "shr-a"]);
    cmd(server, &["PEXPIRE", &stale, "600000"]);
    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(code, Some(1), "{json:#}");
    let found = problems(&json);
    for key in [
        name("fence", "bad-fence"),
        name("fence", "text-fence"),
        name("readers", "bad-readers"),
        far,
    ] {
        assert!(
            found.contains(&("malformed".to_string(), key.clone())),
            "{key} not in {found:?}"
        );
    }
    let details: Vec<&str> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["detail"].as_str())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("is a hash, not a number")),
        "{details:?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("text that is not a whole number")),
        "{details:?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("is a string, not a sorted set")),
        "{details:?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("1 entry in the readers key")),
        "{details:?}"
    );
    let stale_detail = details
        .iter()
        .find(|d| d.contains("does not hold the readers' marker"))
        .expect("stale readers");
    assert!(
        stale_detail.contains("redlock's writers are still refused"),
        "{stale_detail}"
    );
    // A share past any TTL is no share: not a stale reader either.
    assert!(!found.contains(&("stale_readers".to_string(), name("readers", "far-readers"))));
    // The locks themselves are fine.
    assert_eq!(lock(&json, "bad-fence")["verdict"], "held");
}
