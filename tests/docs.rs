//! What the README, the man pages and `--help` promise about options and durability, where a
//! user looks for it.

mod common;

/// The README section that starts with `heading` (a `## ` line), up to the next one.
fn readme_section(heading: &str) -> &'static str {
    let readme = include_str!("../README.md");
    let start = readme
        .find(&format!("\n## {heading}"))
        .unwrap_or_else(|| panic!("README.md has a \"## {heading}\" section"));
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    &rest[..end]
}

/// `text` with its line breaks (and a man page's hyphen escapes) undone, so that a phrase
/// wrapped over two lines is still found.
fn flat(text: &str) -> String {
    text.replace("\\-", "-")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_limit_range_is_documented_with_limit() {
    let section = flat(readme_section("At most L at once: `--limit`"));
    assert!(
        section.contains("L is a whole number from 1 to 1000"),
        "{section}"
    );
    for command in ["run", "acquire"] {
        let output = common::redlock()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = flat(&String::from_utf8_lossy(&output.stdout));
        let limit = &help[help.find("--limit").expect("--limit in help")..];
        assert!(
            limit.contains("L is 1 to 1000"),
            "{command} --help: {limit}"
        );
        let page = std::fs::read_to_string(format!(
            "{}/man/redlock-{command}.1",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(
            flat(&page).contains("L is 1 to 1000"),
            "man redlock-{command}"
        );
    }
    // What the range refuses says so.
    let output = common::redlock()
        .args(["run", "--key", "k", "--limit", "1001", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains("1..=1000"));
}

#[test]
fn the_durability_advice_covers_fencing_counters() {
    let limits = flat(readme_section("Limits: what Redlock does not promise"));
    let advice = &limits[limits
        .find("A delayed restart does not protect fencing counters")
        .expect("the Limits say what a delayed restart does not protect")..];
    // Why: counters have no TTL, so no delay brings them back.
    assert!(advice.contains("has no TTL"), "{advice}");
    assert!(advice.contains("tokens start again from 1"), "{advice}");
    // What to do instead: persistence, and a resource that remembers.
    assert!(advice.contains("`appendfsync always`"), "{advice}");
    assert!(
        advice.contains("remember the highest token it has seen"),
        "{advice}"
    );
}
