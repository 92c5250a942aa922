//! `--note`: the holder record says why, or for which job, the lock is held, and everything
//! that names the holder shows it: `status` and `list` (text and JSON), the conflict line, a
//! waiter's progress line and the queue. In a CI job the note is the job's URL unless one is
//! given; `--note ''` gives none; a note too long is refused; a note's bytes are escaped.

use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Cluster, Running, describe};

const USAGE: i32 = 64;
const CONFLICT: i32 = 75;

/// Takes `key` with `acquire` and the extra `args` (and environment `env`), and returns the
/// token.
fn acquire(cluster: &Cluster, key: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let output = cluster
        .redlock()
        .args(["acquire", "--key", key, "--ttl", "30s"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn redlock(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that `output` failed with `code` and said why on one line; returns the line.
fn one_line_failure(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code), "{}", describe(output));
    let line = stderr(output);
    assert_eq!(line.lines().count(), 1, "{line:?}");
    line
}

fn status_json(cluster: &Cluster, key: &str) -> Value {
    let output = redlock(cluster, &["status", "--key", key, "--json"]);
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&output)))
}

/// The note of `key`'s holder, as `status --json` has it.
fn note_of(cluster: &Cluster, key: &str) -> Value {
    status_json(cluster, key)["holder"]["note"].clone()
}

#[test]
fn status_and_list_show_the_note_in_text_and_json() {
    let cluster = Cluster::start(3);
    let note = "deploy of v1.2 (INC-7)";
    acquire(&cluster, "noted", &["--note", note], &[]);
    let shown = format!(", for \"{note}\") for ");

    let text = stdout(&redlock(&cluster, &["status", "--key", "noted"]));
    assert!(text.contains(&shown), "{text}");
    let status = status_json(&cluster, "noted");
    assert_eq!(status["holder"]["note"], note, "{status}");
    for master in status["masters"].as_array().unwrap() {
        assert_eq!(master["holder"]["note"], note, "{status}");
    }

    let text = stdout(&redlock(&cluster, &["list"]));
    assert!(text.contains(&shown), "{text}");
    let list: Value =
        serde_json::from_slice(&redlock(&cluster, &["list", "--json"]).stdout).unwrap();
    assert_eq!(list["locks"][0]["holder"]["note"], note, "{list}");
}

#[test]
fn a_conflict_names_the_holders_note() {
    let cluster = Cluster::start(3);
    acquire(
        &cluster,
        "busy",
        &["--note", "https://ci.example/job/123"],
        &[],
    );
    let output = redlock(&cluster, &["acquire", "--key", "busy", "--no-wait"]);
    let line = one_line_failure(&output, CONFLICT);
    assert!(
        line.contains("is held by ") && line.contains(", for \"https://ci.example/job/123\") for "),
        "{line}"
    );
}

#[test]
fn a_waiter_names_the_holders_note_and_the_queue_shows_the_waiters() {
    let cluster = Cluster::start(3);
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "line", "--note", "first"]),
    );
    holder.wait_ready();
    let mut waiter = Running::start(cluster.redlock().args([
        "-v", "run", "--key", "line", "--wait", "forever", "--note", "second",
    ]));
    assert!(
        waiter.wait_for_stderr(
            "waiting for lock \"line\": held by ",
            Duration::from_secs(10)
        ),
        "{}",
        waiter.stderr_so_far()
    );
    let progress = waiter.stderr_so_far();
    let line = progress
        .lines()
        .find(|l| l.contains("waiting for lock"))
        .unwrap();
    assert!(line.contains(", for \"first\") for "), "{line}");
    // -v says which note this one's record carries, and where it came from.
    assert!(
        progress.contains("the holder record's note is \"second\" (from --note or $REDLOCK_NOTE)"),
        "{progress}"
    );

    let status = status_json(&cluster, "line");
    assert_eq!(status["queue"][0]["holder"]["note"], "second", "{status}");
    let text = stdout(&redlock(&cluster, &["status", "--key", "line"]));
    assert!(text.contains(", for \"second\") for "), "{text}");
    let text = stdout(&redlock(&cluster, &["list"]));
    assert!(text.contains(", for \"second\") waiting for "), "{text}");

    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.wait_ready();
    assert_eq!(note_of(&cluster, "line"), "second");
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}

#[test]
fn the_note_comes_from_redlock_note_unless_given() {
    let cluster = Cluster::start(1);
    acquire(
        &cluster,
        "from-env",
        &[],
        &[("REDLOCK_NOTE", "nightly backup")],
    );
    assert_eq!(note_of(&cluster, "from-env"), "nightly backup");
    acquire(
        &cluster,
        "flag-wins",
        &["--note", "by hand"],
        &[("REDLOCK_NOTE", "nightly backup")],
    );
    assert_eq!(note_of(&cluster, "flag-wins"), "by hand");
    acquire(&cluster, "none", &[], &[]);
    assert_eq!(note_of(&cluster, "none"), Value::Null);
}

/// Variables of a process's environment, by name.
type Vars = &'static [(&'static str, &'static str)];

/// Each CI's variables, as its runner sets them, and the job URL they make.
const CI_JOBS: &[(&str, Vars, &str)] = &[
    (
        "GitHub Actions",
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/shop"),
            ("GITHUB_RUN_ID", "1658821493"),
            ("GITHUB_RUN_ATTEMPT", "1"),
        ],
        "https://github.com/acme/shop/actions/runs/1658821493",
    ),
    (
        "GitLab CI",
        &[
            ("GITLAB_CI", "true"),
            (
                "CI_JOB_URL",
                "https://gitlab.example.com/acme/shop/-/jobs/4242",
            ),
        ],
        "https://gitlab.example.com/acme/shop/-/jobs/4242",
    ),
    (
        "Jenkins",
        &[
            ("JENKINS_URL", "https://jenkins.example.com/"),
            ("BUILD_URL", "https://jenkins.example.com/job/deploy/15/"),
        ],
        "https://jenkins.example.com/job/deploy/15/",
    ),
    (
        "Buildkite",
        &[
            ("BUILDKITE", "true"),
            (
                "BUILDKITE_BUILD_URL",
                "https://buildkite.com/acme/shop/builds/1514",
            ),
        ],
        "https://buildkite.com/acme/shop/builds/1514",
    ),
];

#[test]
fn in_a_ci_job_the_note_is_the_jobs_url() {
    let cluster = Cluster::start(1);
    for (n, (ci, env, url)) in CI_JOBS.iter().enumerate() {
        let key = format!("ci-{n}");
        let output = cluster
            .redlock()
            .args(["-v", "acquire", "--key", &key, "--ttl", "30s"])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(output.status.success(), "{ci}: {}", describe(&output));
        assert_eq!(note_of(&cluster, &key), *url, "{ci}");
        let said = stderr(&output);
        assert!(
            said.contains(&format!("note is \"{url}\" (from {ci} (")),
            "{ci}: {said}"
        );
    }
}

#[test]
fn an_explicit_note_wins_over_the_jobs_url_and_an_empty_one_gives_none() {
    let cluster = Cluster::start(1);
    let (_, github, _) = CI_JOBS[0];
    acquire(&cluster, "explicit", &["--note", "hotfix"], github);
    assert_eq!(note_of(&cluster, "explicit"), "hotfix");
    acquire(&cluster, "off", &["--note", ""], github);
    assert_eq!(note_of(&cluster, "off"), Value::Null);
    let mut env = github.to_vec();
    env.push(("REDLOCK_NOTE", ""));
    acquire(&cluster, "off-by-env", &[], &env);
    assert_eq!(note_of(&cluster, "off-by-env"), Value::Null);
    let text = stdout(&redlock(&cluster, &["status", "--key", "off"]));
    assert!(!text.contains(", for "), "{text}");
}

#[test]
fn a_note_over_256_bytes_is_refused_with_one_line() {
    let cluster = Cluster::start(1);
    let longest = "é".repeat(128);
    acquire(&cluster, "longest", &["--note", &longest], &[]);
    assert_eq!(note_of(&cluster, "longest"), longest.as_str());

    let long = "x".repeat(257);
    for (args, env) in [
        (vec!["acquire", "--key", "long", "--note", &long], None),
        (
            vec!["run", "--key", "long", "--note", &long, "--", "true"],
            None,
        ),
        (
            vec!["acquire", "--key", "long"],
            Some(("REDLOCK_NOTE", &long)),
        ),
    ] {
        let output = cluster.redlock().args(&args).envs(env).output().unwrap();
        let line = one_line_failure(&output, USAGE);
        assert!(
            line.contains("is 257 bytes long: a note holds at most 256 bytes"),
            "{line}"
        );
        assert!(cluster.key_gone_everywhere("long"));
    }
}

#[test]
fn a_notes_control_characters_are_shown_escaped() {
    let cluster = Cluster::start(1);
    let note = "ok\u{1b}[2J\r\nfake line \"quoted\" \u{202e}txt";
    acquire(&cluster, "escaped", &["--note", note], &[]);
    let shown = r#", for "ok\u{1b}[2J\r\nfake line \"quoted\" \u{202e}txt") for "#;
    for args in [&["status", "--key", "escaped"][..], &["list"]] {
        let text = stdout(&redlock(&cluster, args));
        assert!(text.contains(shown), "{args:?}: {text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
    }
    let conflict = one_line_failure(
        &redlock(&cluster, &["acquire", "--key", "escaped"]),
        CONFLICT,
    );
    assert!(conflict.contains(shown), "{conflict}");
    let raw = stdout(&redlock(
        &cluster,
        &["status", "--key", "escaped", "--json"],
    ));
    assert!(
        raw.contains(r"\u001b[2J\r\n") && raw.contains(r"\u202etxt"),
        "{raw}"
    );
    assert_eq!(note_of(&cluster, "escaped"), note);
}

/// A holder record an older redlock wrote (no `note`) reads as before, with no note.
#[test]
fn an_older_record_without_a_note_reads_fine() {
    let cluster = Cluster::start(1);
    let token = acquire(&cluster, "older", &["--note", "replaced"], &[]);
    let record = serde_json::json!({
        "host": "ci-3", "pid": 4412, "user": "ci", "command": "make deploy",
        "since_ms": crate::common::now_ms(), "token": token,
    });
    let holder = "__redlock:{older}:holder:older";
    let _: () = redis::cmd("SET")
        .arg(holder)
        .arg(record.to_string())
        .arg("PX")
        .arg(30_000)
        .query(&mut cluster.servers[0].connection())
        .unwrap();
    let status = status_json(&cluster, "older");
    assert_eq!(status["holder"]["host"], "ci-3", "{status}");
    assert_eq!(status["holder"]["note"], Value::Null, "{status}");
    let text = stdout(&redlock(&cluster, &["status", "--key", "older"]));
    assert!(
        text.contains("ci-3 (pid 4412, user ci, \"make deploy\") for "),
        "{text}"
    );
}
