//! `release --force` on a semaphore (`--limit`; issue 38; the protocol and its argument are in
//! src/lock/kinds/revoke.rs, the Lua in src/lock/scripts/slots/revoke.rs): every slot holder
//! is revoked, and never more than L hold, even by force. Each revoked slot stays taken until
//! its holder stopped and said so (a revoked `run` stops its command, exit 70, naming who
//! revoked it, and releases; the waiter is woken by that release's notice), or its validity
//! surely ended (a holder whose supervisor is stopped is waited out); a force that reaches a
//! minority does not count; `status` shows the revoked slots. Orders are checked from the
//! processes' own timestamps, never by timing.

use std::process::Output;
use std::time::Duration;

use crate::common::{Cluster, Running, WAIT_FOR_GATE, describe, hostname, send_signal};

const LOCK_LOST: i32 = 70;
const UNAVAILABLE: i32 = 69;
const CONFLICT: i32 = 75;

// The helpers of the lock's forced releases: the same commands, clocks and waits.
use crate::force_release::{
    ALIVE, ENDS_ON_TERM, STARTED, exited_with, force, force_on_master_0_only, read_ns, wait_queued,
};

/// A slot of `key` (limit 2) held for 30 s by `acquire`: its token.
pub(crate) fn acquire_slot(cluster: &Cluster, key: &str) -> String {
    cluster.acquire(key, &["--limit", "2", "--ttl", "30s", "--wait", "0"])
}

fn extend(cluster: &Cluster, key: &str, token: &str) -> Output {
    cluster
        .redlock()
        .args(["extend", "--key", key, "--token", token, "--ttl", "30s"])
        .output()
        .unwrap()
}

/// The members of the slots key on master `i`.
pub(crate) fn slots_on(cluster: &Cluster, i: usize, key: &str) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(redlock_cli::lock::keys::slots(key))
        .arg(0)
        .arg(-1)
        .query(&mut cluster.servers[i].connection())
        .expect("ZRANGE")
}

#[test]
fn both_slot_holders_stop_naming_who_and_the_waiter_enters_only_after_one_is_dead() {
    let cluster = Cluster::start(3);
    let metrics = tempfile::tempdir().unwrap();
    let metrics_of = |name: &str| metrics.path().join(format!("{name}.prom"));
    let holder = |name: &str| {
        let mut running = Running::start_script(
            cluster
                .redlock()
                .args(["run", "--key", "batch", "--limit", "2"])
                // Renewals every 2.5 s, half-way between the waiter's 1 s timer turns (as in
                // force_release.rs): the revoked holders' releases are told from a timer's.
                .args(["--ttl", "7500ms", "--kill-after", "1s"])
                .arg("--metrics-file")
                .arg(metrics_of(name)),
            ENDS_ON_TERM,
            ALIVE,
        );
        let group = running.wait_ready();
        (running, group)
    };
    let (mut first, first_group) = holder("first");
    let (mut second, second_group) = holder("second");
    // The next command counts, itself, as it starts, the old commands' groups still alive.
    let next_setup = format!(
        "{STARTED}\nn=0\nfor g in {first_group} {second_group}; do \
         if kill -0 -$g 2>/dev/null; then n=$((n + 1)); fi; done\necho $n > \"$d/old_alive\""
    );
    let mut next = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "batch", "--limit", "2", "--ttl", "3s"])
            .args(["--wait", "60s", "--metrics-file"])
            .arg(metrics_of("next")),
        &next_setup,
        WAIT_FOR_GATE,
    );
    wait_queued(&cluster, "batch");

    let forced = cluster
        .redlock()
        .args([
            "release",
            "--force",
            "--key",
            "batch",
            "--reason",
            "nightly hung",
        ])
        .arg("--metrics-file")
        .arg(metrics_of("force"))
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    let said = String::from_utf8_lossy(&forced.stdout);
    assert!(
        said.starts_with("semaphore \"batch\": revoked the holder")
            && said.matches("the holder ").count() == 2
            && said.contains("on 3 masters"),
        "{said}"
    );

    for old in [&mut first, &mut second] {
        let stderr = exited_with(&old.wait_output(), LOCK_LOST);
        // Named as what it lost: a slot of the semaphore, not a lock (issue 47, 10c).
        assert!(
            stderr.contains(
                "semaphore \"batch\": lost its slot: it was revoked by `redlock release --force`"
            ) && stderr.contains(&format!("on {}", hostname()))
                && stderr.contains("reason \"nightly hung\""),
            "{stderr}"
        );
    }
    next.wait_ready();
    // Never three at once: when the next command started, one old command at least had ended
    // (its own clock says so), and the next command itself found at most one old group alive.
    let started = read_ns(&next.path("started"));
    let dead_before = [&first, &second].iter().any(|old| {
        read_ns(&old.path("ended")) <= started && read_ns(&old.path("alive")) <= started
    });
    assert!(
        dead_before,
        "both old commands ran on when the next started"
    );
    let old_alive = std::fs::read_to_string(next.path("old_alive")).unwrap();
    assert!(old_alive.trim().parse::<u32>().unwrap() <= 1, "{old_alive}");
    next.open_gate();
    let output = next.wait_output();
    assert!(output.status.success(), "{}", describe(&output));

    // Each file counts its own side; the waiter was woken by a revoked holder's release.
    let line = |name: &str, needle: &str| {
        let text = std::fs::read_to_string(metrics_of(name)).unwrap();
        assert!(
            text.lines()
                .any(|l| l.contains(needle) && l.ends_with(" 1")),
            "{name}: no {needle} 1 in\n{text}"
        );
    };
    line("first", "outcome=\"revoked\"");
    line("second", "outcome=\"revoked\"");
    line("force", "outcome=\"forced\"");
    line("next", "cause=\"notice\"");
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}

#[test]
fn a_stopped_slot_holder_is_waited_out_while_a_revoked_token_released_frees_its_slot_at_once() {
    let cluster = Cluster::start(3);
    let mut stopped = Running::start_script(
        cluster.redlock().args([
            "run",
            "--key",
            "nightly",
            "--limit",
            "2",
            "--ttl",
            "3s",
            "--kill-after",
            "1s",
        ]),
        "",
        ALIVE,
    );
    stopped.wait_ready();
    let redlock_pid = stopped.child.id();
    send_signal(redlock_pid, libc::SIGSTOP);
    let other = acquire_slot(&cluster, "nightly");

    let forced = force(&cluster, "nightly", "host froze");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    // The revoked token cannot renew, and hears by whom.
    let stderr = exited_with(&extend(&cluster, "nightly", &other), LOCK_LOST);
    assert!(stderr.contains("was revoked by") && stderr.contains("reason \"host froze\""));
    // Its release says it stopped: its slot is free at once, and a newcomer takes it.
    cluster.release("nightly", &other);
    let newcomer = acquire_slot(&cluster, "nightly");

    // The stopped holder's slot stays taken: the next one waits out its validity.
    let mut next = Running::start_script(
        cluster
            .redlock()
            .args(["run", "--key", "nightly", "--limit", "2", "--ttl", "30s"])
            .args(["--wait", "60s"]),
        STARTED,
        WAIT_FOR_GATE,
    );
    next.wait_ready();
    let started = read_ns(&next.path("started"));
    // Resumed, the old holder cannot renew: its slot was revoked.
    send_signal(redlock_pid, libc::SIGCONT);
    exited_with(&stopped.wait_output(), LOCK_LOST);
    // Its command was killed by the guard at its validity, before the next one started.
    assert!(read_ns(&stopped.path("alive")) <= started);
    next.open_gate();
    assert!(next.wait_output().status.success());
    cluster.release("nightly", &newcomer);
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}

#[test]
fn a_force_on_a_minority_of_a_semaphore_does_not_count() {
    // N = 5, L = 2: a slot needs 4 masters.
    let cluster = Cluster::start(5);
    let token = acquire_slot(&cluster, "half");
    let forced = force_on_master_0_only(&cluster, "half", 4, &[]);
    let stderr = exited_with(&forced, UNAVAILABLE);
    assert!(
        stderr.contains("the force reached 1 master (it needs 3)"),
        "{stderr}"
    );
    // Revoked where it landed, the slot still counted there; the holder keeps it on the
    // other four, enough to renew.
    assert_eq!(
        slots_on(&cluster, 0, "half"),
        [format!("{}{token}", redlock_cli::lock::REVOKED_SLOT_PREFIX)]
    );
    let renewed = extend(&cluster, "half", &token);
    assert!(renewed.status.success(), "{}", describe(&renewed));
    // Sent again to all, the force completes, and the holder cannot renew.
    assert_eq!(force(&cluster, "half", "again").status.code(), Some(0));
    exited_with(&extend(&cluster, "half", &token), LOCK_LOST);
    assert!(
        cluster.keys_without_ttl().is_empty(),
        "{:?}",
        cluster.keys_without_ttl()
    );
}

#[test]
fn status_shows_the_revoked_slots_and_a_newcomer_is_refused_while_they_are_taken() {
    let cluster = Cluster::start(3);
    let tokens = [
        acquire_slot(&cluster, "shown"),
        acquire_slot(&cluster, "shown"),
    ];
    let forced = force(&cluster, "shown", "INC-9: stuck");
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    // Both slots still taken: a newcomer is refused (not let in beside the revoked holders).
    let newcomer = cluster
        .redlock()
        .args(["acquire", "--key", "shown", "--limit", "2", "--wait", "0"])
        .output()
        .unwrap();
    exited_with(&newcomer, CONFLICT);

    let status = |json: bool| {
        let mut cmd = cluster.redlock();
        cmd.args(["status", "--key", "shown"]);
        if json {
            cmd.arg("--json");
        }
        let output = cmd.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        String::from_utf8(output.stdout).unwrap()
    };
    let text = status(false);
    assert!(
        text.contains("2 of 2 slots held, 2 revoked")
            && text.matches("revoked by user ").count() == 2
            && text.contains("reason \"INC-9: stuck\"")
            && text.contains("at the latest")
            && text.contains("(revoked) ttl"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(json["holders"], serde_json::json!([]), "{json}");
    let revoked = json["revoked"].as_array().expect("revoked slots");
    let mut named: Vec<&str> = revoked
        .iter()
        .map(|r| r["token"].as_str().unwrap())
        .collect();
    named.sort_unstable();
    let mut expected: Vec<&str> = tokens.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(named, expected, "{json}");
    for slot in revoked {
        let by = &slot["revoked"];
        assert_eq!(by["reason"], "INC-9: stuck", "{json}");
        assert_eq!(by["by"]["host"], hostname().as_str(), "{json}");
        assert_eq!(by["revoked"][0]["token"], slot["token"], "{json}");
        assert!(by["at_ms"].as_u64().unwrap() < by["until_ms"].as_u64().unwrap());
        assert_eq!(slot["masters"], 3, "{json}");
    }
    assert_eq!(json["masters"][0]["slots"][0]["revoked"], true, "{json}");
    // Released with its token, each revoked slot frees: the semaphore is empty.
    for token in &tokens {
        cluster.release("shown", token);
    }
    assert!(slots_on(&cluster, 0, "shown").is_empty());
}

#[test]
fn a_force_is_told_on_the_release_channel_for_the_lock_and_for_slots() {
    let cluster = Cluster::start(3);
    // A slot holder, and a lock's holder: each force that revokes is published, so that
    // `status --watch` hears it at once rather than at its next read.
    acquire_slot(&cluster, "told-slots");
    cluster.acquire("told-lock", &["--ttl", "30s"]);
    for key in ["told-slots", "told-lock"] {
        let client = redis::Client::open(cluster.urls()[0].as_str()).unwrap();
        let mut connection = client.get_connection().unwrap();
        let mut pubsub = connection.as_pubsub();
        let channel = redlock_cli::lock::keys::released_channel(key);
        pubsub.subscribe(&channel).unwrap();
        pubsub
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let forced = force(&cluster, key, "told");
        assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
        let notice = pubsub
            .get_message()
            .expect("a notice on the release channel");
        assert_eq!(notice.get_channel_name(), channel);
    }
}
