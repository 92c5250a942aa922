//! The completions and man pages under completions/ and man/ are generated from the clap
//! definitions; this fails when they were not regenerated after a change to the options.
//! `scripts/regenerate` runs it with REDLOCK_REGENERATE=1, which rewrites them instead.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use redlock_cli::commands::generate;

fn generated(args: &[&str]) -> String {
    let output = common::redlock().args(args).output().expect("run redlock");
    assert!(output.status.success(), "{}", common::describe(&output));
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn checked_in_completions_and_man_pages_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regenerate = std::env::var_os("REDLOCK_REGENERATE").is_some();
    let files = generate::files();
    for (path, content) in &files {
        let file = root.join(path);
        if regenerate {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, content).unwrap_or_else(|e| panic!("{path}: {e}"));
            continue;
        }
        let checked_in = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{path}: {e}; run scripts/regenerate"));
        assert!(
            &checked_in == content,
            "{path} is out of date with the command-line definitions: run scripts/regenerate"
        );
    }
    // A page left behind by a removed subcommand would document something that is gone.
    let expected: BTreeSet<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
    for dir in ["completions", "man"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = format!("{dir}/{}", entry.unwrap().file_name().to_string_lossy());
            assert!(
                expected.contains(path.as_str()),
                "{path} is not generated any more: delete it"
            );
        }
    }
}

#[test]
fn the_commands_print_what_is_checked_in() {
    let files = generate::files();
    let content = |path: &str| &files.iter().find(|(p, _)| p == path).unwrap().1;
    assert_eq!(
        &generated(&["completions", "bash"]),
        content("completions/redlock.bash")
    );
    assert_eq!(&generated(&["man"]), content("man/redlock.1"));
    assert_eq!(&generated(&["man", "run"]), content("man/redlock-run.1"));
}

#[test]
fn every_subcommand_has_a_page_and_exit_codes_are_documented() {
    let names = generate::subcommands();
    for expected in [
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
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("__")), "{names:?}");
    let main = generate::man_page();
    for code in ["64", "69", "70", "71", "75", "78", "124", "126", "127"] {
        assert!(
            main.contains(&format!("\\fB{code}\\fR")),
            "exit code {code} undocumented"
        );
    }
}

/// The detached renewer that `acquire --renew-while` starts is a hidden subcommand: no help,
/// completion script, man page or error message offers it (tests/workflow.rs runs it).
#[test]
fn the_internal_renewer_is_offered_nowhere() {
    let hidden = [
        "__renew",
        "renew__while",
        "valid-until",
        "valid\\-until",
        "valid_until",
    ];
    for args in [&["--help"][..], &["help"], &["acquire", "--help"]] {
        let help = generated(args);
        for name in hidden {
            assert!(
                !help.contains(name),
                "redlock {args:?} shows {name:?}:\n{help}"
            );
        }
    }
    for (path, content) in generate::files() {
        for name in hidden {
            assert!(!content.contains(name), "{path} offers {name:?}");
        }
    }
    // clap's own "a similar subcommand exists" would name it.
    let output = common::redlock().arg("renew-while").output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(64),
        "{}",
        common::describe(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("__renew"), "{stderr}");
    // Still there for `acquire` to start.
    assert!(generated(&["__renew-while", "--help"]).contains("Usage: redlock __renew-while"));
}
