//! The exit-code table lives in `src/exit.rs` ([`exit::TABLE`]); `--help` and the man page are
//! generated from it, README.md is written by hand. Each must list every code, and README no
//! code that is not in the table.

mod common;

use redlock_cli::exit::{self, Codes};

/// The first cell of each row of README's "## Exit codes" table.
fn readme_codes() -> Vec<String> {
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
            line.split('|')
                .nth(1)
                .unwrap_or_default()
                .trim()
                .to_string()
        })
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
