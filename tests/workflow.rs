//! The shell workflow against real masters: acquire / extend / release in separate processes,
//! --renew-while, the holder record, status, re-entrance, and who-is-in-the-way messages.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Captured, Cluster, describe, eventually, holder_age, wait_for_file};
use serde_json::Value;

/// Whether a `redlock __renew-while` watching `pid` is running.
fn renewer_running(pid: u32) -> bool {
    let watching = format!("--pid={pid}");
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| {
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.contains(&b"__renew-while".as_slice()) && args.contains(&watching.as_bytes())
        })
    })
}

fn redlock(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().expect("run redlock")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn acquire(cluster: &Cluster, key: &str, ttl: &str) -> String {
    let output = redlock(cluster, &["acquire", "--key", key, "--ttl", ttl]);
    assert!(output.status.success(), "{}", describe(&output));
    let token = stdout(&output);
    assert_eq!(token.len(), 32, "{token}");
    token
}

fn status_json(cluster: &Cluster, key: &str) -> (Option<i32>, Value) {
    let output = redlock(cluster, &["status", "--key", key, "--json"]);
    let json = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("status --json is not JSON ({e}): {}", describe(&output)));
    (output.status.code(), json)
}

#[test]
fn acquire_in_one_process_and_release_in_another() {
    let cluster = Cluster::start(3);
    let token = acquire(&cluster, "deploy", "30s");
    assert!(cluster.holding("deploy", &token) >= 2);
    // The lock outlives the process that took it, with its TTL.
    for server in &cluster.servers {
        let pttl = server.pttl("deploy");
        assert!(
            pttl == -2 || (pttl > 15_000 && pttl <= 30_000),
            "PTTL {pttl}"
        );
    }
    let output = redlock(&cluster, &["release", "--key", "deploy", "--token", &token]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("deploy"));
    assert!(cluster.key_gone_everywhere("__redlock:{deploy}:holder:deploy"));
}

#[test]
fn release_with_a_wrong_or_expired_token_leaves_the_other_holders_lock_intact() {
    let cluster = Cluster::start(3);
    // Wrong token.
    let token = acquire(&cluster, "mine", "30s");
    let output = redlock(
        &cluster,
        &["release", "--key", "mine", "--token", "not-the-token"],
    );
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
    assert!(
        cluster.holding("mine", &token) >= 2,
        "someone else's lock was touched"
    );

    // Expired token: the lock expired and someone else took it since.
    // A node timeout of its own: the default, TTL/20 (15 ms), is less than a master's first
    // answer takes on a slow machine (under qemu-user, every redlock start translates the
    // code it runs first), and the test is about the token, not that budget.
    let output = redlock(
        &cluster,
        &[
            "acquire",
            "--key",
            "short",
            "--ttl",
            "300ms",
            "--node-timeout",
            "100ms",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let stale = stdout(&output);
    std::thread::sleep(Duration::from_millis(500));
    let fresh = acquire(&cluster, "short", "30s");
    let output = redlock(&cluster, &["release", "--key", "short", "--token", &stale]);
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not held by this token"));
    assert!(
        cluster.holding("short", &fresh) >= 2,
        "the new holder's lock was deleted"
    );
    // Extending with the stale token does not touch it either.
    let output = redlock(&cluster, &["extend", "--key", "short", "--token", &stale]);
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert!(cluster.holding("short", &fresh) >= 2);
}

#[test]
fn extend_renews_by_quorum_and_never_recreates_a_lock() {
    let cluster = Cluster::start(3);
    // Taken for 5s (long enough not to expire before the extend, even on a loaded machine),
    // extended to 20s: a PTTL above 10s can only come from the extension.
    let token = acquire(&cluster, "ext", "5s");
    let output = redlock(
        &cluster,
        &["extend", "--key", "ext", "--token", &token, "--ttl", "20s"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // A majority at least (the acquire does not wait for the last master) has it extended,
    // and the holder record lives exactly as long.
    let extended = cluster
        .servers
        .iter()
        .filter(|s| {
            let (lock, record) = (s.pttl("ext"), s.pttl("__redlock:{ext}:holder:ext"));
            lock > 10_000 && lock <= 20_000 && record > 10_000 && record <= 20_000
        })
        .count();
    assert!(extended >= 2, "extended on {extended} masters");
    // Tokens come from the environment as well (after eval of --format env).
    let output = cluster
        .redlock()
        .args(["release"])
        .env("REDLOCK_KEY", "ext")
        .env("REDLOCK_TOKEN", &token)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let output = redlock(&cluster, &["extend", "--key", "ext", "--token", &token]);
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert!(
        cluster.key_gone_everywhere("ext"),
        "extend re-created a released lock"
    );

    // One master down, and the lock gone from the two others: gone (70), not unreachable,
    // however the answers interleave (the dead master's connection error often comes first).
    let mut cluster = cluster;
    cluster.server(2).kill();
    for _ in 0..5 {
        let output = redlock(&cluster, &["extend", "--key", "ext", "--token", &token]);
        assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    }
    cluster.server(2).restart();

    // A majority down: 69, naming the masters.
    let token = acquire(&cluster, "ext2", "30s");
    cluster.server(0).kill();
    cluster.server(1).kill();
    let output = redlock(&cluster, &["extend", "--key", "ext2", "--token", &token]);
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
}

#[test]
fn env_and_json_formats() {
    let cluster = Cluster::start(3);
    let script = format!(
        "eval \"$({} acquire --key fmt --ttl 30s --format env)\" && echo \"$REDLOCK_KEY $REDLOCK_TOKEN $REDLOCK_VALIDITY_MS\" && {} release",
        crate::common::redlock_binary(),
        crate::common::redlock_binary()
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .env_remove("REDLOCK_KEY")
        .env_remove("REDLOCK_TOKEN")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let out = stdout(&output);
    let fields: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(fields[0], "fmt");
    assert_eq!(fields[1].len(), 32);
    // TTL less the acquire's time and the drift allowance (30s x 0.01 + 2 ms).
    let validity = fields[2].parse::<u64>().unwrap();
    assert!(
        validity > 15_000 && validity <= 30_000 - 302,
        "validity {validity}"
    );
    assert!(cluster.key_gone_everywhere("fmt"));

    let output = redlock(
        &cluster,
        &[
            "acquire", "--key", "fmt", "--ttl", "30s", "--format", "json",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["key"], "fmt");
    assert_eq!(json["token"].as_str().unwrap().len(), 32);
    assert_eq!(json["ttl_ms"], 30_000);
    let validity = json["validity_ms"].as_u64().unwrap();
    assert!(
        validity > 15_000 && validity <= 30_000 - 302,
        "validity {validity}"
    );
    assert_eq!(json["nested"], false);
    assert!(json["holder"]["host"].is_string());
    assert!(json["holder"]["pid"].is_u64());
}

#[test]
fn the_holder_record_names_the_script_and_goes_with_the_lock() {
    let cluster = Cluster::start(3);
    let script = format!(
        "{} acquire --key who --ttl 30s; echo $$",
        crate::common::redlock_binary()
    );
    let before = Instant::now();
    let output = Command::new("sh")
        .args(["-c", &script])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let out = stdout(&output);
    let mut lines = out.lines();
    let token = lines.next().unwrap().to_string();
    let shell_pid: u64 = lines.next().unwrap().parse().unwrap();
    let holding: Vec<_> = cluster
        .servers
        .iter()
        .filter(|s| s.get("who").is_some())
        .collect();
    assert!(holding.len() >= 2);
    for server in holding {
        let record: Value = serde_json::from_str(
            &server
                .get("__redlock:{who}:holder:who")
                .expect("no holder record"),
        )
        .unwrap();
        assert_eq!(record["pid"], shell_pid, "the holder is the calling script");
        assert!(
            record["command"].as_str().unwrap().starts_with("sh -c"),
            "{record}"
        );
        assert!(!record["user"].as_str().unwrap().is_empty());
        assert!(!record["host"].as_str().unwrap().is_empty());
        assert!(record["since_ms"].as_u64().unwrap() > 1_700_000_000_000);
        // The lock's value stays the bare token, so other Redlock clients can contend.
        assert_eq!(server.get("who").as_deref(), Some(token.as_str()));
    }
    // A contender is told who is in the way: this host, the script's pid, user and command
    // line, and for how long it has held the lock.
    let output = redlock(&cluster, &["acquire", "--key", "who"]);
    let upper = before.elapsed() + Duration::from_secs(1);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("lock \"who\" is held by "), "{stderr}");
    let age = holder_age(&stderr, shell_pid, &format!("sh -c '{script}'"));
    assert!(
        age <= upper,
        "held for {age:?}, taken less than {upper:?} ago: {stderr}"
    );
}

#[test]
fn renew_while_keeps_the_lock_for_several_ttls_and_releases_it_when_the_process_exits() {
    let cluster = Cluster::start(3);
    // The watched process lives until the test kills it.
    let mut watched = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = watched.id().to_string();
    let output = redlock(
        &cluster,
        &[
            "acquire",
            "--key",
            "rw",
            "--ttl",
            "1s",
            "--renew-while",
            &pid,
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let token = stdout(&output);
    let start = Instant::now();
    // Over three TTLs: without renewal it would be gone after one.
    while start.elapsed() < Duration::from_millis(3500) {
        assert!(
            cluster.holding("rw", &token) >= 2,
            "lost after {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(cluster.holding("rw", &token) >= 2, "lost after three TTLs");
    // Released, not left to expire: the release script's DEL (of the lock and its holder
    // record) runs on a majority. An expiry calls no DEL, and nothing else in redlock does.
    let dels_before: Vec<u64> = cluster
        .servers
        .iter()
        .map(|s| s.command_calls("del"))
        .collect();
    watched.kill().unwrap();
    watched.wait().unwrap();
    let released_on = || {
        cluster
            .servers
            .iter()
            .zip(&dels_before)
            .filter(|(s, before)| s.command_calls("del") >= *before + 2)
            .count()
    };
    assert!(
        eventually(Duration::from_secs(10), || released_on() >= 2),
        "not released after the watched process exited (released on {} masters)",
        released_on()
    );
    assert!(cluster.key_gone_everywhere("rw"));
    assert!(cluster.key_gone_everywhere("__redlock:{rw}:holder:rw"));
    assert!(
        eventually(Duration::from_secs(10), || !renewer_running(watched.id())),
        "the renewer outlived the watched process"
    );
}

#[test]
fn renew_while_stops_when_the_lock_is_released_by_the_script() {
    let cluster = Cluster::start(3);
    let mut watched = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = watched.id();
    let output = redlock(
        &cluster,
        &[
            "acquire",
            "--key",
            "rw2",
            "--ttl",
            "1s",
            "--renew-while",
            &pid.to_string(),
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let token = stdout(&output);
    assert!(
        eventually(Duration::from_secs(10), || renewer_running(pid)),
        "no renewer is running for pid {pid}"
    );
    let output = redlock(&cluster, &["release", "--key", "rw2", "--token", &token]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // The renewer finds the lock gone at its next renewal, ends, and never re-creates it,
    // although the watched process still runs.
    assert!(
        eventually(Duration::from_secs(10), || !renewer_running(pid)),
        "the renewer kept running after the release"
    );
    assert!(cluster.key_gone_everywhere("rw2"));
    assert!(cluster.key_gone_everywhere("__redlock:{rw2}:holder:rw2"));
    watched.kill().unwrap();
    watched.wait().unwrap();
}

#[test]
fn renew_while_rejects_a_missing_process() {
    let cluster = Cluster::start(1);
    let output = redlock(
        &cluster,
        &["acquire", "--key", "k", "--renew-while", "999999999"],
    );
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("k"));
}

#[test]
fn status_reports_held_free_split_and_unknown() {
    let mut cluster = Cluster::start(3);
    let token = acquire(&cluster, "st", "30s");

    let (code, json) = status_json(&cluster, "st");
    assert_eq!(code, Some(0));
    assert_eq!(json["verdict"], "held");
    assert_eq!(json["key"], "st");
    assert_eq!(json["quorum"], 2);
    assert_eq!(json["token"], token.as_str());
    assert!(json["expires_in_ms"].as_u64().unwrap() > 15_000);
    assert!(json["holder"]["pid"].is_u64());
    let masters = json["masters"].as_array().unwrap();
    assert_eq!(masters.len(), 3);
    // A majority at least holds it (the acquire does not wait for the last master).
    let held: Vec<_> = masters.iter().filter(|m| m["held"] == true).collect();
    assert!(held.len() >= 2, "{json}");
    for master in masters {
        assert_eq!(master["reachable"], true);
        assert!(
            master["server"]
                .as_str()
                .unwrap()
                .starts_with("redis://127.0.0.1:")
        );
    }
    for master in held {
        assert_eq!(master["token"], token.as_str());
        assert!(master["ttl_ms"].as_u64().unwrap() > 15_000);
        assert!(
            master["server"]
                .as_str()
                .unwrap()
                .starts_with("redis://127.0.0.1:")
        );
    }
    let text = redlock(&cluster, &["status", "--key", "st"]);
    assert!(
        stdout(&text).starts_with("lock \"st\" is held by"),
        "{}",
        describe(&text)
    );

    let (code, json) = status_json(&cluster, "nothing-here");
    assert_eq!(code, Some(1));
    assert_eq!(json["verdict"], "free");
    assert_eq!(json["token"], Value::Null);

    // Split: two different holders and one free master, no majority either way.
    cluster.servers[0].set("split", "token-a");
    cluster.servers[1].set("split", "token-b");
    let (code, json) = status_json(&cluster, "split");
    assert_eq!(code, Some(2));
    assert_eq!(json["verdict"], "split");
    // A key without TTL (set by something else) is shown as such.
    assert_eq!(json["masters"][0]["ttl_ms"], Value::Null);

    cluster.server(1).kill();
    cluster.server(2).kill();
    let (code, json) = status_json(&cluster, "st");
    assert_eq!(code, Some(69));
    assert_eq!(json["verdict"], "unknown");
    assert_eq!(json["masters"][1]["reachable"], false);
    assert!(
        json["masters"][1]["error"]
            .as_str()
            .unwrap()
            .contains("connect")
    );
}

#[test]
fn a_nested_run_of_the_same_key_reuses_the_lock_and_does_not_release_it() {
    let cluster = Cluster::start(3);
    let bin = crate::common::redlock_binary();
    let script = format!(
        "{bin} run --key nest -- sh -c 'echo inner $REDLOCK_TOKEN'; \
         echo outer $REDLOCK_TOKEN; \
         {bin} status --key nest >/dev/null; echo still-held=$?"
    );
    let output = cluster
        .redlock()
        .args([
            "run", "--key", "nest", "--ttl", "10s", "--wait", "0s", "--", "sh", "-c", &script,
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    let inner = lines[0].strip_prefix("inner ").unwrap();
    let outer = lines[1].strip_prefix("outer ").unwrap();
    assert_eq!(inner, outer, "the inner run must see the same lock");
    assert_eq!(
        lines[2], "still-held=0",
        "the inner run released the outer lock"
    );
    assert!(cluster.key_gone_everywhere("nest"));
}

#[test]
fn a_nested_acquire_and_release_leave_the_outer_lock_alone() {
    let cluster = Cluster::start(3);
    let bin = crate::common::redlock_binary();
    let script = format!(
        "eval \"$({bin} acquire --key nest2 --format env)\"; echo $REDLOCK_TOKEN; \
         {bin} release; echo released=$?; \
         {bin} status --key nest2 >/dev/null; echo still-held=$?"
    );
    let output = cluster
        .redlock()
        .args(["run", "--key", "nest2", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("nested:"), "{out}");
    assert_eq!(lines[1], "released=0");
    assert_eq!(lines[2], "still-held=0");
    assert!(cluster.key_gone_everywhere("nest2"));
}

#[test]
fn waiting_says_who_is_in_the_way() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    // Run as `sh holder-queue` from `dir`, so that the holder's command line is short and known;
    // it holds the lock until the test creates the gate.
    std::fs::write(
        dir.path().join("holder-queue"),
        "echo go > ready\nwhile [ ! -e gate ]; do sleep 0.02; done\n",
    )
    .unwrap();
    let mut holder = cluster
        .redlock()
        .args(["run", "--key", "queue", "--", "sh", "holder-queue"])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    wait_for_file(&dir.path().join("ready"), Duration::from_secs(10));
    let before_waiter = Instant::now();
    let mut waiter = cluster
        .redlock()
        .args(["run", "-v", "--key", "queue", "--wait", "60s", "--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = Captured::stderr_of(&mut waiter);
    let expected = "waiting for lock \"queue\": held by ";
    watch.wait_for(expected, Duration::from_secs(30));
    // Keep it waiting past a change of the holder's age (whole seconds), retrying meanwhile,
    // so that "one line per holder" below means something. No timing is asserted.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        waiter.try_wait().unwrap().is_none(),
        "the waiter did not wait"
    );
    std::fs::write(dir.path().join("gate"), "go\n").unwrap();
    let status = waiter.wait().unwrap();
    let upper = before_waiter.elapsed() + Duration::from_secs(1);
    let stderr = watch.finish();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(holder.wait().unwrap().success());
    let line = stderr
        .lines()
        .find(|l| l.contains(expected))
        .unwrap_or_else(|| panic!("{stderr}"));
    let age = holder_age(line, holder.id(), "sh holder-queue");
    assert!(age <= upper, "held for {age:?}: {line}");
    // One line per holder, not one per retry.
    assert_eq!(stderr.matches(expected).count(), 1, "{stderr}");
}
