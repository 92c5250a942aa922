//! `redlock history` against real masters (issue 52): every way a turn ends, recorded by the
//! scripts that take and release and merged from every master (`lock::read::history`), with
//! masters down for part of the history and one restarted with an empty keyspace.

use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Cluster, Running, describe, eventually};
use crate::force_release::force;

fn history(cluster: &Cluster, key: &str, extra: &[&str]) -> Output {
    cluster
        .redlock()
        .args(["history", "--key", key])
        .args(extra)
        .output()
        .unwrap()
}

/// The turns `history --json` prints, newest first.
fn turns(cluster: &Cluster, key: &str) -> Vec<Value> {
    let output = history(cluster, key, &["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
        .collect()
}

fn run(cluster: &Cluster, key: &str, extra: &[&str], command: &str) -> Output {
    cluster
        .redlock()
        .args(["run", "--key", key])
        .args(extra)
        .args(["--", "sh", "-c", command])
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn each_turn_appears_once_newest_first_with_how_its_command_ended() {
    let cluster = Cluster::start(3);
    assert_eq!(run(&cluster, "job", &[], "exit 0").status.code(), Some(0));
    assert_eq!(run(&cluster, "job", &[], "exit 3").status.code(), Some(3));
    run(&cluster, "job", &[], "kill -9 $$");
    let turns = turns(&cluster, "job");
    assert_eq!(turns.len(), 3, "{turns:?}");
    // A command that is not there ends its turn as a shell says it: 127.
    let missing = cluster
        .redlock()
        .args(["run", "--key", "nothing", "--", "./no-such-command"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127), "{}", describe(&missing));
    let nothing = self::turns(&cluster, "nothing");
    assert_eq!(nothing[0]["exit_code"], 127, "{nothing:?}");
    assert_eq!(turns[0]["end"], "released");
    assert_eq!(turns[0]["signal"], 9);
    assert_eq!(turns[1]["exit_code"], 3);
    assert_eq!(turns[2]["exit_code"], 0);
    for turn in &turns {
        assert_eq!(turn["masters"], 3, "{turn}");
        assert_eq!(turn["kind"], "lock");
        let command = turn["holder"]["command"].as_str().unwrap_or_default();
        assert!(command.starts_with("sh -c "), "{turn}");
        assert!(turn["held_ms"].as_u64().is_some(), "{turn}");
        assert!(turn["started_ms"].as_u64() <= turn["ended_ms"].as_u64());
    }
    // Newest first, by when each was taken.
    assert!(turns[0]["started_ms"].as_u64() >= turns[1]["started_ms"].as_u64());
    let output = history(&cluster, "job", &[]);
    let said = text(&output);
    assert!(
        said.starts_with("lock \"job\": 3 turns, newest first\n"),
        "{said}"
    );
    assert!(said.contains("released, signal 9"), "{said}");
    assert!(said.contains("released, exit 3"), "{said}");
    assert!(output.stderr.is_empty(), "{}", describe(&output));
}

#[test]
fn a_key_never_taken_has_no_history_and_history_off_records_nothing() {
    let cluster = Cluster::start(3);
    let output = history(&cluster, "never", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(text(&output), "lock \"never\": no history\n");
    assert!(turns(&cluster, "never").is_empty());
    assert_eq!(
        run(&cluster, "quiet", &["--history", "off"], "true")
            .status
            .code(),
        Some(0)
    );
    assert!(turns(&cluster, "quiet").is_empty());
    // Nothing of it is left on the masters either.
    for server in &cluster.servers {
        assert!(
            server.keys().iter().all(|k| !k.contains(":history:")),
            "{:?}",
            server.keys()
        );
    }
}

#[test]
fn the_history_has_a_ttl_and_is_capped_by_history_n() {
    let cluster = Cluster::start(3);
    for _ in 0..6 {
        assert_eq!(
            run(&cluster, "capped", &["--history", "4"], "true")
                .status
                .code(),
            Some(0)
        );
    }
    for server in &cluster.servers {
        let key = server
            .keys()
            .into_iter()
            .find(|k| k.contains(":history:"))
            .expect("a history key");
        let ttl = server.pttl(&key);
        assert!(ttl > 29 * 24 * 3600 * 1000, "history TTL {ttl}");
    }
    assert!(
        cluster
            .keys_without_ttl()
            .iter()
            .all(|k| k.contains(":fence:"))
    );
    // Four events kept on each master, of which the newest take starts a turn: the turns
    // whose take was trimmed away still end, so at most four turns show.
    let turns = turns(&cluster, "capped");
    assert!(turns.len() <= 4 && turns.len() >= 2, "{turns:?}");
    let output = history(&cluster, "capped", &["--limit", "1"]);
    assert_eq!(text(&output).lines().count(), 3, "{}", text(&output));
}

#[test]
fn a_killed_holder_is_holding_then_expired() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "cron", "--ttl", "2s"]),
    );
    holder.wait_ready();
    let now = turns(&cluster, "cron");
    assert_eq!(now.len(), 1);
    assert_eq!(now[0]["end"], "holding");
    assert!(text(&history(&cluster, "cron", &[])).contains("holding now"));
    kill9(holder.child.id());
    let _ = holder.child.wait();
    assert!(
        cluster.key_gone_everywhere("cron")
            || eventually(Duration::from_secs(5), || {
                cluster.values("cron").iter().all(Option::is_none)
            })
    );
    let after = turns(&cluster, "cron");
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["end"], "expired");
    assert_eq!(after[0]["held_ms"], Value::Null);
    let said = text(&history(&cluster, "cron", &[]));
    assert!(said.contains("expired (stopped renewing)"), "{said}");
}

fn kill9(pid: u32) {
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
}

#[test]
fn a_master_down_for_a_turn_or_restarted_empty_hides_no_turn_and_duplicates_none() {
    let mut cluster = Cluster::start(3);
    assert_eq!(run(&cluster, "d", &[], "true").status.code(), Some(0));
    // Master 0 is down for the second turn, and comes back (empty) for the third.
    cluster.server(0).kill();
    assert_eq!(run(&cluster, "d", &[], "exit 4").status.code(), Some(4));
    cluster.server(0).restart();
    assert_eq!(run(&cluster, "d", &[], "exit 5").status.code(), Some(5));
    // Master 1 restarts empty: what it recorded is gone, the others still have it.
    cluster.server(1).restart();
    let turns = turns(&cluster, "d");
    let codes: Vec<i64> = turns
        .iter()
        .map(|t| t["exit_code"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, [5, 4, 0], "{turns:?}");
    assert_eq!(turns[0]["masters"], 2);
    assert_eq!(turns[1]["masters"], 1);
    assert_eq!(turns[2]["masters"], 1);
}

#[test]
fn a_turn_that_lost_its_majority_is_lost_once_the_masters_are_back() {
    let mut cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args([
        "run",
        "--key",
        "l",
        "--ttl",
        "3s",
        "--kill-after",
        "200ms",
    ]));
    holder.wait_ready();
    cluster.server(1).kill();
    cluster.server(2).kill();
    let output = holder.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
    // Two of three masters are gone: too few to tell.
    let unreadable = history(&cluster, "l", &[]);
    assert_eq!(
        unreadable.status.code(),
        Some(69),
        "{}",
        describe(&unreadable)
    );
    assert!(
        String::from_utf8_lossy(&unreadable.stderr).contains("cannot read the history"),
        "{}",
        describe(&unreadable)
    );
    cluster.server(1).restart();
    cluster.server(2).restart();
    let turns = turns(&cluster, "l");
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0]["end"], "lost");
    assert!(text(&history(&cluster, "l", &[])).contains("lost (could not renew)"));
}

#[test]
fn a_forced_release_names_who_revoked_and_why() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "f"]));
    holder.wait_ready();
    let forced = force(&cluster, "f", "stuck, INC-9");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let _ = holder.wait_output();
    let turns = turns(&cluster, "f");
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0]["end"], "revoked");
    assert_eq!(turns[0]["by"]["note"], "stuck, INC-9");
    let said = text(&history(&cluster, "f", &[]));
    assert!(said.contains("revoked by "), "{said}");
    assert!(said.contains("\"stuck, INC-9\""), "{said}");
}

/// A superseding waiter of "dep", with its `note`, running `true` once it takes the lock.
fn superseding(cluster: &Cluster, note: &str) -> std::process::Child {
    cluster
        .redlock()
        .args([
            "run",
            "--key",
            "dep",
            "--supersede",
            "--wait",
            "30s",
            "--note",
            note,
        ])
        .args(["--", "true"])
        .spawn()
        .unwrap()
}

#[test]
fn a_superseded_waiter_never_ran_and_says_by_whom() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "dep"]));
    holder.wait_ready();
    let older = superseding(&cluster, "build 1");
    assert!(eventually(Duration::from_secs(10), || {
        text(
            &cluster
                .redlock()
                .args(["status", "--key", "dep"])
                .output()
                .unwrap(),
        )
        .contains("build 1")
    }));
    let mut newer = superseding(&cluster, "build 2");
    let older = older.wait_with_output().unwrap();
    assert_eq!(older.status.code(), Some(80), "{}", describe(&older));
    holder.open_gate();
    assert_eq!(newer.wait().unwrap().code(), Some(0));
    let _ = holder.wait_output();
    let turns = turns(&cluster, "dep");
    let ends: Vec<&str> = turns.iter().map(|t| t["end"].as_str().unwrap()).collect();
    assert_eq!(ends, ["released", "superseded", "released"], "{turns:?}");
    assert_eq!(turns[0]["holder"]["note"], "build 2");
    assert_eq!(turns[1]["holder"]["note"], "build 1");
    assert_eq!(turns[1]["by"]["note"], "build 2");
    let said = text(&history(&cluster, "dep", &[]));
    assert!(said.contains("never ran"), "{said}");
}

#[test]
fn readers_each_have_their_own_turn_and_since_filters() {
    let cluster = Cluster::start(3);
    for _ in 0..2 {
        assert_eq!(
            run(&cluster, "r", &["--shared"], "true").status.code(),
            Some(0)
        );
    }
    let turns = turns(&cluster, "r");
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert!(
        turns
            .iter()
            .all(|t| t["kind"] == "shared" && t["exit_code"] == 0)
    );
    std::thread::sleep(Duration::from_millis(1500));
    let recent = history(&cluster, "r", &["--since", "1s", "--json"]);
    assert_eq!(text(&recent), "", "{}", describe(&recent));
}

#[test]
fn a_history_another_client_wrote_is_named_and_never_breaks_the_lock() {
    let cluster = Cluster::start(3);
    // A hash where the history goes, on one master; a list without a TTL on another.
    redis::cmd("HSET")
        .arg("__redlock:{odd}:history:odd")
        .arg("a")
        .arg("b")
        .query::<()>(&mut cluster.servers[0].connection())
        .unwrap();
    redis::cmd("RPUSH")
        .arg("__redlock:{odd}:history:odd")
        .arg("not json")
        .query::<()>(&mut cluster.servers[1].connection())
        .unwrap();
    assert_eq!(run(&cluster, "odd", &[], "exit 6").status.code(), Some(6));
    // The master with the hash is named, and the others still tell the turn.
    let output = history(&cluster, "odd", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let said = text(&output);
    assert!(said.contains("released, exit 6"), "{said}");
    assert!(said.contains("(2 of 3 masters answered)"), "{said}");
    // The list without a TTL got one from the run's write; a fresh one without is a problem.
    redis::cmd("RPUSH")
        .arg("__redlock:{bare}:history:bare")
        .arg("x")
        .query::<()>(&mut cluster.servers[2].connection())
        .unwrap();
    let problems = cluster
        .redlock()
        .args(["list", "--problems"])
        .output()
        .unwrap();
    assert_eq!(problems.status.code(), Some(1), "{}", describe(&problems));
    let said = text(&problems);
    assert!(
        said.contains("a lock's history (`redlock history`) without a TTL"),
        "{said}"
    );
    assert!(said.contains("__redlock:{odd}:history:odd"), "{said}");
}

#[test]
fn status_and_list_say_how_the_last_turn_ended() {
    let cluster = Cluster::start(3);
    assert_eq!(run(&cluster, "s", &[], "exit 7").status.code(), Some(7));
    let status = cluster
        .redlock()
        .args(["status", "--key", "s"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "{}", describe(&status));
    let said = text(&status);
    let line = said
        .lines()
        .find(|l| l.starts_with("last turn: "))
        .unwrap_or_else(|| panic!("no last turn: {said}"));
    assert!(line.starts_with("last turn: released, exit 7, "), "{line}");
    assert!(line.contains(" ago (held "), "{line}");
    assert!(
        line.ends_with("(more: redlock history --key 's')"),
        "{line}"
    );
    let json = cluster
        .redlock()
        .args(["status", "--key", "s", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["last_turn"]["exit_code"], 7, "{report}");
    // `list` shows held locks: the last turn of one that is held now is the one before.
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "s"]));
    holder.wait_ready();
    let list = cluster.redlock().args(["list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&list.stdout).unwrap();
    let lock = listed["locks"]
        .as_array()
        .and_then(|locks| locks.iter().find(|l| l["key"] == "s"))
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    assert_eq!(lock["last_turn"]["exit_code"], 7, "{lock}");
    holder.open_gate();
    let _ = holder.wait_output();
}

#[test]
fn a_semaphores_holders_each_have_their_own_turn_and_a_forced_slot_is_revoked() {
    let cluster = Cluster::start(3);
    assert_eq!(
        run(&cluster, "pool", &["--limit", "2"], "exit 2")
            .status
            .code(),
        Some(2)
    );
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "pool", "--limit", "2"]),
    );
    holder.wait_ready();
    let forced = force(&cluster, "pool", "drain");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let _ = holder.wait_output();
    let turns = turns(&cluster, "pool");
    let ends: Vec<&str> = turns.iter().map(|t| t["end"].as_str().unwrap()).collect();
    assert_eq!(ends, ["revoked", "released"], "{turns:?}");
    assert!(turns.iter().all(|t| t["kind"] == "semaphore"), "{turns:?}");
    assert_eq!(turns[0]["by"]["note"], "drain");
    assert_eq!(turns[1]["exit_code"], 2);
}

#[test]
fn the_metrics_count_a_released_turn() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.prom");
    let metrics = file.to_str().unwrap();
    for command in ["exit 0", "exit 1"] {
        run(&cluster, "m", &["--metrics-file", metrics], command);
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(r#"redlock_outcomes_total{key="m",mode="writer",outcome="released"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"redlock_outcomes_total{key="m",mode="writer",outcome="lost"} 0"#),
        "{text}"
    );
}

#[test]
fn a_waiter_out_of_patience_gave_up_and_never_ran() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "g"]));
    holder.wait_ready();
    let waiter = run(
        &cluster,
        "g",
        &["--wait", "1s", "--note", "nightly"],
        "true",
    );
    assert_eq!(waiter.status.code(), Some(75), "{}", describe(&waiter));
    let turns = turns(&cluster, "g");
    let ends: Vec<&str> = turns.iter().map(|t| t["end"].as_str().unwrap()).collect();
    assert_eq!(ends, ["gave_up", "holding"], "{turns:?}");
    assert_eq!(turns[0]["holder"]["note"], "nightly");
    assert_eq!(turns[0]["held_ms"], Value::Null);
    let said = text(&history(&cluster, "g", &[]));
    assert!(said.contains("never ran"), "{said}");
    assert!(said.contains("gave up"), "{said}");
    holder.open_gate();
    let _ = holder.wait_output();
}

#[test]
fn a_waiter_overtaken_by_a_higher_order_is_outdated_by_it() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "o"]));
    holder.wait_ready();
    let waiter = cluster
        .redlock()
        .args([
            "run", "--key", "o", "--order", "5", "--wait", "30s", "--", "true",
        ])
        .spawn()
        .unwrap();
    assert!(eventually(Duration::from_secs(10), || {
        text(
            &cluster
                .redlock()
                .args(["status", "--key", "o"])
                .output()
                .unwrap(),
        )
        .contains("order 5")
    }));
    // Order 9 took the lock elsewhere meanwhile, as its run leaves the register.
    for server in &cluster.servers {
        server.set("__redlock:{o}:order:o", "9");
    }
    holder.open_gate();
    let waiter = waiter.wait_with_output().unwrap();
    assert_eq!(waiter.status.code(), Some(81), "{}", describe(&waiter));
    let _ = holder.wait_output();
    let turns = turns(&cluster, "o");
    let ends: Vec<&str> = turns.iter().map(|t| t["end"].as_str().unwrap()).collect();
    assert_eq!(ends, ["outdated", "released"], "{turns:?}");
    assert_eq!(turns[0]["outdated_by"], 9);
    let said = text(&history(&cluster, "o", &[]));
    assert!(said.contains("outdated (order 9 took it)"), "{said}");
    assert!(said.contains("never ran"), "{said}");
}
