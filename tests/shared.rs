//! The shared lock (`--shared`, readers-writer) against real masters: readers share; a writer
//! excludes readers and writers under a mix (an overlap detector); a writer behind readers is
//! not overtaken by readers that came after it; a minority of masters paused or killed; a
//! killed reader's share expiring alone; other clients' `SET NX` excluded both ways; mixing
//! kinds and `--fence` refused; the token workflow and status. Every test checks that no key
//! is left without a TTL.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::{Cluster, Running, WAIT_FOR_GATE, describe, eventually};
use redlock_cli::lock::keys;

const MARKER: &str = "__redlock:shared";

/// `redlock run --shared` (a reader) or plain (a writer) on `key`, started and ready.
fn hold(cluster: &Cluster, key: &str, shared: bool, ttl: &str) -> Running {
    let mut running = Running::start(&mut start(cluster, key, shared, ttl, None));
    running.wait_ready();
    running
}

fn start(
    cluster: &Cluster,
    key: &str,
    shared: bool,
    ttl: &str,
    wait: Option<&str>,
) -> std::process::Command {
    let mut cmd = cluster.redlock();
    cmd.args(["run", "--key", key, "--ttl", ttl]);
    if shared {
        cmd.arg("--shared");
    }
    if let Some(wait) = wait {
        cmd.args(["--wait", wait]);
    }
    cmd
}

/// The live readers of `key` on every running master that is not paused.
fn readers_everywhere(cluster: &Cluster, key: &str) -> Vec<Vec<String>> {
    let readers = keys::readers(key);
    cluster
        .servers
        .iter()
        .filter(|s| s.is_running() && !s.is_paused())
        .map(|s| {
            redis::cmd("ZRANGE")
                .arg(&readers)
                .arg(0)
                .arg(-1)
                .query(&mut s.connection())
                .expect("ZRANGE")
        })
        .collect()
}

/// Nothing is left without a TTL, and every key of `key` (K, readers, holders) is gone once
/// its holders released.
fn assert_clean(cluster: &Cluster, key: &str) {
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
    assert!(
        cluster.key_gone_everywhere(key),
        "{:?}",
        cluster.values(key)
    );
    assert!(
        eventually(Duration::from_secs(5), || readers_everywhere(cluster, key)
            .iter()
            .all(Vec::is_empty)),
        "{:?}",
        readers_everywhere(cluster, key)
    );
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// `status --key KEY --json`, parsed.
fn status_json(mut redlock: std::process::Command, key: &str) -> serde_json::Value {
    let status = redlock
        .args(["status", "--key", key, "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&status.stdout)
        .unwrap_or_else(|e| panic!("status --json is not JSON ({e}): {}", describe(&status)))
}

/// Every key on every master has a TTL (PTTL > 0), `key`'s marker included.
fn assert_every_key_expires(cluster: &Cluster) {
    for (i, server) in cluster.servers.iter().enumerate() {
        if !server.is_running() || server.is_paused() {
            continue;
        }
        for name in server.keys() {
            let pttl = server.pttl(&name);
            // -2: gone since it was listed.
            assert!(pttl > 0 || pttl == -2, "master {i}: {name} has PTTL {pttl}");
        }
    }
}

#[test]
fn readers_share_the_key_and_each_share_has_a_ttl() {
    let cluster = Cluster::start(3);
    let mut readers: Vec<Running> = (0..4)
        .map(|_| hold(&cluster, "rw-share", true, "10s"))
        .collect();
    // All four are inside at once: each wrote its ready file and waits at the gate.
    let tokens: Vec<String> = readers.iter().map(Running::token).collect();
    for token in &tokens {
        assert!(token.starts_with("shr-"), "{token}");
    }
    for (values, readers) in cluster
        .values("rw-share")
        .iter()
        .zip(readers_everywhere(&cluster, "rw-share"))
    {
        assert_eq!(values.as_deref(), Some(MARKER));
        assert_eq!(readers.len(), 4, "{readers:?}");
    }
    assert_every_key_expires(&cluster);
    for reader in &mut readers {
        reader.open_gate();
        let output = reader.wait_output();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        assert_every_key_expires(&cluster);
    }
    assert_clean(&cluster, "rw-share");
}

/// 8 contenders, `sections` each: `writers` of them plain `run`, the others `run --shared`.
/// A section logs `begin R|W pid`, then a reader waits (up to a second) for another reader to
/// be inside, so that readers overlap whenever the lock allows it; a writer just sleeps.
/// Returns the log.
fn mixed_herd(cluster: &Cluster, key: &str, writers: usize, sections: usize) -> String {
    const CONTENDERS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let active = dir.path().join("active");
    std::fs::create_dir(&active).unwrap();
    let section = |mode: &str| {
        let wait = if mode == "R" {
            "i=0; while [ $(ls {active} | wc -l) -lt 2 ] && [ $i -lt 50 ]; do sleep 0.02; i=$((i + 1)); done; "
        } else {
            ""
        };
        "echo \"begin MODE $$\" >> {log}; touch {active}/$$; WAIT\
         sleep 0.02; rm -f {active}/$$; echo \"end MODE $$\" >> {log}"
            .replace("WAIT", wait)
            .replace("MODE", mode)
            .replace("{active}", &active.display().to_string())
            .replace("{log}", &log.display().to_string())
    };
    std::thread::scope(|scope| {
        for n in 0..CONTENDERS {
            let shared = n >= writers;
            let section = section(if shared { "R" } else { "W" });
            scope.spawn(move || {
                for _ in 0..sections {
                    let output = start(cluster, key, shared, "5s", Some("120s"))
                        .args(["--node-timeout", "100ms"])
                        .args(["--", "sh", "-c", &section])
                        .output()
                        .unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                }
            });
        }
    });
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log.lines().count(), 2 * CONTENDERS * sections, "{log}");
    log
}

/// Checks the log: no writer's section overlaps any other section, and readers overlapped.
/// A section's begin is logged after the lock was taken and its end before it is released, so
/// the log can only under-count overlaps.
fn assert_writers_alone_readers_together(log: &str) {
    let (mut readers, mut writers, mut most_readers) = (0usize, 0usize, 0usize);
    for line in log.lines() {
        match line.split(' ').take(2).collect::<Vec<_>>()[..] {
            ["begin", "R"] => {
                assert_eq!(
                    writers, 0,
                    "a reader entered while a writer was inside:\n{log}"
                );
                readers += 1;
                most_readers = most_readers.max(readers);
            }
            ["begin", "W"] => {
                assert_eq!(
                    (readers, writers),
                    (0, 0),
                    "a writer entered while others were inside:\n{log}"
                );
                writers += 1;
            }
            ["end", "R"] => readers -= 1,
            ["end", "W"] => writers -= 1,
            _ => panic!("odd line {line:?}"),
        }
    }
    assert!(most_readers >= 2, "readers never shared:\n{log}");
}

#[test]
fn a_writer_excludes_readers_and_writers_in_a_mixed_herd() {
    let cluster = Cluster::start(5);
    let log = mixed_herd(&cluster, "rw-herd", 2, 3);
    assert_writers_alone_readers_together(&log);
    assert_clean(&cluster, "rw-herd");
}

/// N = 5 tolerates 2 masters down for readers and writers alike: one paused (takes
/// connections, answers nothing) and one killed for the whole run.
#[test]
fn a_minority_paused_and_killed_changes_nothing() {
    let mut cluster = Cluster::start(5);
    cluster.server(1).kill();
    cluster.server(3).pause();
    let log = mixed_herd(&cluster, "rw-minority", 2, 2);
    assert_writers_alone_readers_together(&log);
    assert_every_key_expires(&cluster);
    cluster.server(3).resume();
    assert!(
        eventually(Duration::from_secs(10), || readers_everywhere(
            &cluster,
            "rw-minority"
        )
        .iter()
        .all(Vec::is_empty)),
        "{:?}",
        readers_everywhere(&cluster, "rw-minority")
    );
    assert_clean(&cluster, "rw-minority");
}

/// Two readers hold; a writer queues behind them; readers that come after the writer queued
/// wait behind it although the key is held by readers (else a stream of readers would starve
/// it): the writer enters once the two readers are gone, woken by the last one's release,
/// before any of the later readers.
#[test]
fn readers_that_come_after_a_waiting_writer_enter_after_it() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let log = |who: &str| format!("echo {who} >> {}", order.display());
    let mut first = hold(&cluster, "rw-fair", true, "10s");
    let mut second = hold(&cluster, "rw-fair", true, "10s");
    let mut writer = Running::start_script(
        start(&cluster, "rw-fair", false, "10s", Some("60s")).arg("-v"),
        &log("writer"),
        WAIT_FOR_GATE,
    );
    // The writer is in line on every master.
    let queue = keys::queue("rw-fair");
    assert!(
        eventually(Duration::from_secs(10), || cluster
            .servers
            .iter()
            .all(|s| zcard(s, &queue) == 1)),
        "the writer never queued: {}",
        writer.stderr_so_far()
    );
    let mut later: Vec<Running> = (0..3)
        .map(|n| {
            Running::start_script(
                &mut start(&cluster, "rw-fair", true, "10s", Some("60s")),
                &log(&format!("reader {n}")),
                "",
            )
        })
        .collect();
    // All three later readers are in line too, behind the writer, and none entered.
    assert!(
        eventually(Duration::from_secs(10), || cluster
            .servers
            .iter()
            .all(|s| zcard(s, &queue) == 4)),
        "the later readers never queued"
    );
    assert!(
        !order.exists(),
        "{}",
        std::fs::read_to_string(&order).unwrap()
    );
    first.open_gate();
    second.open_gate();
    for reader in [&mut first, &mut second] {
        let output = reader.wait_output();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    }
    writer.wait_ready();
    assert_eq!(std::fs::read_to_string(&order).unwrap(), "writer\n");
    // Woken by the last reader's release (readers announce it), not by a timer. The line is
    // written before the command starts, but read from the pipe by another thread: wait for it.
    assert!(
        writer.wait_for_stderr("in turn (started by notice)", Duration::from_secs(10)),
        "{}",
        writer.stderr_so_far()
    );
    let stderr = writer.stderr_so_far();
    // While readers held, it waited for their notice rather than polling (readers are not
    // clients outside the queue, whose releases announce nothing).
    assert!(!stderr.contains("started by the backoff"), "{stderr}");
    writer.open_gate();
    let output = writer.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    for reader in &mut later {
        let output = reader.wait_output();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    }
    let order = std::fs::read_to_string(&order).unwrap();
    assert_eq!(order.lines().next(), Some("writer"), "{order}");
    assert_eq!(order.lines().count(), 4, "{order}");
    assert_clean(&cluster, "rw-fair");
}

fn zcard(server: &common::Server, key: &str) -> usize {
    redis::cmd("ZCARD")
        .arg(key)
        .query(&mut server.connection())
        .expect("ZCARD")
}

/// A reader killed with SIGKILL stops renewing: its share expires by itself while the other
/// reader keeps renewing its own (and so keeps K alive), and then a writer that waited gets
/// the key once the live reader is gone.
#[test]
fn a_killed_readers_share_expires_while_another_reader_renews() {
    let cluster = Cluster::start(3);
    let mut dead = hold(&cluster, "rw-kill", true, "2s");
    let mut alive = hold(&cluster, "rw-kill", true, "2s");
    let (dead_token, alive_token) = (dead.token(), alive.token());
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(10), || readers_everywhere(
            &cluster, "rw-kill"
        )
        .iter()
        .all(|readers| !readers.contains(&dead_token))),
        "{:?}",
        readers_everywhere(&cluster, "rw-kill")
    );
    // The live reader still holds everywhere, past the dead one's TTL.
    for readers in readers_everywhere(&cluster, "rw-kill") {
        assert_eq!(readers, vec![alive_token.clone()]);
    }
    assert_eq!(cluster.values("rw-kill"), vec![Some(MARKER.to_string()); 3]);
    assert_every_key_expires(&cluster);
    assert!(alive.is_running(), "{}", alive.stderr_so_far());
    alive.open_gate();
    let output = alive.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let writer = cluster
        .redlock()
        .args(["run", "--key", "rw-kill", "--ttl", "5s", "--", "true"])
        .output()
        .unwrap();
    assert!(writer.status.success(), "{}", describe(&writer));
    assert_clean(&cluster, "rw-kill");
}

/// Other Redlock clients only `SET K x NX`: while readers hold K, that fails on every master
/// they hold it on (a majority at least); while such a client holds K, readers are refused.
#[test]
fn a_foreign_set_nx_is_refused_while_readers_hold_and_refuses_readers() {
    let cluster = Cluster::start(3);
    let mut reader = hold(&cluster, "rw-foreign", true, "10s");
    let set_nx = |server: &common::Server| -> bool {
        let reply: Option<String> = redis::cmd("SET")
            .arg("rw-foreign")
            .arg("foreign-token")
            .arg("NX")
            .arg("PX")
            .arg(5000)
            .query(&mut server.connection())
            .expect("SET NX");
        reply.is_some()
    };
    let taken = cluster.servers.iter().filter(|s| set_nx(s)).count();
    assert_eq!(taken, 0, "a foreign SET NX succeeded while a reader held");
    reader.open_gate();
    let output = reader.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("rw-foreign"));

    // Now the foreign client holds it on every master: a reader is refused, and waits.
    assert_eq!(cluster.servers.iter().filter(|s| set_nx(s)).count(), 3);
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let refused = start(&cluster, "rw-foreign", true, "10s", None)
        .args(["--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(75), "{}", describe(&refused));
    assert!(!Path::new(&ran).exists(), "the reader ran");
    // The foreign lock is untouched, and the refused reader left no share.
    assert_eq!(
        cluster.values("rw-foreign"),
        vec![Some("foreign-token".to_string()); 3]
    );
    assert!(
        readers_everywhere(&cluster, "rw-foreign")
            .iter()
            .all(Vec::is_empty)
    );
    assert_every_key_expires(&cluster);
}

/// A writer refused by readers says so; a reader refused by a writer says who holds it, and
/// one that waits in line for it does not enter while it holds.
#[test]
fn refusals_say_who_holds_the_key() {
    let cluster = Cluster::start(3);
    let mut reader = hold(&cluster, "rw-who", true, "10s");
    let refused = cluster
        .redlock()
        .args(["run", "--key", "rw-who", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(75), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("is held by readers (--shared)"), "{stderr}");
    reader.open_gate();
    reader.wait_output();
    let mut writer = hold(&cluster, "rw-who", false, "10s");
    let refused = start(&cluster, "rw-who", true, "10s", None)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(75), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("lock \"rw-who\" is held by"), "{stderr}");
    assert!(!stderr.contains("readers"), "{stderr}");
    // A reader that waits in line behind the writer does not enter either.
    let token = writer.token();
    let waited = start(&cluster, "rw-who", true, "10s", Some("2s"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(waited.status.code(), Some(75), "{}", describe(&waited));
    assert_eq!(cluster.holding("rw-who", &token), 3);
    assert_every_key_expires(&cluster);
    writer.open_gate();
    writer.wait_output();
    assert_clean(&cluster, "rw-who");
}

/// One line on stderr, exit 64.
fn assert_usage(output: &std::process::Output, needle: &str) {
    assert_eq!(output.status.code(), Some(64), "{}", describe(output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
}

#[test]
fn mixing_kinds_and_fence_with_shared_are_refused() {
    // 5 masters: a slot of 2 needs 4 of them, and no warning that it needs all.
    let cluster = Cluster::start(5);
    let both = cluster
        .redlock()
        .args(["acquire", "--key", "rw-mix", "--shared", "--limit", "2"])
        .output()
        .unwrap();
    assert_usage(&both, "--shared");
    // Refused before anything is asked of the masters: even where a writer holds the key
    // (else it would be refused as held, exit 75).
    let writer = cluster
        .redlock()
        .args(["acquire", "--key", "rw-mix-fenced", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(writer.status.success(), "{}", describe(&writer));
    let fence = cluster
        .redlock()
        .args(["run", "--key", "rw-mix-fenced", "--shared", "--fence"])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_usage(&fence, "a fencing token needs the lock alone");

    // A key held by readers, asked for as a semaphore.
    let reader = cluster
        .redlock()
        .args(["acquire", "--key", "rw-mix", "--shared", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(reader.status.success(), "{}", describe(&reader));
    let token = String::from_utf8(reader.stdout).unwrap().trim().to_string();
    let slot = cluster
        .redlock()
        .args(["acquire", "--key", "rw-mix", "--limit", "2", "--wait", "5s"])
        .output()
        .unwrap();
    assert_usage(&slot, "is in use as a shared lock (--shared)");
    assert_every_key_expires(&cluster);
    let released = cluster
        .redlock()
        .args(["release", "--key", "rw-mix", "--token", &token])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert_clean(&cluster, "rw-mix");

    // A key held as a semaphore, asked for by a reader: refused, also to a waiting one.
    let slot = cluster
        .redlock()
        .args(["acquire", "--key", "rw-mix", "--limit", "2", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(slot.status.success(), "{}", describe(&slot));
    for wait in ["0s", "5s"] {
        let reader = cluster
            .redlock()
            .args(["run", "--key", "rw-mix", "--shared", "--wait", wait])
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_usage(&reader, "is in use as a semaphore (--limit 2)");
    }
    assert!(
        readers_everywhere(&cluster, "rw-mix")
            .iter()
            .all(Vec::is_empty)
    );
    assert_every_key_expires(&cluster);
}

/// `acquire --shared` prints a reader's token; `extend` and `release` take it; `status`
/// shows the readers, in text and JSON.
#[test]
fn the_token_workflow_and_status_of_readers() {
    let cluster = Cluster::start(3);
    let acquire = || {
        let output = cluster
            .redlock()
            .args(["acquire", "--key", "rw-flow", "--shared", "--ttl", "3s"])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["shared"], true, "{json}");
        json["token"].as_str().unwrap().to_string()
    };
    let (one, two) = (acquire(), acquire());
    assert!(one.starts_with("shr-") && two.starts_with("shr-"));

    let status = cluster
        .redlock()
        .args(["status", "--key", "rw-flow"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{}", describe(&status));
    assert!(text.contains("held by 2 readers"), "{text}");
    let json = status_json(cluster.redlock(), "rw-flow");
    assert_eq!(json["readers"].as_array().map(Vec::len), Some(2), "{json}");
    assert_eq!(json["reader_count"], 2, "{json}");
    assert_eq!(
        json["token"],
        serde_json::Value::Null,
        "the marker is nobody's token"
    );

    // Extended well past its TTL: still held.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_secs(1));
        let extended = cluster
            .redlock()
            .args(["extend", "--key", "rw-flow", "--token", &one, "--ttl", "3s"])
            .output()
            .unwrap();
        assert!(extended.status.success(), "{}", describe(&extended));
        assert_every_key_expires(&cluster);
    }
    for readers in readers_everywhere(&cluster, "rw-flow") {
        assert_eq!(readers, vec![one.clone()], "the other share expired");
    }
    let released = cluster
        .redlock()
        .args(["release", "--key", "rw-flow", "--token", &one])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert_clean(&cluster, "rw-flow");
    // Released: extending it again fails, and re-creates nothing.
    let gone = cluster
        .redlock()
        .args(["extend", "--key", "rw-flow", "--token", &one, "--ttl", "3s"])
        .output()
        .unwrap();
    assert!(!gone.status.success(), "{}", describe(&gone));
    assert_clean(&cluster, "rw-flow");
}

fn list_json(cluster: &Cluster, args: &[&str]) -> serde_json::Value {
    let output = cluster
        .redlock()
        .args(["list", "--json"])
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("list --json is not JSON ({e}): {}", describe(&output)))
}

fn problems(cluster: &Cluster, json: &serde_json::Value) -> Vec<(String, usize, String)> {
    let urls = cluster.urls();
    json["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                urls.iter()
                    .position(|url| p["server"] == url.as_str())
                    .expect("a server of the cluster"),
                p["redis_key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `list` finds a lock held by readers only through the readers' keys (readers write no
/// holder record of the lock's), shows how many, and `list --problems` knows the readers'
/// keys: one without a TTL, and live readers where something deleted the lock key.
#[test]
fn list_shows_readers_and_its_problems_know_their_keys() {
    let cluster = Cluster::start(3);
    let mut readers: Vec<Running> = (0..2)
        .map(|_| hold(&cluster, "rw-list", true, "30s"))
        .collect();
    let json = list_json(&cluster, &[]);
    let lock = json["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["key"] == "rw-list")
        .unwrap_or_else(|| panic!("no lock in {json:#}"));
    assert_eq!(lock["verdict"], "held", "{lock:#}");
    // The readers, each by its own token and record, as status lists them; the marker is
    // nobody's token.
    let tokens: Vec<String> = readers.iter().map(Running::token).collect();
    let listed: Vec<&str> = lock["readers"]
        .as_array()
        .unwrap_or_else(|| panic!("no readers in {lock:#}"))
        .iter()
        .map(|r| r["token"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2, "{lock:#}");
    assert!(
        tokens.iter().all(|t| listed.contains(&t.as_str())),
        "{lock:#}"
    );
    assert_eq!(lock["reader_count"], 2, "{lock:#}");
    assert_eq!(
        (&lock["shared"], &lock["token"]),
        (&true.into(), &serde_json::Value::Null)
    );
    let text = cluster.redlock().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("lock \"rw-list\" is held by 2 readers (--shared)"),
        "{text}"
    );
    assert!(text.contains("  readers (2):\n"), "{text}");
    let json = list_json(&cluster, &["--problems"]);
    assert_eq!(problems(&cluster, &json), vec![], "{json:#}");

    // Something else makes the readers key permanent on master 0, and deletes K on master 1.
    let readers_key = keys::readers("rw-list");
    let _: i64 = redis::cmd("PERSIST")
        .arg(&readers_key)
        .query(&mut cluster.servers[0].connection())
        .unwrap();
    cluster.servers[1].del("rw-list");
    let json = list_json(&cluster, &["--problems"]);
    assert_eq!(
        problems(&cluster, &json),
        vec![
            ("no_ttl".to_string(), 0, readers_key.clone()),
            ("stale_readers".to_string(), 1, readers_key.clone()),
        ],
        "{json:#}"
    );
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(&readers_key)
        .arg(30_000)
        .query(&mut cluster.servers[0].connection())
        .unwrap();
    for reader in &mut readers {
        reader.open_gate();
        let output = reader.wait_output();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    }
    assert_clean(&cluster, "rw-list");
}

/// A Redis Cluster as the master: every key of a shared lock is in the lock key's slot, so the
/// readers' scripts run on one node whatever the key (hash tags, `}` without one).
#[test]
fn readers_and_a_writer_on_a_cluster_master() {
    let cluster = common::RedisCluster::start(3);
    let mut locks: Vec<String> = (0..3).map(|i| cluster.key_on(i, "rw-")).collect();
    locks.extend(["{tenant-7}.env", "a}b"].map(String::from));
    for key in &locks {
        let acquire = |shared: bool| {
            let mut cmd = cluster.redlock();
            cmd.args(["acquire", "--key", key, "--ttl", "30s"]);
            if shared {
                cmd.arg("--shared");
            }
            cmd.output().unwrap()
        };
        let (one, two) = (acquire(true), acquire(true));
        assert!(one.status.success(), "{key}: {}", describe(&one));
        assert!(two.status.success(), "{key}: {}", describe(&two));
        assert_eq!(cluster.get(key).as_deref(), Some(MARKER), "{key}");
        assert!(cluster.pttl(&keys::readers(key)) > 0, "{key}");
        let json = status_json(cluster.redlock(), key);
        assert_eq!(json["readers"].as_array().map(Vec::len), Some(2), "{json}");
        let writer = acquire(false);
        assert_eq!(
            writer.status.code(),
            Some(75),
            "{key}: {}",
            describe(&writer)
        );
        for token in [&one, &two] {
            let token = String::from_utf8_lossy(&token.stdout).trim().to_string();
            let released = cluster
                .redlock()
                .args(["release", "--key", key, "--token", &token])
                .output()
                .unwrap();
            assert!(released.status.success(), "{key}: {}", describe(&released));
        }
        assert_eq!(cluster.get(key), None, "{key}");
        let writer = acquire(false);
        assert!(writer.status.success(), "{key}: {}", describe(&writer));
        assert_eq!(acquire(true).status.code(), Some(75), "{key}");
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A writer holds; four readers queue behind it. Its release wakes all four at once, each by a
/// notice (not by its heartbeat), and they are inside together.
#[test]
fn a_writers_release_wakes_every_reader_at_the_head_of_the_line() {
    let cluster = Cluster::start(3);
    let mut writer = hold(&cluster, "rw-wake", false, "10s");
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("inside");
    std::fs::create_dir(&inside).unwrap();
    // Each reader waits (up to 10 s) until all four are inside.
    let section = format!(
        "touch {inside}/$$; i=0; while [ $(ls {inside} | wc -l) -lt 4 ] && [ $i -lt 500 ]; \
         do sleep 0.02; i=$((i + 1)); done; ls {inside} | wc -l > {inside}.$$",
        inside = inside.display()
    );
    let readers: Vec<std::process::Child> = (0..4)
        .map(|_| {
            start(&cluster, "rw-wake", true, "10s", Some("60s"))
                .args(["-v", "--", "sh", "-c", &section])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let queue = keys::queue("rw-wake");
    assert!(
        eventually(Duration::from_secs(20), || cluster
            .servers
            .iter()
            .all(|s| zcard(s, &queue) == 4)),
        "the readers never queued"
    );
    writer.open_gate();
    let output = writer.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    for reader in readers {
        let output = reader.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("in turn (started by notice)"),
            "not woken by a notice:\n{stderr}"
        );
    }
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let seen = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                seen.trim(),
                "4",
                "{}: not all four inside at once",
                path.display()
            );
        }
    }
    assert_clean(&cluster, "rw-wake");
}

/// A reader that came through the line keeps its place while it holds (as the lock's waiter
/// does, until its release); a newcomer reader still enters at once beside it, without
/// queueing, since no writer waits: readers behind readers pay nothing for the line.
#[test]
fn a_newcomer_reader_enters_beside_a_reader_that_came_through_the_line() {
    let cluster = Cluster::start(3);
    let mut writer = hold(&cluster, "rw-beside", false, "10s");
    let mut queued = Running::start(&mut start(&cluster, "rw-beside", true, "10s", Some("60s")));
    let queue = keys::queue("rw-beside");
    assert!(
        eventually(Duration::from_secs(10), || cluster
            .servers
            .iter()
            .all(|s| zcard(s, &queue) == 1)),
        "the reader never queued"
    );
    writer.open_gate();
    writer.wait_output();
    queued.wait_ready();
    // Its place is still in the line, live.
    assert!(cluster.servers.iter().all(|s| zcard(s, &queue) == 1));
    let newcomer = start(&cluster, "rw-beside", true, "10s", None)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(newcomer.status.code(), Some(0), "{}", describe(&newcomer));
    queued.open_gate();
    let output = queued.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_clean(&cluster, "rw-beside");
}

/// The newcomer rule reads the first 100 places of the line: a longer line may hide a writer
/// beyond them, so a newcomer reader then queues rather than overtake it. (A line of 100
/// readers, then a writer, written into the queue directly.)
#[test]
fn a_newcomer_reader_does_not_overtake_a_writer_beyond_the_places_it_reads() {
    let cluster = Cluster::start(3);
    let key = "rw-long-line";
    for server in &cluster.servers {
        let (seconds, _): (u64, u64) = redis::cmd("TIME").query(&mut server.connection()).unwrap();
        let lease = (seconds + 60) * 1000;
        let mut pipe = redis::pipe();
        for n in 0..=100u32 {
            let token = if n < 100 {
                format!("shr-{n:032x}")
            } else {
                format!("{n:032x}")
            };
            pipe.cmd("ZADD").arg(keys::queue(key)).arg(n).arg(&token);
            pipe.cmd("ZADD")
                .arg(keys::lease(key))
                .arg(lease)
                .arg(&token);
        }
        for name in [keys::queue(key), keys::lease(key)] {
            pipe.cmd("PEXPIRE").arg(name).arg(60_000);
        }
        let _: () = pipe.query(&mut server.connection()).unwrap();
    }
    let newcomer = start(&cluster, key, true, "10s", None)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(newcomer.status.code(), Some(75), "{}", describe(&newcomer));
    assert!(readers_everywhere(&cluster, key).iter().all(Vec::is_empty));
    assert_every_key_expires(&cluster);
}

/// `acquire --shared --renew-while PID`: the detached renewer keeps a reader's share for
/// several TTLs (it renews it as a reader, the kind read from the token), and releases it once
/// PID exits; the other reader's share stays.
#[test]
fn renew_while_keeps_a_readers_share_and_releases_it_when_the_process_exits() {
    let cluster = Cluster::start(3);
    let mut other = hold(&cluster, "rw-renew", true, "30s");
    let mut watched = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let output = cluster
        .redlock()
        .args(["acquire", "--key", "rw-renew", "--shared", "--ttl", "1s"])
        .args(["--renew-while", &watched.id().to_string()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let has = |token: &str| {
        readers_everywhere(&cluster, "rw-renew")
            .iter()
            .filter(|readers| readers.iter().any(|r| r == token))
            .count()
    };
    let start = std::time::Instant::now();
    // Over three TTLs: without renewal its share would be gone after one.
    while start.elapsed() < Duration::from_millis(3500) {
        assert!(has(&token) >= 2, "lost after {:?}", start.elapsed());
        assert_every_key_expires(&cluster);
        std::thread::sleep(Duration::from_millis(100));
    }
    watched.kill().unwrap();
    watched.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(10), || has(&token) == 0),
        "not released after the watched process exited"
    );
    assert_eq!(has(&other.token()), 3);
    other.open_gate();
    let output = other.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_clean(&cluster, "rw-renew");
}

/// A reader whose share is lost on a majority (something deleted the readers' key on 2 of 3
/// masters) finds out at its next renewal and its command is stopped: exit 70, before the
/// validity ends.
#[test]
fn a_reader_whose_share_is_lost_is_stopped() {
    let cluster = Cluster::start(3);
    let mut reader = Running::start_script(
        start(&cluster, "rw-lost", true, "3s", None).args(["--kill-after", "100ms"]),
        "",
        "sleep 30",
    );
    reader.wait_ready();
    for server in &cluster.servers[..2] {
        server.del(&keys::readers("rw-lost"));
    }
    let output = reader.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    assert_every_key_expires(&cluster);
}

/// The readers' marker is nobody's token: `release` and `extend` refuse it as a `--token`
/// (exit 64, one line), and the lock's own RELEASE and EXTEND scripts refuse it too, so that
/// nothing deletes K, or cuts its TTL, under live shares. And should something else delete K
/// under live shares, the readers' key still refuses a writer.
#[test]
fn the_readers_marker_is_nobodys_token_and_readers_refuse_a_writer_without_it() {
    use redlock_cli::lock::scripts::lock::{EXTEND, RELEASE};
    let cluster = Cluster::start(3);
    let mut reader = hold(&cluster, "rw-marker", true, "30s");
    for command in ["release", "extend"] {
        let refused = cluster
            .redlock()
            .args([command, "--key", "rw-marker", "--token", MARKER])
            .output()
            .unwrap();
        assert_usage(&refused, "nobody's token");
    }
    let names = keys::Names::of("rw-marker");
    for server in &cluster.servers {
        let released: i64 = redis::Script::new(RELEASE.code)
            .key(&names.keys("rw-marker")[..keys::LOCK_KEYS])
            .arg(MARKER)
            .arg(keys::released_channel("rw-marker"))
            .arg("PUBLISH")
            .arg(&names.wake_prefix)
            .arg(&names.wake_suffix)
            .invoke(&mut server.connection())
            .unwrap();
        let extended: i64 = redis::Script::new(EXTEND.code)
            .key("rw-marker")
            .key(&names.holder)
            .arg(MARKER)
            .arg(100)
            .invoke(&mut server.connection())
            .unwrap();
        assert_eq!((released, extended), (0, 0));
        assert_eq!(server.get("rw-marker").as_deref(), Some(MARKER));
        assert!(server.pttl("rw-marker") > 20_000, "K's TTL was cut");
    }
    // Something else deletes K under the live share: our writers are still refused.
    for server in &cluster.servers {
        server.del("rw-marker");
    }
    let writer = cluster
        .redlock()
        .args(["run", "--key", "rw-marker", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(writer.status.code(), Some(75), "{}", describe(&writer));
    let stderr = String::from_utf8_lossy(&writer.stderr);
    assert!(stderr.contains("is held by readers (--shared)"), "{stderr}");
    reader.open_gate();
    let output = reader.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_clean(&cluster, "rw-marker");
}

/// Re-entrance: a reader inside its own writer (same key) re-uses the writer's lock, which keeps
/// everybody else out already; a writer inside its own reader can never be let in (no reader
/// becomes the writer), so it is refused at once, exit 64, rather than waiting for itself.
#[test]
fn a_reader_nested_in_its_writer_reuses_it_and_a_writer_nested_in_its_reader_is_refused() {
    let cluster = Cluster::start(3);
    let redlock = crate::common::redlock_binary();
    let nested = |outer_shared: bool, inner_shared: bool| {
        let mut inner = vec![redlock, "run", "--key", "rw-nested", "--wait", "3s"];
        if inner_shared {
            inner.push("--shared");
        }
        inner.extend(["--", "true"]);
        start(&cluster, "rw-nested", outer_shared, "10s", None)
            .arg("--")
            .args(inner)
            .output()
            .unwrap()
    };
    let reader_in_writer = nested(false, true);
    assert_eq!(
        reader_in_writer.status.code(),
        Some(0),
        "{}",
        describe(&reader_in_writer)
    );
    let writer_in_reader = nested(true, false);
    assert_usage(
        &writer_in_reader,
        "held by this process's own reader (--shared)",
    );
    assert_clean(&cluster, "rw-nested");
}
