//! Fencing tokens (`--fence`) against real masters: strictly increasing over many grants, in
//! lock order under contention, across restarts of durable masters, from two different
//! majorities (what makes NEXTID sound where INCR is not); what is left when masters
//! restart empty; and a paused holder's late write refused by a resource that checks tokens.

use crate::common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common::{Cluster, describe, send_signal, wait_for_file};

/// Runs one fenced `redlock run` and returns the token the command saw.
fn grant(cluster: &Cluster, key: &str) -> u64 {
    let output = cluster
        .redlock()
        .args([
            "run",
            "--fence",
            "--key",
            key,
            "--ttl",
            "5s",
            "--node-timeout",
            "1s",
        ])
        .args(["--", "sh", "-c", "echo $REDLOCK_FENCE"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no token: {}", describe(&output)))
}

fn assert_strictly_increasing(tokens: &[u64]) {
    for pair in tokens.windows(2) {
        assert!(
            pair[1] > pair[0],
            "token went from {} to {}: {tokens:?}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn two_hundred_sequential_grants_strictly_increase() {
    let cluster = Cluster::start(3);
    let tokens: Vec<u64> = (0..200).map(|_| grant(&cluster, "seq")).collect();
    assert_strictly_increasing(&tokens);
    assert_eq!(tokens[0], 1);
    // The counter has no TTL: it must outlive every lock.
    for server in &cluster.servers {
        assert_eq!(server.pttl("__redlock:{seq}:fence:seq"), -1);
    }
}

#[test]
fn tokens_strictly_increase_in_lock_order_under_contention() {
    const CONTENDERS: usize = 4;
    const GRANTS: usize = 15;
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // Inside the critical section: the order of lines in the log is the order of the lock.
    let section = format!("echo $REDLOCK_FENCE >> {}", log.display());
    std::thread::scope(|scope| {
        for _ in 0..CONTENDERS {
            scope.spawn(|| {
                for _ in 0..GRANTS {
                    let output = cluster
                        .redlock()
                        .args(["run", "--fence", "--key", "contended", "--wait", "60s"])
                        .args(["--", "sh", "-c", &section])
                        .output()
                        .unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                }
            });
        }
    });
    let tokens: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(tokens.len(), CONTENDERS * GRANTS);
    assert_strictly_increasing(&tokens);
}

/// Between two grants every master restarts, one after the other: only what each wrote to its
/// append-only file can carry the counter over (without persistence it would start again at 1,
/// see the last test below).
#[test]
fn tokens_survive_durable_masters_restarting_one_at_a_time() {
    let mut cluster = Cluster::start_with(3, &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut tokens = Vec::new();
    for _ in 0..4 {
        let token = grant(&cluster, "durable");
        tokens.push(token);
        for i in 0..3 {
            cluster.server(i).restart();
            assert_eq!(
                cluster.servers[i].get("__redlock:{durable}:fence:durable"),
                Some(token.to_string()),
                "master {i} lost the counter in its restart"
            );
        }
    }
    tokens.push(grant(&cluster, "durable"));
    assert_strictly_increasing(&tokens);
}

/// Why the token comes from NEXTID (read the maximum from a majority, then store max+1 on a
/// majority) and not from INCR on each master with the maximum of a majority's answers. Start
/// from counters 10, 5, 5, as a proposal that reached only master 0 leaves them. Grant one
/// reaches masters 0 and 1, grant two masters 1 and 2. INCR would hand out 11, then 7; NEXTID
/// 11, then 12, because grant one stored 11 on a majority and every majority overlaps it.
#[test]
fn a_grant_seen_by_a_different_majority_still_gets_a_larger_token() {
    let mut cluster = Cluster::start(3);
    let counter = "__redlock:{overlap}:fence:overlap";
    cluster.servers[0].set(counter, "10");
    cluster.servers[1].set(counter, "5");
    cluster.servers[2].set(counter, "5");

    cluster.server(2).pause();
    let first = grant(&cluster, "overlap");
    cluster.server(2).resume();
    assert_eq!(first, 11);
    let stored: Vec<Option<String>> = cluster.servers.iter().map(|s| s.get(counter)).collect();
    assert!(
        stored.iter().filter(|v| v.as_deref() == Some("11")).count() >= 2,
        "the token was not stored on a majority: {stored:?}"
    );

    // Master 2 receives what was queued for it while paused; let it catch up, then take
    // master 0 away.
    assert!(common::eventually(Duration::from_secs(5), || cluster
        .servers[2]
        .get(counter)
        .as_deref()
        == Some("11")));
    cluster.server(0).pause();
    let second = grant(&cluster, "overlap");
    cluster.server(0).resume();
    assert!(
        second > first,
        "token {second} after {first}: two majorities gave out tokens out of order"
    );
    assert_eq!(second, 12);
}

#[test]
fn one_master_restarting_empty_is_tolerated() {
    // Without persistence a restarted master forgets the counter, but the others remember it,
    // and the read asks every reachable master.
    let mut cluster = Cluster::start(3);
    let mut tokens = Vec::new();
    for round in 0..9 {
        tokens.push(grant(&cluster, "volatile"));
        cluster.server(round % 3).restart();
    }
    tokens.push(grant(&cluster, "volatile"));
    assert_strictly_increasing(&tokens);
}

/// The documented limit: when a majority restarted empty and the master that kept the latest
/// value is unreachable at the next grant, the counter starts over. `doctor` warns about
/// masters that lose data on restart.
#[test]
fn a_majority_restarting_empty_while_the_survivor_is_unreachable_can_repeat_tokens() {
    let mut cluster = Cluster::start(3);
    let before: Vec<u64> = (0..5).map(|_| grant(&cluster, "lossy")).collect();
    assert_eq!(before, [1, 2, 3, 4, 5]);
    cluster.server(0).restart();
    cluster.server(1).restart();
    cluster.server(2).pause();
    let after = grant(&cluster, "lossy");
    cluster.server(2).resume();
    assert!(
        after <= 5,
        "with the data lost on a majority and the survivor away, the counter restarted at \
         {after}: the documented limit"
    );

    let doctor = cluster
        .redlock()
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    for master in report["masters"].as_array().unwrap() {
        let persistence = master["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "persistence")
            .unwrap();
        assert_eq!(persistence["level"], "warning", "{persistence}");
        assert!(persistence["message"].as_str().unwrap().contains("fencing"));
    }
}

#[test]
fn acquire_prints_the_token_and_status_shows_the_counter() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["acquire", "--fence", "--key", "shown", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["fence"], 1);
    let env = cluster
        .redlock()
        .args(["acquire", "--fence", "--key", "other", "--format", "env"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&env.stdout).contains("export REDLOCK_FENCE=1\n"));

    let status = cluster
        .redlock()
        .args(["status", "--key", "shown", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["fence"], 1);
    let text = cluster
        .redlock()
        .args(["status", "--key", "shown"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("fencing counter: 1"));
}

fn fenced_append() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/fenced-append.sh")
        .display()
        .to_string()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The demonstration of docs/fencing.md. Holder A takes the lock with token 1 and is frozen
/// (SIGSTOP on redlock, its guard and the command alike, as in a paused VM) just before it
/// writes. Its lock expires; B takes it with token 2 and writes. When A's command wakes up and
/// writes with token 1, the resource refuses it.
#[test]
fn a_holder_paused_past_its_validity_has_its_late_write_rejected() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ready = dir.path().join("ready");
    // A stops itself right before the write, as a GC pause or a swapped-out process would.
    let a_script = format!(
        "echo $$ > {ready}; kill -STOP $$; {append} {data} 'written by A'",
        ready = ready.display(),
        append = fenced_append(),
        data = data.display()
    );
    let a = cluster
        .redlock()
        .args([
            "run", "--fence", "--key", "res", "--ttl", "1s", "--", "sh", "-c", &a_script,
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let a_shell: u32 = wait_for_file(&ready, Duration::from_secs(10))
        .parse()
        .unwrap();
    // Freeze A's redlock and its guard too, as a paused VM would freeze the whole host, so
    // nothing renews the lock or stops the command (with the guard running, the command would
    // be killed when the validity ends).
    let a_guard = common::procfs::guard_of(a.id() as i32, a_shell as i32);
    send_signal(a_guard as u32, libc::SIGSTOP);
    send_signal(a.id(), libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1500));

    let b = cluster
        .redlock()
        .args(["run", "--fence", "--key", "res", "--wait", "5s", "--"])
        .arg(fenced_append())
        .arg(&data)
        .arg("written by B")
        .output()
        .unwrap();
    assert!(b.status.success(), "B could not write: {}", describe(&b));

    // A's command wakes up first and writes with its old token (its redlock is still frozen,
    // so the exited shell stays a zombie until A's redlock resumes and reaps it).
    send_signal(a_shell, libc::SIGCONT);
    assert!(
        common::eventually(Duration::from_secs(10), || !common::process_alive(
            a_shell as i32
        )),
        "A's command did not finish"
    );
    send_signal(a_guard as u32, libc::SIGCONT);
    send_signal(a.id(), libc::SIGCONT);
    let a_output = a.wait_with_output().unwrap();
    let a_stderr = stderr(&a_output);
    assert!(
        a_stderr.contains("rejected token 1") && a_stderr.contains("has seen 2"),
        "A's late write was not refused: {}",
        describe(&a_output)
    );
    assert_eq!(
        std::fs::read_to_string(&data).unwrap(),
        "written by B\n",
        "the stale holder's write got through"
    );
}

/// Upgrading from a version that kept the counter at `redlock:fence:K`: the first grant goes
/// above it (on the masters that had it), and the old key is left as it was.
#[test]
fn the_counter_of_the_old_layout_is_carried_over() {
    let cluster = Cluster::start(3);
    cluster.servers[0].set("redlock:fence:upgraded", "41");
    cluster.servers[1].set("redlock:fence:upgraded", "40");
    assert_eq!(grant(&cluster, "upgraded"), 42);
    assert_eq!(grant(&cluster, "upgraded"), 43);
    assert_eq!(
        cluster.servers[0].get("redlock:fence:upgraded").as_deref(),
        Some("41")
    );
    assert_eq!(
        cluster.servers[0]
            .get("__redlock:{upgraded}:fence:upgraded")
            .as_deref(),
        Some("43")
    );
}

/// The library refuses what the command line refuses (`--fence --limit`): a semaphore slot gets
/// no fencing token, and nothing is read or written for it.
#[test]
fn the_library_gives_a_semaphore_slot_no_fencing_token() {
    use redlock_cli::lock::{
        Cancel, FenceError, History, Kind, Master, Redlock, Released, Request, Timing,
    };

    let cluster = Cluster::start(3);
    let masters = cluster
        .urls()
        .iter()
        .map(|url| Master::parse(url).expect("master URL"))
        .collect();
    let client = Redlock::new(masters, None).expect("client");
    let timing = Timing::new(Duration::from_secs(10));
    let slot = client
        .acquire(
            &Request {
                key: "pool",
                kind: Kind::Slot { limit: 2 },
                timing,
                holder: None,
                wait: Duration::ZERO,
                supersede: false,
                history: History::default(),
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .expect("a slot");
    assert_eq!(
        client.fence(&slot),
        Err(FenceError::NotExclusive { limit: 2 })
    );
    for server in &cluster.servers {
        assert!(
            !server.keys().iter().any(|k| k.contains(":fence:")),
            "a counter was written: {:?}",
            server.keys()
        );
    }
    assert_eq!(client.release(&slot), Released::Yes);
    // The lock itself still gets one.
    let lock = client
        .acquire(
            &Request {
                key: "pool-lock",
                kind: Kind::Lock,
                timing,
                holder: None,
                wait: Duration::ZERO,
                supersede: false,
                history: History::default(),
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .expect("the lock");
    assert_eq!(client.fence(&lock), Ok(1));
    assert_eq!(client.release(&lock), Released::Yes);
}
