//! `redlock doctor` against real masters: durable masters pass, and each unsafe setup (a
//! replica, key eviction, no persistence, the same server twice, an even or single count, a
//! dead master) is reported at the level `src/doctor.rs` gives it, in text and in JSON.
//!
//! No assertion depends on timings: round trips and clock offsets are only checked for
//! presence. The clock-skew check compares the masters' clocks as measured from here, so on a
//! badly stalled machine it could warn spuriously; the one test that requires "0 warnings"
//! retries when the only warning is that one.

mod common;

use std::process::{Command, Output};

use common::{Cluster, describe};
use serde_json::Value;

/// Masters that keep their keys across a restart: what the README asks for.
const DURABLE: &[&str] = &["--appendonly", "yes", "--appendfsync", "always"];

/// `redlock doctor` against exactly `urls`, given as `-s` flags (no REDLOCK_SERVERS).
fn doctor_on(urls: &[String]) -> Command {
    let mut cmd = common::redlock();
    for url in urls {
        cmd.args(["-s", url]);
    }
    // Generous, so a loaded machine does not turn a live master into an unreachable one; a
    // dead master refuses the connection at once.
    cmd.args(["doctor", "--node-timeout", "5s"]);
    cmd
}

fn output_of(mut cmd: Command) -> Output {
    cmd.output().expect("run redlock doctor")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `redlock doctor --json` against `urls`: the exit code and the parsed report.
fn doctor_json(urls: &[String]) -> (Option<i32>, Value, Output) {
    let mut cmd = doctor_on(urls);
    cmd.arg("--json");
    let output = output_of(cmd);
    let json: Value = serde_json::from_str(stdout(&output).trim()).unwrap_or_else(|e| {
        panic!(
            "doctor --json did not print one JSON object ({e}): {}",
            describe(&output)
        )
    });
    (output.status.code(), json, output)
}

/// The checks in `checks` (a JSON array of {check, level, message}) named `name`.
fn checks_named<'a>(checks: &'a Value, name: &str) -> Vec<&'a Value> {
    checks
        .as_array()
        .expect("checks is an array")
        .iter()
        .filter(|c| c["check"] == name)
        .collect()
}

/// The one check named `name` in `checks`.
fn check<'a>(checks: &'a Value, name: &str) -> &'a Value {
    let found = checks_named(checks, name);
    assert_eq!(found.len(), 1, "expected one {name:?} check in {checks:#}");
    found[0]
}

/// The master entry for `url` in a doctor --json report.
fn master<'a>(json: &'a Value, url: &str) -> &'a Value {
    json["masters"]
        .as_array()
        .expect("masters is an array")
        .iter()
        .find(|m| m["server"] == url)
        .unwrap_or_else(|| panic!("no master {url} in {json:#}"))
}

/// Every check, per master and cluster-wide.
fn all_checks(json: &Value) -> Vec<&Value> {
    let mut all: Vec<&Value> = json["checks"].as_array().unwrap().iter().collect();
    for m in json["masters"].as_array().unwrap() {
        all.extend(m["checks"].as_array().unwrap());
    }
    all
}

/// The checks at `level`, as (check, message) pairs, for assertion messages.
fn at_level(json: &Value, level: &str) -> Vec<(String, String)> {
    all_checks(json)
        .into_iter()
        .filter(|c| c["level"] == level)
        .map(|c| {
            (
                c["check"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The counts in the JSON agree with the checks listed, and `ok` with the error count.
fn assert_consistent(json: &Value) {
    let errors = at_level(json, "error").len() as u64;
    let warnings = at_level(json, "warning").len() as u64;
    assert_eq!(json["errors"], errors, "{json:#}");
    assert_eq!(json["warnings"], warnings, "{json:#}");
    assert_eq!(json["ok"], errors == 0, "{json:#}");
}

/// A reachable master's entry carries what INFO, CONFIG GET and TIME said.
fn assert_reachable_master(entry: &Value) {
    assert_eq!(entry["reachable"], true, "{entry:#}");
    assert_eq!(entry["role"], "master", "{entry:#}");
    let version = entry["version"].as_str().unwrap_or("");
    assert!(
        version
            .split('.')
            .next()
            .is_some_and(|major| major.parse::<u32>().is_ok()),
        "version {version:?}: {entry:#}"
    );
    assert!(entry["run_id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(entry["rtt_ms"].is_number(), "{entry:#}");
    assert!(entry["clock_offset_ms"].is_i64(), "{entry:#}");
    assert_eq!(check(&entry["checks"], "reachable")["level"], "ok");
    assert_eq!(check(&entry["checks"], "role")["level"], "ok");
    assert_eq!(check(&entry["checks"], "version")["level"], "ok");
}

/// True when a clock-skew warning is present: the only finding that depends on timing.
fn clock_warned(json: &Value) -> bool {
    checks_named(&json["checks"], "clock")
        .iter()
        .any(|c| c["level"] == "warning")
}

/// The text report's findings at `level` ("error", "warning"), one line each.
fn findings<'a>(text: &'a str, level: &'a str) -> impl Iterator<Item = &'a str> {
    text.lines()
        .filter(move |l| l.trim_start().starts_with(level))
}

/// The text report's last line: the counts, e.g. "1 error, 0 warnings".
fn summary(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or_default()
}

#[test]
fn durable_masters_pass_every_check() {
    let cluster = Cluster::start_with(3, DURABLE);
    let urls = cluster.urls();

    // JSON. A clock-skew warning can only come from a stalled machine: try again then.
    let mut attempt = 0;
    let (code, json, output) = loop {
        attempt += 1;
        let (code, json, output) = doctor_json(&urls);
        if !clock_warned(&json) || attempt == 3 {
            break (code, json, output);
        }
    };
    assert_eq!(code, Some(0), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], true, "{json:#}");
    assert_eq!(json["errors"], 0, "{json:#}");
    assert_eq!(json["warnings"], 0, "{json:#}");
    assert!(
        String::from_utf8_lossy(&output.stderr).is_empty(),
        "{}",
        describe(&output)
    );
    let masters = json["masters"].as_array().unwrap();
    assert_eq!(masters.len(), 3, "{json:#}");
    for (entry, url) in masters.iter().zip(&urls) {
        // In the order given.
        assert_eq!(entry["server"], url.as_str(), "{json:#}");
        assert_reachable_master(entry);
        assert_eq!(entry["aof_enabled"], true, "{entry:#}");
        assert_eq!(entry["appendfsync"], "always", "{entry:#}");
        assert_eq!(entry["maxmemory_policy"], "noeviction", "{entry:#}");
        for name in ["eviction", "persistence"] {
            assert_eq!(check(&entry["checks"], name)["level"], "ok", "{entry:#}");
        }
    }
    let run_ids: std::collections::HashSet<_> =
        masters.iter().map(|m| m["run_id"].as_str()).collect();
    assert_eq!(run_ids.len(), 3, "{json:#}");
    for name in ["count", "duplicate", "clock"] {
        assert_eq!(check(&json["checks"], name)["level"], "ok", "{json:#}");
    }
    assert!(
        check(&json["checks"], "count")["message"]
            .as_str()
            .unwrap()
            .contains("3 masters"),
        "{json:#}"
    );

    // Text.
    let mut attempt = 0;
    let output = loop {
        attempt += 1;
        let output = output_of(doctor_on(&urls));
        let clock_line_warns =
            findings(&stdout(&output), "warning").any(|l| l.contains("clocks differ"));
        if !clock_line_warns || attempt == 3 {
            break output;
        }
    };
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = stdout(&output);
    assert_eq!(
        summary(&text),
        "0 errors, 0 warnings",
        "{}",
        describe(&output)
    );
    for url in &urls {
        assert!(
            text.lines().any(|l| l == url),
            "no section for {url}: {}",
            describe(&output)
        );
    }
    assert!(text.contains("all masters"), "{}", describe(&output));
    assert!(
        findings(&text, "error")
            .chain(findings(&text, "warning"))
            .next()
            .is_none(),
        "{}",
        describe(&output)
    );
}

#[test]
fn a_replica_among_the_masters_is_an_error() {
    let masters = Cluster::start_with(2, DURABLE);
    let primary_port = masters.servers[0].port.to_string();
    let replica = Cluster::start_with(1, &["--replicaof", "127.0.0.1", &primary_port]);
    let replica_url = replica.servers[0].url();
    let mut urls = masters.urls();
    urls.push(replica_url.clone());

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(1), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], false, "{json:#}");
    let entry = master(&json, &replica_url);
    assert_eq!(entry["reachable"], true, "{entry:#}");
    assert_eq!(entry["role"], "slave", "{entry:#}");
    let role = check(&entry["checks"], "role");
    assert_eq!(role["level"], "error", "{entry:#}");
    assert!(
        role["message"].as_str().unwrap().contains("not a master"),
        "{role:#}"
    );
    // The real masters are fine; the replica is the only error.
    for url in masters.urls() {
        assert_reachable_master(master(&json, &url));
    }
    assert_eq!(
        at_level(&json, "error"),
        [(
            "role".to_string(),
            role["message"].as_str().unwrap().to_string()
        )],
        "{json:#}"
    );

    let output = output_of(doctor_on(&urls));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let text = stdout(&output);
    assert!(
        findings(&text, "error").any(|l| l.contains("not a master")),
        "{}",
        describe(&output)
    );
    assert!(
        summary(&text).starts_with("1 error, "),
        "{}",
        describe(&output)
    );
}

#[test]
fn allkeys_eviction_is_an_error() {
    let durable = Cluster::start_with(2, DURABLE);
    let evicting = Cluster::start_with(
        1,
        &[DURABLE, &["--maxmemory-policy", "allkeys-lru"]].concat(),
    );
    let evicting_url = evicting.servers[0].url();
    let mut urls = durable.urls();
    urls.push(evicting_url.clone());

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(1), "{}", describe(&output));
    assert_consistent(&json);
    let entry = master(&json, &evicting_url);
    assert_reachable_master(entry);
    assert_eq!(entry["maxmemory_policy"], "allkeys-lru", "{entry:#}");
    let eviction = check(&entry["checks"], "eviction");
    assert_eq!(eviction["level"], "error", "{entry:#}");
    assert!(
        eviction["message"]
            .as_str()
            .unwrap()
            .contains("allkeys-lru"),
        "{eviction:#}"
    );
    for url in durable.urls() {
        assert_eq!(
            check(&master(&json, &url)["checks"], "eviction")["level"],
            "ok",
            "{json:#}"
        );
    }
    let errors = at_level(&json, "error");
    assert_eq!(errors.len(), 1, "{json:#}");
    assert_eq!(errors[0].0, "eviction", "{json:#}");
}

#[test]
fn volatile_eviction_is_only_a_warning() {
    let durable = Cluster::start_with(2, DURABLE);
    let evicting = Cluster::start_with(
        1,
        &[DURABLE, &["--maxmemory-policy", "volatile-lru"]].concat(),
    );
    let evicting_url = evicting.servers[0].url();
    let mut urls = durable.urls();
    urls.push(evicting_url.clone());

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(0), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], true, "{json:#}");
    assert_eq!(json["errors"], 0, "{json:#}");
    let entry = master(&json, &evicting_url);
    assert_eq!(entry["maxmemory_policy"], "volatile-lru", "{entry:#}");
    let eviction = check(&entry["checks"], "eviction");
    assert_eq!(eviction["level"], "warning", "{entry:#}");
    assert!(
        eviction["message"]
            .as_str()
            .unwrap()
            .contains("volatile-lru"),
        "{eviction:#}"
    );
    assert!(
        at_level(&json, "warning")
            .iter()
            .any(|(name, _)| name == "eviction"),
        "{json:#}"
    );
}

#[test]
fn masters_without_an_append_only_file_get_a_delayed_restart_warning() {
    // The harness's default: --appendonly no.
    let cluster = Cluster::start(3);
    let urls = cluster.urls();

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(0), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], true, "{json:#}");
    assert_eq!(json["errors"], 0, "{json:#}");
    assert!(json["warnings"].as_u64().unwrap() >= 3, "{json:#}");
    for url in &urls {
        let entry = master(&json, url);
        assert_reachable_master(entry);
        assert_eq!(entry["aof_enabled"], false, "{entry:#}");
        let persistence = check(&entry["checks"], "persistence");
        assert_eq!(persistence["level"], "warning", "{entry:#}");
        assert!(
            persistence["message"]
                .as_str()
                .unwrap()
                .contains("delayed restart"),
            "{persistence:#}"
        );
    }

    let output = output_of(doctor_on(&urls));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = stdout(&output);
    let persistence_warnings = findings(&text, "warning")
        .filter(|l| l.contains("delayed restart"))
        .count();
    assert_eq!(persistence_warnings, 3, "{}", describe(&output));
    assert!(
        summary(&text).starts_with("0 errors, "),
        "{}",
        describe(&output)
    );
}

#[test]
fn the_same_server_under_two_addresses_is_an_error_naming_both() {
    let socket_dir = tempfile::tempdir().unwrap();
    let socket = socket_dir.path().join("r.sock");
    let socket_str = socket.to_str().unwrap();
    let shared = Cluster::start_with(
        1,
        &[
            DURABLE,
            &["--unixsocket", socket_str, "--unixsocketperm", "700"],
        ]
        .concat(),
    );
    let other = Cluster::start_with(1, DURABLE);
    let tcp_url = shared.servers[0].url();
    let unix_url = format!("redis+unix://{socket_str}");
    let urls = vec![tcp_url.clone(), unix_url.clone(), other.servers[0].url()];

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(1), "{}", describe(&output));
    assert_consistent(&json);
    // Both addresses answered, with the same run_id.
    let tcp = master(&json, &tcp_url);
    let unix = master(&json, &unix_url);
    assert_reachable_master(tcp);
    assert_reachable_master(unix);
    assert_eq!(tcp["run_id"], unix["run_id"], "{json:#}");
    let duplicates = checks_named(&json["checks"], "duplicate");
    assert_eq!(duplicates.len(), 1, "{json:#}");
    assert_eq!(duplicates[0]["level"], "error", "{json:#}");
    let message = duplicates[0]["message"].as_str().unwrap();
    assert!(message.contains(&tcp_url), "{message}");
    assert!(message.contains(socket_str), "{message}");
    assert!(
        !message.contains(&other.servers[0].url()),
        "the distinct master is not a duplicate: {message}"
    );
    let errors = at_level(&json, "error");
    assert_eq!(errors.len(), 1, "{json:#}");

    let output = output_of(doctor_on(&urls));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(
        findings(&stdout(&output), "error").any(|l| l.contains(&tcp_url) && l.contains(socket_str)),
        "{}",
        describe(&output)
    );
}

#[test]
fn an_even_or_single_master_count_is_a_warning() {
    let cluster = Cluster::start_with(2, DURABLE);
    let urls = cluster.urls();

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(0), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["errors"], 0, "{json:#}");
    let count = check(&json["checks"], "count");
    assert_eq!(count["level"], "warning", "{json:#}");
    assert!(
        count["message"].as_str().unwrap().contains("2 masters"),
        "{count:#}"
    );

    let (code, json, output) = doctor_json(&urls[..1]);
    assert_eq!(code, Some(0), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["errors"], 0, "{json:#}");
    assert_eq!(json["masters"].as_array().unwrap().len(), 1, "{json:#}");
    let count = check(&json["checks"], "count");
    assert_eq!(count["level"], "warning", "{json:#}");
    assert!(
        count["message"].as_str().unwrap().contains("1 master"),
        "{count:#}"
    );

    let output = output_of(doctor_on(&urls[..1]));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        findings(&stdout(&output), "warning").any(|l| l.contains("1 master")),
        "{}",
        describe(&output)
    );
}

#[test]
fn a_dead_master_is_an_error_and_the_others_are_still_checked() {
    let mut cluster = Cluster::start_with(3, DURABLE);
    let urls = cluster.urls();
    cluster.server(1).kill();

    let (code, json, output) = doctor_json(&urls);
    assert_eq!(code, Some(1), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], false, "{json:#}");
    assert_eq!(json["masters"].as_array().unwrap().len(), 3, "{json:#}");

    let dead = master(&json, &urls[1]);
    assert_eq!(dead["reachable"], false, "{dead:#}");
    assert!(dead["role"].is_null(), "{dead:#}");
    let reachable = check(&dead["checks"], "reachable");
    assert_eq!(reachable["level"], "error", "{dead:#}");
    assert!(
        reachable["message"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{reachable:#}"
    );

    for url in [&urls[0], &urls[2]] {
        let entry = master(&json, url);
        assert_reachable_master(entry);
        assert_eq!(entry["aof_enabled"], true, "{entry:#}");
        assert_eq!(entry["appendfsync"], "always", "{entry:#}");
        assert_eq!(
            check(&entry["checks"], "persistence")["level"],
            "ok",
            "{entry:#}"
        );
    }
    let errors = at_level(&json, "error");
    assert_eq!(errors.len(), 1, "{json:#}");
    assert_eq!(errors[0].0, "reachable", "{json:#}");

    let output = output_of(doctor_on(&urls));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let text = stdout(&output);
    assert!(
        findings(&text, "error").any(|l| l.contains("unreachable")),
        "{}",
        describe(&output)
    );
    assert!(
        summary(&text).starts_with("1 error, "),
        "{}",
        describe(&output)
    );
}
