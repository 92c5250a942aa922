//! `redlock list` of keys used as semaphores (`--limit`) against real masters: the limit, the
//! live slots and who holds them, the slots `release --force` revoked (kept under
//! `__redlock:revoked:<token>`, each with who revoked it), and the waiters, in text and JSON,
//! as `status --key K` tells the same semaphore; `list --problems` on a semaphore's keys; and
//! a semaphore with more slots than `list` reads per master (its bounded read).

use redlock_cli::lock::keys;

use crate::common::{Cluster, Running, WAIT_FOR_GATE, describe};
use crate::force_release::{force, wait_queued};
use crate::force_slots::acquire_slot;
use crate::list::{list, list_json, lock, problems, stdout};

fn status(cluster: &Cluster, key: &str, json: bool) -> String {
    let mut command = cluster.redlock();
    command.args(["status", "--key", key]);
    if json {
        command.arg("--json");
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    stdout(&output)
}

/// The tokens of a JSON list of slot holders.
fn tokens(list: &serde_json::Value) -> Vec<&str> {
    let list = list.as_array().expect("a list");
    list.iter().map(|h| h["token"].as_str().unwrap()).collect()
}

#[test]
fn list_shows_a_semaphore_with_its_limit_live_and_revoked_slots_and_waiters_as_status_does() {
    let cluster = Cluster::start(3);
    // Two slots (limit 2), both revoked; one revoked holder says it stopped, and a newcomer
    // takes its slot: one live slot, one revoked; then a waiter queues.
    let (gone, revoked) = (
        acquire_slot(&cluster, "nightly"),
        acquire_slot(&cluster, "nightly"),
    );
    let forced = force(&cluster, "nightly", "workers hung");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    cluster.release("nightly", &gone);
    let live = cluster.acquire(
        "nightly",
        &[
            "--limit", "2", "--ttl", "30s", "--wait", "0", "--note", "batch 7",
        ],
    );
    let mut waiter = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "nightly", "--limit", "2", "--ttl", "30s"])
            .args(["--wait", "60s", "--note", "batch 8"]),
        "",
        WAIT_FOR_GATE,
    );
    wait_queued(&cluster, "nightly");
    let plain = cluster.acquire("plain", &["--ttl", "30s"]);

    let text = stdout(&list(&cluster, &[]));
    let head = text
        .lines()
        .find(|l| l.starts_with("semaphore \"nightly\""))
        .unwrap_or_else(|| panic!("no semaphore in:\n{text}"));
    assert_eq!(
        head,
        "semaphore \"nightly\" (limit 2, a slot needs 3 of 3 masters): 2 of 2 slots held, 1 \
         revoked, 1 waiting in line"
    );
    // The same first line as `status` says.
    let said = status(&cluster, "nightly", false);
    assert_eq!(said.lines().next(), Some(head), "{said}");
    for needle in [
        "for \"batch 7\") for ",
        " unless renewed (3 of 3 masters)",
        ": revoked by user ",
        "reason \"workers hung\"",
        "its slot stays taken for ",
        "  1 waiting:",
        "for \"batch 8\") waiting for ",
        "lock \"plain\" is held by ",
    ] {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
    // Not split: no master's own lines.
    assert!(!text.contains("(revoked) ttl"), "{text}");

    let (code, json) = list_json(&cluster, &[]);
    assert_eq!(code, Some(0));
    let semaphore = lock(&json, "nightly");
    let from_status: serde_json::Value =
        serde_json::from_str(&status(&cluster, "nightly", true)).unwrap();
    for field in ["kind", "verdict", "limit", "quorum", "waiting"] {
        assert_eq!(
            semaphore[field], from_status[field],
            "{field}: {semaphore:#}"
        );
    }
    assert_eq!(semaphore["kind"], "semaphore");
    assert_eq!(tokens(&semaphore["holders"]), [live.as_str()]);
    assert_eq!(tokens(&semaphore["revoked"]), [revoked.as_str()]);
    assert_eq!(tokens(&from_status["holders"]), [live.as_str()]);
    assert_eq!(tokens(&from_status["revoked"]), [revoked.as_str()]);
    assert_eq!(semaphore["revoked"][0]["revoked"]["reason"], "workers hung");
    assert_eq!(semaphore["holders"][0]["holder"]["note"], "batch 7");
    assert_eq!(semaphore["queue"][0]["holder"]["note"], "batch 8");
    for master in semaphore["masters"].as_array().unwrap() {
        let flags: Vec<bool> = master["slots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["revoked"].as_bool().unwrap())
            .collect();
        assert_eq!(flags.iter().filter(|r| **r).count(), 1, "{master}");
        assert_eq!(flags.len(), 2, "{master}");
    }
    assert_eq!(lock(&json, "plain")["kind"], "lock");
    assert_eq!(lock(&json, "plain")["token"], plain.as_str());

    // The live holder goes: the waiter takes its slot and runs.
    cluster.release("nightly", &live);
    waiter.wait_ready();
    waiter.open_gate();
    assert!(waiter.wait_output().status.success());
}

#[test]
fn list_problems_finds_a_semaphores_key_without_a_ttl_and_still_lists_it() {
    let cluster = Cluster::start(3);
    acquire_slot(&cluster, "persisted");
    let slots = keys::slots("persisted");
    let persisted: i64 = redis::cmd("PERSIST")
        .arg(&slots)
        .query(&mut cluster.servers[0].connection())
        .unwrap();
    assert_eq!(persisted, 1);
    let (code, json) = list_json(&cluster, &["--problems"]);
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(problems(&json), [("no_ttl".to_string(), slots)]);
    assert_eq!(lock(&json, "persisted")["kind"], "semaphore");
}

#[test]
fn list_reads_at_most_a_hundred_slots_of_a_semaphore_per_master() {
    // A semaphore with 150 live slots on each master (limit 200), written as holders would
    // per the documented layout: list reads the first 100 by expiry on each, and says so by
    // listing 100 holders, while `status` (all of them) lists 150.
    let cluster = Cluster::start(3);
    for server in &cluster.servers {
        let mut connection = server.connection();
        let (seconds, _): (u64, u64) = redis::cmd("TIME").query(&mut connection).unwrap();
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(keys::slots("wide"));
        for i in 0..150_u64 {
            zadd.arg((seconds + 600) * 1000 + i)
                .arg(format!("sem200-{i:03}"));
        }
        let () = redis::pipe()
            .add_command(zadd)
            .ignore()
            .cmd("PEXPIRE")
            .arg(keys::slots("wide"))
            .arg(600_000)
            .ignore()
            .cmd("SET")
            .arg(keys::limit("wide"))
            .arg(200)
            .arg("PX")
            .arg(600_000)
            .ignore()
            .query(&mut connection)
            .unwrap();
    }
    let (code, json) = list_json(&cluster, &[]);
    assert_eq!(code, Some(0));
    let semaphore = lock(&json, "wide");
    assert_eq!(semaphore["limit"], 200);
    assert_eq!(tokens(&semaphore["holders"]).len(), 100, "{semaphore:#}");
    assert_eq!(tokens(&semaphore["holders"])[0], "sem200-000");
    let from_status: serde_json::Value =
        serde_json::from_str(&status(&cluster, "wide", true)).unwrap();
    assert_eq!(tokens(&from_status["holders"]).len(), 150);
}
