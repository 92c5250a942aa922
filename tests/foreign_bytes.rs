//! What another client of the masters wrote never reaches the terminal raw: escape sequences,
//! other control characters and Unicode's bidirectional controls, written by a foreign client
//! into a lock's name, its token, its holder record (its note too), its queue's entries and a
//! stray key, are shown escaped by `status`, `list` and `list --problems`, in text and in JSON,
//! checked byte by byte; and the JSON still carries the exact text.

use std::process::Output;

use crate::common::{Cluster, Server, describe, now_ms};
use serde_json::{Value, json};

/// Clears the screen, retitles the terminal, rings, fakes a line, and then reads right to
/// left: everything a hostile writer would try.
const HOSTILE: &str = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nfake line\u{7f}\u{9b}1m\u{202e}exe.txt\u{2066}\u{200f}\u{feff}\u{e0041}y";

/// The lock's name as the foreign client wrote it.
const KEY: &str = "evil\u{1b}[31m\u{202e}lock";

/// Whether `c` may appear in output: the test's own copy of the rule (a newline ends a line).
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// Checks every character of `output`'s stdout and stderr, and returns stdout.
fn clean_stdout(output: &Output, what: &str) -> String {
    for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let text = std::str::from_utf8(bytes)
            .unwrap_or_else(|e| panic!("{what}: {stream} is not UTF-8 ({e}): {bytes:?}"));
        if let Some((at, c)) = text.char_indices().find(|(_, c)| forbidden(*c)) {
            panic!("{what}: raw {c:?} at byte {at} of {stream}: {text:?}");
        }
    }
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn name(kind: &str, key: &str) -> String {
    format!("__redlock:{{{key}}}:{kind}:{key}")
}

fn redis(server: &Server, args: &[&str]) {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    let _: redis::Value = command
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
}

fn record(token: Option<&str>, since_ms: u64) -> String {
    let mut record = json!({
        "host": HOSTILE, "pid": 7, "user": HOSTILE, "command": HOSTILE, "since_ms": since_ms,
        "note": HOSTILE,
    });
    if let Some(token) = token {
        record["token"] = Value::from(token);
    }
    record.to_string()
}

/// Writes, as a foreign client would, lock `KEY` held with a hostile token and record, two
/// live waiters (one with a record, one without) and a lapsed one, on every master; and a
/// stray key without a TTL on the first.
fn write_hostile(cluster: &Cluster) -> (String, String, String) {
    let token = format!("t{HOSTILE}");
    let named = format!("w1{HOSTILE}");
    let anonymous = format!("w2{HOSTILE}");
    let lapsed = format!("w0{HOSTILE}");
    let now = now_ms();
    for server in &cluster.servers {
        redis(server, &["SET", KEY, &token, "PX", "60000"]);
        let holder = name("holder", KEY);
        redis(
            server,
            &["SET", &holder, &record(Some(&token), now), "PX", "60000"],
        );
        for (ticket, id, lease) in [
            (1, &lapsed, now - 5_000),
            (2, &named, now + 60_000),
            (3, &anonymous, now + 60_000),
        ] {
            redis(
                server,
                &["ZADD", &name("queue", KEY), &ticket.to_string(), id],
            );
            redis(
                server,
                &["ZADD", &name("lease", KEY), &lease.to_string(), id],
            );
        }
        redis(
            server,
            &["HSET", &name("waiters", KEY), &named, &record(None, now)],
        );
        redis(
            server,
            &["HSET", &name("waiters", KEY), &lapsed, &record(None, now)],
        );
        for kind in ["queue", "lease", "waiters"] {
            redis(server, &["PEXPIRE", &name(kind, KEY), "60000"]);
        }
    }
    redis(
        &cluster.servers[0],
        &["SET", &format!("__redlock:{HOSTILE}"), "1"],
    );
    (token, named, anonymous)
}

fn run(cluster: &Cluster, args: &[&str]) -> String {
    let output = cluster.redlock().args(args).output().unwrap();
    let what = format!("redlock {args:?}");
    let stdout = clean_stdout(&output, &what);
    assert!(!stdout.is_empty(), "{what}: {}", describe(&output));
    stdout
}

#[test]
fn status_and_list_show_what_a_foreign_client_wrote_escaped() {
    let cluster = Cluster::start(3);
    let (token, named, anonymous) = write_hostile(&cluster);
    let shown = r"x\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nfake line\u{7f}\u{9b}1m\u{202e}exe.txt";

    let text = run(&cluster, &["status", "--key", KEY]);
    assert!(text.contains(&format!("user {shown}")), "{text}");
    assert!(text.contains(&format!(", for \"{shown}")), "{text}");
    // A token is cut to 8 characters before it is escaped: the escape is whole.
    assert!(text.contains(r"token tx\u{1b}[2J\u{1b}]…"), "{text}");
    assert!(text.contains(r"token w2x\u{1b}[2J\u{1b}…"), "{text}");

    let status: Value = serde_json::from_str(&run(&cluster, &["status", "--key", KEY, "--json"]))
        .expect("status --json is JSON");
    assert_eq!(status["token"], token.as_str());
    assert_eq!(status["holder"]["command"], HOSTILE);
    assert_eq!(status["holder"]["note"], HOSTILE);
    assert_eq!(status["queue"][0]["token"], named.as_str());
    assert_eq!(status["queue"][0]["holder"]["host"], HOSTILE);
    assert_eq!(status["queue"][0]["holder"]["note"], HOSTILE);
    assert_eq!(status["queue"][1]["token"], anonymous.as_str());

    let text = run(&cluster, &["list"]);
    assert!(
        text.contains(r#"lock "evil\u{1b}[31m\u{202e}lock" is held by"#),
        "{text}"
    );
    assert!(text.contains(&format!("user {shown}")), "{text}");
    assert!(text.contains(&format!(", for \"{shown}")), "{text}");
    assert!(text.contains(r"waiter w2x\u{1b}[2J\u{1b}…"), "{text}");

    let list: Value =
        serde_json::from_str(&run(&cluster, &["list", "--json"])).expect("list --json is JSON");
    let lock = &list["locks"][0];
    assert_eq!(lock["key"], KEY);
    assert_eq!(lock["token"], token.as_str());
    assert_eq!(lock["holder"]["user"], HOSTILE);
    assert_eq!(lock["holder"]["note"], HOSTILE);
    assert_eq!(lock["queue"][0]["token"], named.as_str());
    assert_eq!(lock["queue"][1]["token"], anonymous.as_str());

    let text = run(&cluster, &["list", "--problems"]);
    assert!(text.contains(&format!("waiter w0{shown}")), "{text}");
    assert!(text.contains(r"DEL '__redlock:x\u{1b}[2J"), "{text}");
    let list: Value = serde_json::from_str(&run(&cluster, &["list", "--problems", "--json"]))
        .expect("list --problems --json is JSON");
    let stray = format!("__redlock:{HOSTILE}");
    let names: Vec<&str> = list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["redis_key"].as_str().unwrap())
        .collect();
    assert!(names.contains(&stray.as_str()), "{names:?}");
}
