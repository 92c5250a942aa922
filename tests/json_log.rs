//! `--log-format json`: every line is one JSON object, and the events a machine reader wants
//! carry real fields (event, key, master, elapsed_ms, outcome), not only the message text.

use serde_json::Value;

use crate::common::{Cluster, describe};

fn parse_lines(stderr: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn event<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == name).collect()
}

#[test]
fn json_lines_carry_fields() {
    let mut cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args([
            "--log-format",
            "json",
            "-vv",
            "run",
            "--key",
            "fields",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let lines = parse_lines(&output.stderr);
    for line in &lines {
        assert!(
            line["time"].is_string() && line["level"].is_string(),
            "{line}"
        );
        assert!(line["message"].is_string(), "{line}");
    }
    let acquired = event(&lines, "acquired");
    assert_eq!(acquired.len(), 1, "{lines:#?}");
    assert_eq!(acquired[0]["key"], "fields");
    assert_eq!(acquired[0]["outcome"], "won");
    assert!(acquired[0]["elapsed_ms"].is_number(), "{}", acquired[0]);
    let answers = event(&lines, "answer");
    for url in cluster.urls() {
        assert!(
            answers
                .iter()
                .any(|a| a["master"] == url.as_str() && a["op"] == "acquire"),
            "{url}: {answers:#?}"
        );
    }
    let rounds = event(&lines, "round");
    assert!(
        rounds
            .iter()
            .any(|r| r["op"] == "release" && r["outcome"] == "won")
    );
    assert!(rounds.iter().all(|r| r["elapsed_ms"].is_number()));
    assert_eq!(event(&lines, "started").len(), 1);
    assert_eq!(event(&lines, "released").len(), 1);

    // A failure says its exit code.
    cluster.server(1).kill();
    cluster.server(2).kill();
    let output = cluster
        .redlock()
        .args([
            "--log-format",
            "json",
            "run",
            "--key",
            "fields",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let lines = parse_lines(&output.stderr);
    let failure = event(&lines, "failure");
    assert_eq!(failure.len(), 1, "{lines:#?}");
    assert_eq!(failure[0]["exit_code"], 69);
    assert_eq!(failure[0]["level"], "error");
}
