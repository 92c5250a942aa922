//! The exit-code table lives in `src/exit.rs` ([`exit::TABLE`]); `--help` and the man page are
//! generated from it, README.md is written by hand. Each must list every code, and README no
//! code that is not in the table.

use crate::common;

use redlock_cli::exit::{self, Codes};

/// The cells of each row of README's "## Exit codes" table: code, meaning, example.
fn readme_rows() -> Vec<Vec<String>> {
    let readme = include_str!("../README.md");
    let section = readme
        .split("\n## Exit codes\n")
        .nth(1)
        .expect("README.md has an \"## Exit codes\" section");
    section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2) // header and separator
        .map(|line| {
            let line = line.trim().trim_start_matches('|').trim_end_matches('|');
            // No cell holds a `|` of its own (the examples avoid pipes for this reason).
            line.split('|')
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect()
}

/// The first cell of each row of README's "## Exit codes" table.
fn readme_codes() -> Vec<String> {
    readme_rows()
        .into_iter()
        .map(|row| row[0].clone())
        .collect()
}

/// The numbers in a README cell such as `0 / 1 / 2` or `126`.
fn numbers(cell: &str) -> Vec<i32> {
    cell.split(|c: char| !c.is_ascii_digit() && c != '+')
        .filter_map(|word| word.parse().ok())
        .collect()
}

#[test]
fn readme_lists_every_exit_code_and_no_other() {
    let cells = readme_codes();
    assert!(!cells.is_empty(), "README's exit-code table is empty");
    let documented: Vec<i32> = cells.iter().flat_map(|cell| numbers(cell)).collect();
    let mut in_table = Vec::new();
    for (codes, meaning) in exit::TABLE {
        match codes {
            Codes::Child => assert!(
                cells.iter().any(|c| c.starts_with("the command's")),
                "README does not document the command's own status: {cells:?}"
            ),
            Codes::Signal => assert!(
                cells.iter().any(|c| c == "128+N"),
                "README does not document 128+N: {cells:?}"
            ),
            Codes::Fixed(list) => {
                for code in *list {
                    assert!(
                        documented.contains(code),
                        "README's exit-code table lacks {code} ({meaning}): {cells:?}"
                    );
                    in_table.push(*code);
                }
            }
        }
    }
    for code in documented {
        assert!(
            in_table.contains(&code),
            "README documents exit code {code}, which src/exit.rs's TABLE does not list"
        );
    }
}

#[test]
fn help_and_man_page_list_every_exit_code() {
    let output = common::redlock().arg("--help").output().unwrap();
    assert!(output.status.success(), "{}", common::describe(&output));
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(help.contains(&exit::help_table()), "{help}");

    let output = common::redlock().arg("man").output().unwrap();
    assert!(output.status.success(), "{}", common::describe(&output));
    let man = String::from_utf8(output.stdout).unwrap();
    assert!(man.contains(&exit::man_section()), "{man}");
    for (codes, _) in exit::TABLE {
        if let Codes::Fixed(list) = codes {
            for code in *list {
                assert!(
                    man.contains(&format!("\\fB{code}\\fR")),
                    "{code} not in the man page"
                );
            }
        }
    }
}

/// The shell command in an example cell: the text between its first pair of backquotes.
fn example_command(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let end = cell[start..].find('`')? + start;
    Some(&cell[start..end])
}

/// Every row's example, run as written by `sh` against a fresh master with no password (named
/// by REDLOCK_SERVERS, and by a `redis-cli` that talks to it), exits with a code of its row.
#[test]
fn every_example_in_the_readme_table_exits_with_its_code() {
    let cluster = common::Cluster::start(1);
    let server = &cluster.servers[0];
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let bin_dir = std::path::Path::new(crate::common::redlock_binary())
        .parent()
        .unwrap()
        .to_path_buf();
    // A `redis-cli` first on PATH that talks to the test's master.
    let tools = tempfile::tempdir().unwrap();
    let wrapper = tools.path().join("redis-cli");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nPATH=\"${{PATH#*:}}\" exec redis-cli -p {port} \"$@\" >/dev/null\n"),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{}",
        tools.path().display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let rows = readme_rows();
    assert_eq!(
        rows.len(),
        exit::TABLE.len(),
        "one README row per code: {rows:?}"
    );
    let mut wrong = Vec::new();
    for row in &rows {
        let command = example_command(row.get(2).map_or("", String::as_str))
            .unwrap_or_else(|| panic!("README's exit-code row {:?} has no example", row[0]));
        let expected: Vec<i32> = if row[0].starts_with("the command's") {
            let status = command
                .split("exit ")
                .nth(1)
                .expect("an `exit N` in the example");
            vec![status.trim_end_matches('\'').parse().unwrap()]
        } else if row[0] == "128+N" {
            assert!(command.contains("kill -TERM"), "{command}");
            vec![128 + libc::SIGTERM]
        } else {
            numbers(&row[0])
        };
        let _: String = redis::cmd("FLUSHALL")
            .query(&mut server.connection())
            .unwrap();
        let output = common::redlock_env(std::process::Command::new("sh"))
            .args(["-c", command])
            .env("PATH", &path)
            .env("REDLOCK_SERVERS", server.url())
            .output()
            .unwrap();
        let code = output.status.code().unwrap_or(-1);
        if !expected.contains(&code) {
            wrong.push(format!(
                "README's example for {:?} exits {code}, not {expected:?}: {command}\n{}",
                row[0],
                common::describe(&output)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
