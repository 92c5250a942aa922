//! `redlock doctor` against real masters: durable masters pass, and each unsafe setup (a
//! replica, key eviction, no persistence, the same server twice, an even or single count, a
//! dead master) is reported at the level `src/commands/doctor/` gives it, in text and in JSON.
//!
//! No assertion depends on timings: round trips and clock offsets are only checked for
//! presence. The clock-skew check compares the masters' clocks as measured from here, so on a
//! badly stalled machine it could warn spuriously; the one test that requires "0 warnings"
//! retries when the only warning is that one.

use crate::common;

use std::process::{Command, Output};

use crate::common::{Cluster, Server, describe};
use serde_json::Value;

/// Masters that keep their keys across a restart: what the manual asks for
/// (docs/guarantees-and-limits.md).
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

// Every unsafe setup has the same shape: start masters, run `doctor --json`, find the one
// finding the setup must cause at the level it must have, check that nothing else is an error,
// then run the text report and find the same finding there. The table below gives, per test,
// the setup, the check and its level, what its message must say, and the facts particular to
// the row; `verify` makes every other assertion.

/// One unsafe setup and what doctor must say about it.
struct Case {
    /// Starts the masters (and anything else the case needs).
    setup: fn() -> Setup,
    /// The check that must report the setup (`check` in the JSON).
    check: &'static str,
    /// Its level: "error" (exit 1) or "warning" (exit 0).
    level: &'static str,
    /// What its message must contain, in the JSON and on its line of the text report.
    says: &'static [&'static str],
    /// The row's own assertions on the JSON report.
    also: fn(&Setup, &Value),
}

/// The masters of one case, alive while it runs.
struct Setup {
    urls: Vec<String>,
    /// The masters (indexes into `urls`) whose entries carry the finding; empty when it is a
    /// cluster-wide check. Every other master must pass as a reachable master.
    on: Vec<usize>,
    /// Message fragments known only once the masters run (their addresses).
    says: Vec<String>,
    /// What the message must not contain.
    not_says: Vec<String>,
    _masters: Vec<Cluster>,
    _dir: Option<tempfile::TempDir>,
}

impl Setup {
    fn new(masters: Vec<Cluster>, on: Vec<usize>) -> Setup {
        Setup {
            urls: masters.iter().flat_map(Cluster::urls).collect(),
            on,
            says: Vec::new(),
            not_says: Vec::new(),
            _masters: masters,
            _dir: None,
        }
    }
}

/// One test per row: test name, then the case.
macro_rules! doctor_cases {
    ($($name:ident: $case:expr;)*) => {
        $(
            #[test]
            fn $name() {
                verify($case);
            }
        )*
    };
}

doctor_cases! {
    a_replica_among_the_masters_is_an_error: Case {
        setup: a_replica_third, check: "role", level: "error", says: &["not a master"],
        also: replica_facts,
    };
    allkeys_eviction_is_an_error: Case {
        setup: an_allkeys_lru_third, check: "eviction", level: "error", says: &["allkeys-lru"],
        also: allkeys_facts,
    };
    volatile_eviction_is_only_a_warning: Case {
        setup: a_volatile_lru_third, check: "eviction", level: "warning", says: &["volatile-lru"],
        also: volatile_facts,
    };
    masters_without_an_append_only_file_get_a_delayed_restart_warning: Case {
        setup: three_without_aof, check: "persistence", level: "warning",
        says: &["delayed restart"], also: no_aof_facts,
    };
    the_same_server_under_two_addresses_is_an_error_naming_both: Case {
        setup: one_server_under_two_addresses, check: "duplicate", level: "error", says: &[],
        also: same_server_facts,
    };
    an_even_master_count_is_a_warning: Case {
        setup: two_masters, check: "count", level: "warning", says: &["2 masters"],
        also: nothing_else,
    };
    a_single_master_is_a_warning: Case {
        setup: one_master, check: "count", level: "warning", says: &["1 master"],
        also: nothing_else,
    };
    a_dead_master_is_an_error_and_the_others_are_still_checked: Case {
        setup: the_second_of_three_dead, check: "reachable", level: "error", says: &["unreachable"],
        also: dead_facts,
    };
}

/// What every row asserts, in JSON and in text.
fn verify(case: Case) {
    let setup = (case.setup)();
    let urls = &setup.urls;
    let is_error = case.level == "error";
    let says: Vec<String> = case
        .says
        .iter()
        .map(|s| s.to_string())
        .chain(setup.says.iter().cloned())
        .collect();

    let (code, json, output) = doctor_json(urls);
    let expected_code = if is_error { 1 } else { 0 };
    assert_eq!(code, Some(expected_code), "{}", describe(&output));
    assert_consistent(&json);
    assert_eq!(json["ok"], !is_error, "{json:#}");
    assert_eq!(
        json["masters"].as_array().unwrap().len(),
        urls.len(),
        "{json:#}"
    );
    let found: Vec<&Value> = if setup.on.is_empty() {
        vec![check(&json["checks"], case.check)]
    } else {
        setup
            .on
            .iter()
            .map(|&i| check(&master(&json, &urls[i])["checks"], case.check))
            .collect()
    };
    for finding in &found {
        assert_eq!(finding["level"], case.level, "{json:#}");
        let message = finding["message"].as_str().unwrap();
        for fragment in &says {
            assert!(
                message.contains(fragment.as_str()),
                "{fragment:?}: {finding:#}"
            );
        }
        for fragment in &setup.not_says {
            assert!(
                !message.contains(fragment.as_str()),
                "{fragment:?}: {finding:#}"
            );
        }
    }
    let named: Vec<(String, String)> = found
        .iter()
        .map(|f| {
            (
                case.check.to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    if is_error {
        // The finding is the only error.
        assert_eq!(at_level(&json, "error"), named, "{json:#}");
    } else {
        assert_eq!(json["errors"], 0, "{json:#}");
        let warnings = at_level(&json, "warning");
        for finding in &named {
            assert!(warnings.contains(finding), "{finding:?}: {json:#}");
        }
    }
    for (i, url) in urls.iter().enumerate() {
        if !setup.on.contains(&i) {
            assert_reachable_master(master(&json, url));
        }
    }
    (case.also)(&setup, &json);

    let output = output_of(doctor_on(urls));
    assert_eq!(
        output.status.code(),
        Some(expected_code),
        "{}",
        describe(&output)
    );
    let text = stdout(&output);
    let lines = findings(&text, case.level)
        .filter(|line| says.iter().all(|fragment| line.contains(fragment.as_str())))
        .count();
    assert_eq!(lines, found.len(), "{}", describe(&output));
    let errors = if is_error { found.len() } else { 0 };
    let counted = format!("{errors} error{}, ", if errors == 1 { "" } else { "s" });
    assert!(
        summary(&text).starts_with(&counted),
        "{}",
        describe(&output)
    );
}

/// Two durable masters, and a third started with `extra` arguments.
fn a_third_with(extra: &[&str]) -> Setup {
    let durable = Cluster::start_with(2, DURABLE);
    let third = Cluster::start_with(1, &[DURABLE, extra].concat());
    Setup::new(vec![durable, third], vec![2])
}

fn a_replica_third() -> Setup {
    let masters = Cluster::start_with(2, DURABLE);
    let primary_port = masters.servers[0].port.to_string();
    let replica = Cluster::start_with(1, &["--replicaof", "127.0.0.1", &primary_port]);
    Setup::new(vec![masters, replica], vec![2])
}

fn replica_facts(setup: &Setup, json: &Value) {
    let entry = master(json, &setup.urls[2]);
    assert_eq!(entry["reachable"], true, "{entry:#}");
    assert_eq!(entry["role"], "slave", "{entry:#}");
}

fn an_allkeys_lru_third() -> Setup {
    a_third_with(&["--maxmemory-policy", "allkeys-lru"])
}

fn allkeys_facts(setup: &Setup, json: &Value) {
    let entry = master(json, &setup.urls[2]);
    assert_reachable_master(entry);
    assert_eq!(entry["maxmemory_policy"], "allkeys-lru", "{entry:#}");
    for url in &setup.urls[..2] {
        assert_eq!(
            check(&master(json, url)["checks"], "eviction")["level"],
            "ok",
            "{json:#}"
        );
    }
}

fn a_volatile_lru_third() -> Setup {
    a_third_with(&["--maxmemory-policy", "volatile-lru"])
}

fn volatile_facts(setup: &Setup, json: &Value) {
    let entry = master(json, &setup.urls[2]);
    assert_eq!(entry["maxmemory_policy"], "volatile-lru", "{entry:#}");
}

fn three_without_aof() -> Setup {
    // The harness's default: --appendonly no.
    Setup::new(vec![Cluster::start(3)], vec![0, 1, 2])
}

fn no_aof_facts(setup: &Setup, json: &Value) {
    assert!(json["warnings"].as_u64().unwrap() >= 3, "{json:#}");
    for url in &setup.urls {
        let entry = master(json, url);
        assert_reachable_master(entry);
        assert_eq!(entry["aof_enabled"], false, "{entry:#}");
    }
}

/// A master reached over TCP and over a unix socket, and a distinct one.
fn one_server_under_two_addresses() -> Setup {
    let socket_dir = tempfile::tempdir().unwrap();
    let socket = socket_dir.path().join("r.sock");
    let socket_str = socket.to_str().unwrap().to_string();
    let shared = Cluster::start_with(
        1,
        &[
            DURABLE,
            &["--unixsocket", &socket_str, "--unixsocketperm", "700"],
        ]
        .concat(),
    );
    let other = Cluster::start_with(1, DURABLE);
    let tcp_url = shared.servers[0].url();
    let other_url = other.servers[0].url();
    let mut setup = Setup::new(vec![shared, other], Vec::new());
    setup.urls = vec![
        tcp_url.clone(),
        format!("redis+unix://{socket_str}"),
        other_url.clone(),
    ];
    // The duplicate names both addresses, and not the distinct master.
    setup.says = vec![tcp_url, socket_str];
    setup.not_says = vec![other_url];
    setup._dir = Some(socket_dir);
    setup
}

fn same_server_facts(setup: &Setup, json: &Value) {
    // Both addresses answered, with the same run_id.
    let tcp = master(json, &setup.urls[0]);
    let unix = master(json, &setup.urls[1]);
    assert_eq!(tcp["run_id"], unix["run_id"], "{json:#}");
}

fn two_masters() -> Setup {
    Setup::new(vec![Cluster::start_with(2, DURABLE)], Vec::new())
}

fn one_master() -> Setup {
    Setup::new(vec![Cluster::start_with(1, DURABLE)], Vec::new())
}

fn nothing_else(_: &Setup, _: &Value) {}

fn the_second_of_three_dead() -> Setup {
    let mut cluster = Cluster::start_with(3, DURABLE);
    cluster.server(1).kill();
    Setup::new(vec![cluster], vec![1])
}

fn dead_facts(setup: &Setup, json: &Value) {
    let dead = master(json, &setup.urls[1]);
    assert_eq!(dead["reachable"], false, "{dead:#}");
    assert!(dead["role"].is_null(), "{dead:#}");
    for url in [&setup.urls[0], &setup.urls[2]] {
        let entry = master(json, url);
        assert_eq!(entry["aof_enabled"], true, "{entry:#}");
        assert_eq!(entry["appendfsync"], "always", "{entry:#}");
        assert_eq!(
            check(&entry["checks"], "persistence")["level"],
            "ok",
            "{entry:#}"
        );
    }
}

/// A master that answers INFO with an error reply (Redis 6.2 refuses INFO with several
/// sections, "ERR syntax error"; here INFO is renamed away) was reached: doctor says what it
/// answered, not "unreachable", and its JSON says it is reachable.
#[test]
fn a_master_that_answers_info_with_an_error_is_not_unreachable() {
    let server = Server::start_inner(&["--rename-command", "INFO", ""], None);
    let (code, json, output) = doctor_json(&[server.url()]);
    assert_eq!(code, Some(1), "{}", describe(&output));
    let reached = master(&json, &server.url());
    assert_eq!(reached["reachable"], true, "{json:#}");
    let message = check(&reached["checks"], "reachable")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("reachable, but it answered INFO with an error reply")
            && message.contains("unknown command"),
        "{message}"
    );
}
