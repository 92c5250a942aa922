//! The completions and man pages under completions/ and man/ are generated from the clap
//! definitions; this fails when they were not regenerated after a change to the options.

mod common;

use std::path::Path;

fn generated(args: &[&str]) -> String {
    let output = common::redlock().args(args).output().expect("run redlock");
    assert!(output.status.success(), "{}", common::describe(&output));
    String::from_utf8(output.stdout).expect("utf-8")
}

fn check(path: &str, args: &[&str]) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let checked_in = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{path}: {e}; run scripts/regenerate"));
    assert!(
        checked_in == generated(args),
        "{path} is out of date with the command-line definitions: run scripts/regenerate"
    );
}

#[test]
fn completions_are_up_to_date() {
    for (path, shell) in [
        ("completions/redlock.bash", "bash"),
        ("completions/_redlock", "zsh"),
        ("completions/redlock.fish", "fish"),
        ("completions/redlock.elv", "elvish"),
        ("completions/_redlock.ps1", "powershell"),
    ] {
        check(path, &["completions", shell]);
    }
}

#[test]
fn man_pages_are_up_to_date_and_document_exit_codes() {
    check("man/redlock.1", &["man"]);
    for page in [
        "run",
        "acquire",
        "release",
        "extend",
        "status",
        "doctor",
        "config",
        "completions",
        "man",
    ] {
        check(&format!("man/redlock-{page}.1"), &["man", page]);
    }
    let main = generated(&["man"]);
    for code in ["64", "69", "70", "75", "78", "124", "126", "127"] {
        assert!(
            main.contains(&format!("\\fB{code}\\fR")),
            "exit code {code} undocumented"
        );
    }
}
