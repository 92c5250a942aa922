//! Messages name the real cause: a key that holds something else is not "unreachable", a
//! fencing counter of the wrong type is named (not the lock key), the manual page a warning names
//! exists, and a waiter that gave up does not count itself among the waiters.

use crate::common;

use std::process::Output;

use crate::common::{Cluster, Running, describe};

const UNAVAILABLE: i32 = 69;
const CONFLICT: i32 = 75;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs redlock with `args` against `cluster` and checks that it exits with `code`.
fn exits_with(cluster: &Cluster, args: &[&str], code: i32) -> Output {
    let output = cluster.redlock().args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{}", describe(&output));
    output
}

/// `args` on every master of `cluster`, as another client would write them.
fn everywhere(cluster: &Cluster, args: &[&str]) {
    for server in &cluster.servers {
        let _: redis::Value = redis::cmd(args[0])
            .arg(&args[1..])
            .query(&mut server.connection())
            .expect(args[0]);
    }
}

#[test]
fn status_of_a_key_of_another_type_says_so_not_unreachable() {
    let cluster = Cluster::start(3);
    everywhere(&cluster, &["RPUSH", "jobs", "a"]);
    let output = exits_with(&cluster, &["status", "--key", "jobs"], UNAVAILABLE);
    let (text, message) = (stdout(&output), stderr(&output));
    assert!(
        text.starts_with(
            "lock \"jobs\" is unknown: too many masters answered with errors (3 of 3)"
        ),
        "{text}"
    );
    assert!(!text.contains("unreachable"), "{text}");
    assert_eq!(text.matches("WRONGTYPE").count(), 3, "{text}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("answered with errors"), "{message}");
    assert!(!message.contains("unreachable"), "{message}");
    assert!(
        message.contains("WRONGTYPE") && message.contains("holds something that is not a lock"),
        "{message}"
    );
}

/// Issue 47, item 10: `release --force` on a key of another type said "run it again when the
/// masters answer", though every master had answered. It names the key for what it is, with
/// the exit code `run` and `status` give it (69), and does not promise that asking again helps.
#[test]
fn a_force_on_a_key_of_another_type_says_so_not_run_it_again() {
    let cluster = Cluster::start(3);
    everywhere(&cluster, &["HSET", "settings", "f", "v"]);
    everywhere(&cluster, &["RPUSH", "jobs", "a"]);
    for key in ["settings", "jobs"] {
        let output = exits_with(&cluster, &["release", "--force", "--key", key], UNAVAILABLE);
        let message = stderr(&output);
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains(&format!("cannot revoke lock {key:?}"))
                && message.contains("WRONGTYPE")
                && message
                    .contains("a value of another type, written by something other than redlock")
                && message.contains("nothing was revoked"),
            "{message}"
        );
        assert!(!message.contains("when the masters answer"), "{message}");
        assert!(!message.contains("unreachable"), "{message}");
        assert!(stdout(&output).is_empty(), "{}", describe(&output));
    }
}

/// The same, as JSON: a master that answered with an error was reached.
#[test]
fn a_master_that_answered_with_an_error_is_reachable_in_json() {
    let cluster = Cluster::start(3);
    everywhere(&cluster, &["RPUSH", "jobs", "a"]);
    let output = exits_with(
        &cluster,
        &["status", "--key", "jobs", "--json"],
        UNAVAILABLE,
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    for master in json["masters"].as_array().unwrap() {
        assert_eq!(master["reachable"], true, "{json:#}");
        assert!(
            master["error"].as_str().unwrap().contains("WRONGTYPE"),
            "{json:#}"
        );
    }
}

#[test]
fn a_fencing_counter_of_another_type_is_named_not_the_lock_key() {
    let cluster = Cluster::start(3);
    let counter = "__redlock:{fenced}:fence:fenced";
    everywhere(&cluster, &["RPUSH", counter, "a"]);
    everywhere(&cluster, &["PEXPIRE", counter, "60000"]);
    let run = [
        "run", "--fence", "--key", "fenced", "--ttl", "5s", "--", "true",
    ];
    let output = exits_with(&cluster, &run, UNAVAILABLE);
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains(&format!("not a number at {counter}")),
        "{message}"
    );
    assert!(!message.contains("choose another --key"), "{message}");
    assert!(!message.contains("unreachable"), "{message}");
    // The lock itself was taken and given back.
    assert!(cluster.key_gone_everywhere("fenced"));
}

/// Every "see docs/PAGE.md" a warning prints names a page of the manual that exists, and the
/// page speaks of what the warning is about.
#[test]
fn the_semaphore_warning_points_to_a_page_of_the_manual_that_exists() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["acquire", "--key", "pool", "--limit", "2", "--ttl", "10s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let message = stderr(&output);
    let page = message
        .split("see ")
        .nth(1)
        .and_then(|rest| rest.split([')', ' ', ',']).next())
        .filter(|page| page.starts_with("docs/") && page.ends_with(".md"))
        .unwrap_or_else(|| panic!("no page of docs/ named: {message}"));
    let text = common::manual::page(page).text;
    assert!(
        text.contains("**How many masters a holder needs.**"),
        "{page} does not say how many masters a slot needs"
    );
}

/// A waiter that ran out of patience left the line: it is not among the waiters it reports.
#[test]
fn a_waiter_that_gave_up_does_not_count_itself() {
    let cluster = Cluster::start(3);
    for (key, limit) in [("alone", None), ("alone-slots", Some("1"))] {
        let limit: Vec<&str> = limit.map(|l| vec!["--limit", l]).unwrap_or_default();
        let mut holder = Running::start(
            cluster
                .redlock()
                .args(["run", "--key", key, "--ttl", "20s"])
                .args(&limit),
        );
        holder.wait_ready();
        let output = cluster
            .redlock()
            .args(["acquire", "--key", key, "--ttl", "5s", "--wait", "1500ms"])
            .args(&limit)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(CONFLICT),
            "{}",
            describe(&output)
        );
        let message = stderr(&output);
        assert!(message.contains("gave up after waiting"), "{message}");
        assert!(
            !message.contains("queued"),
            "{key}: counted itself: {message}"
        );
        holder.open_gate();
        assert!(holder.wait_output().status.success());
    }
}
