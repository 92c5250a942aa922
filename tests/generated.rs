//! The completions and man pages under completions/ and man/ are generated from the clap
//! definitions; this fails when they were not regenerated after a change to the options.
//! `scripts/regenerate` runs it with REDLOCK_REGENERATE=1, which rewrites them instead.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use redlock_cli::cli;
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

fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    common::redlock()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run redlock")
}

#[test]
fn help_is_a_subcommand_with_help_of_its_own() {
    // `redlock help --help` was a usage error (64).
    let help = generated(&["help", "--help"]);
    assert!(help.contains("Usage: redlock help [SUBCOMMAND]"), "{help}");
    assert_eq!(generated(&["help"]), generated(&["--help"]));
    for name in cli::SUBCOMMANDS {
        assert_eq!(
            generated(&["help", name]),
            generated(&[name, "--help"]),
            "redlock help {name}"
        );
    }
    let output = run(&["help", "frobnicate"], &[]);
    assert_eq!(
        output.status.code(),
        Some(64),
        "{}",
        common::describe(&output)
    );
}

#[test]
fn help_shows_where_a_value_may_come_from_never_the_value() {
    for env in [
        &[][..],
        &[("REDLOCK_KEY", "a-key-value"), ("REDLOCK_TOKEN", "a-token")],
    ] {
        for name in ["release", "extend"] {
            let help = String::from_utf8(run(&[name, "--help"], env).stdout).unwrap();
            assert!(
                help.contains("[env: REDLOCK_KEY]"),
                "{name} {env:?}: {help}"
            );
            assert!(
                help.contains("[env: REDLOCK_TOKEN]"),
                "{name} {env:?}: {help}"
            );
            for shown in ["REDLOCK_KEY=", "REDLOCK_TOKEN=", "a-key-value", "a-token"] {
                assert!(
                    !help.contains(shown),
                    "{name} {env:?} shows {shown:?}: {help}"
                );
            }
        }
    }
}

/// Each example is in its subcommand's --help as written, one line of the help per line of the
/// example, at the default width (100 without a terminal) and at 80 columns.
#[test]
fn examples_are_never_wrapped() {
    for (name, examples) in cli::EXAMPLES {
        for line in examples.iter().flat_map(|e| e.lines()) {
            assert!(
                line.len() <= 78,
                "{name}: {line:?} is longer than 78 columns"
            );
        }
        if *name == "redlock" {
            continue; // the main page's: in the man page only
        }
        for columns in ["100", "80"] {
            let help =
                String::from_utf8(run(&[name, "--help"], &[("COLUMNS", columns)]).stdout).unwrap();
            // The width was honoured (clap reads COLUMNS).
            assert!(
                help.lines()
                    .all(|l| l.chars().count() <= columns.parse().unwrap()),
                "{name} at {columns} columns:\n{help}"
            );
            let (_, shown) = help
                .split_once("\nExamples:\n")
                .unwrap_or_else(|| panic!("{name}: no examples:\n{help}"));
            let expected: Vec<String> = examples
                .iter()
                .flat_map(|e| e.lines())
                .map(|l| format!("  {l}"))
                .collect();
            assert_eq!(
                shown.lines().collect::<Vec<_>>(),
                expected,
                "{name} at {columns} columns"
            );
        }
    }
}

#[test]
fn man_pages_have_examples_and_no_extra_section() {
    for (path, page) in generate::files() {
        if !path.starts_with("man/") {
            continue;
        }
        assert!(!page.contains(".SH EXTRA"), "{path}");
        // `man redlock` once said "See 'man redlock'".
        assert!(!page.contains("man redlock"), "{path}");
        let name = path
            .trim_start_matches("man/")
            .trim_end_matches(".1")
            .trim_start_matches("redlock-");
        let examples = cli::examples(name);
        assert!(!examples.is_empty(), "{path}");
        let section = page
            .split_once(".SH EXAMPLES\n")
            .unwrap_or_else(|| panic!("{path}: no EXAMPLES"))
            .1;
        let section = section.split(".SH ").next().unwrap();
        for line in examples.iter().flat_map(|e| e.lines()) {
            let roff = line.replace('\\', "\\e").replace('-', "\\-");
            assert!(
                section.lines().any(|l| l == roff),
                "{path}: {roff:?} in\n{section}"
            );
        }
    }
}

const MASTER_OPTIONS: [&str; 6] = [
    "--server",
    "--config",
    "--password-file",
    "--tls-ca-cert",
    "--tls-cert",
    "--tls-key",
];
const OUTPUT_OPTIONS: [&str; 2] = ["--verbose", "--log-format"];

/// Per subcommand: whether it takes the master options, -v and --log-format, and -q.
const WHERE_OPTIONS_APPLY: [(&str, bool, bool, bool); 12] = [
    ("run", true, true, true),
    ("acquire", true, true, true),
    ("release", true, true, false),
    ("extend", true, true, false),
    ("status", true, true, true),
    ("history", true, true, false),
    ("list", true, true, false),
    ("doctor", true, true, false),
    ("config", true, true, false),
    ("completions", false, false, false),
    ("man", false, false, false),
    ("help", false, false, false),
];

/// Whether `help` lists option `flag` (as `  -s, --server <URL>` or `      --config <PATH>`).
fn lists(help: &str, flag: &str) -> bool {
    help.lines().map(str::trim_start).any(|line| {
        let named = line
            .strip_prefix(flag)
            .or_else(|| line.get(4..)?.strip_prefix(flag));
        named.is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '.']))
    })
}

/// The options a subcommand takes are the ones that mean something to it: listed in its help,
/// its man page and its completions, and accepted before or after its name; the others are
/// listed nowhere for it and refused (64) even before its name, where they once were silently
/// ignored.
#[test]
fn subcommands_take_only_the_options_that_apply() {
    assert_eq!(
        WHERE_OPTIONS_APPLY.map(|(name, ..)| name),
        cli::SUBCOMMANDS,
        "one row per subcommand"
    );
    let files = generate::files();
    let file = |path: &str| &files.iter().find(|(p, _)| p == path).unwrap().1;
    let bash = file("completions/redlock.bash");
    let fish = file("completions/redlock.fish");
    for (name, masters, output, quiet) in WHERE_OPTIONS_APPLY {
        let help = generated(&[name, "--help"]);
        let page = file(&format!("man/redlock-{name}.1"));
        // bash: the words offered after `redlock NAME`.
        let offered = bash
            .split_once(&format!("redlock__subcmd__{name})\n"))
            .and_then(|(_, rest)| rest.lines().next())
            .unwrap_or_else(|| panic!("no bash case for {name}"));
        let groups = [
            (&MASTER_OPTIONS[..], masters),
            (&OUTPUT_OPTIONS[..], output),
            (&["--quiet"][..], quiet),
        ];
        for (flags, applies) in groups {
            for flag in flags {
                let ctx = format!("{name} {flag}");
                assert_eq!(lists(&help, flag), applies, "{ctx} in --help:\n{help}");
                let in_page = page.contains(&format!("\\fB{}\\fR", flag.replace('-', "\\-")));
                assert_eq!(in_page, applies, "{ctx} in the man page");
                let in_bash = offered.split([' ', '"']).any(|word| word == *flag);
                assert_eq!(in_bash, applies, "{ctx} in bash: {offered}");
                let long = flag.trim_start_matches("--");
                let in_fish = fish.lines().any(|line| {
                    line.contains(&format!("__fish_redlock_using_subcommand {name}\""))
                        && line.contains(&format!(" -l {long} "))
                });
                assert_eq!(in_fish, applies, "{ctx} in fish");
            }
        }
    }
    // Before the subcommand, as after it.
    let misplaced: [&[&str]; 4] = [
        &["-q", "completions", "bash"],
        &["-s", "redis://127.0.0.1:1", "man"],
        &["-v", "help"],
        &["-q", "doctor"],
    ];
    for args in misplaced {
        let output = run(args, &[]);
        assert_eq!(
            output.status.code(),
            Some(64),
            "{args:?}: {}",
            common::describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("does not apply to"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}

/// What the generated bash completion offers for the command line `words` (the last one being
/// completed), without bash-completion loaded; `setup` runs first (e.g. stubs of its helpers).
/// The script is sourced in a real bash, and redlock's completion function is called the way
/// bash calls it.
fn bash_offers(words: &[&str], setup: &str, dir: &Path) -> Vec<String> {
    let script = dir.join("redlock.bash");
    std::fs::write(&script, generated(&["completions", "bash"])).unwrap();
    let driver = r#"
        source "$1"; shift
        SETUP
        COMP_WORDS=("$@")
        COMP_CWORD=$(( $# - 1 ))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        function=$(complete -p redlock | sed -E 's/.* -F ([^ ]+) .*/\1/')
        "$function" redlock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\n' "${COMPREPLY[@]}"
    "#
    .replace("SETUP", setup);
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(driver)
        .arg("bash")
        .arg(&script)
        .args(words)
        .current_dir(dir)
        .output()
        .expect("run bash");
    assert!(output.status.success(), "{}", common::describe(&output));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_the_command_after_run_and_double_dash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("decoy-file"), "").unwrap();
    let offers = |words: &[&str]| bash_offers(words, "", dir.path());

    // The command, then its arguments (here file names).
    let offered = offers(&["redlock", "run", "--key", "k", "--", "ech"]);
    assert!(offered.iter().any(|w| w == "echo"), "{offered:?}");
    let offered = offers(&[
        "redlock",
        "-s",
        "redis://h:1",
        "run",
        "--key",
        "k",
        "--",
        "",
    ]);
    assert!(offered.iter().any(|w| w == "echo"), "{offered:?}");
    let offered = offers(&["redlock", "run", "--key", "k", "--", "cat", "deco"]);
    assert_eq!(offered, ["decoy-file"]);
    // Before `--`, redlock's own options, as before.
    assert_eq!(offers(&["redlock", "run", "--ke"]), ["--key"]);
    // With bash-completion loaded, its own routine takes over, from the command's word.
    for helper in ["_command_offset", "_comp_command_offset"] {
        let stub = format!("{helper}() {{ COMPREPLY=(\"{helper} $1\"); }}");
        let words = ["redlock", "run", "-k", "k", "--", "make", "ins"];
        assert_eq!(
            bash_offers(&words, &stub, dir.path()),
            [format!("{helper} 5")]
        );
    }
    // `--` elsewhere is not a command line.
    let stub = "_command_offset() { COMPREPLY=(called); }";
    let offered = bash_offers(&["redlock", "doctor", "--", "--js"], stub, dir.path());
    assert_eq!(offered, ["--json"]);
}

#[test]
fn completions_offer_subcommand_names_and_no_file_names_for_a_pid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("decoy-file"), "").unwrap();
    let offers = |words: &[&str]| bash_offers(words, "", dir.path());
    // The values, after the subcommand's own options (-h, -V).
    let values = |words: &[&str]| -> Vec<String> {
        offers(words)
            .into_iter()
            .filter(|w| !w.starts_with('-'))
            .collect()
    };
    assert_eq!(values(&["redlock", "man", ""]), cli::SUBCOMMANDS);
    assert_eq!(values(&["redlock", "help", ""]), cli::SUBCOMMANDS);
    assert_eq!(values(&["redlock", "man", "st"]), ["status"]);
    assert!(offers(&["redlock", "completions", ""]).contains(&"fish".to_string()));
    // A pid, a key, a duration: never a file name (a path option still gets them).
    for words in [
        &["redlock", "acquire", "--renew-while", ""][..],
        &["redlock", "acquire", "--key", ""],
        &["redlock", "run", "--ttl", ""],
    ] {
        let offered = offers(words);
        assert!(
            !offered.iter().any(|w| w.contains("decoy")),
            "{words:?}: {offered:?}"
        );
    }
    assert_eq!(
        offers(&["redlock", "run", "--config", "deco"]),
        ["decoy-file"]
    );

    let files = generate::files();
    let file = |path: &str| &files.iter().find(|(p, _)| p == path).unwrap().1;
    let zsh = file("completions/_redlock");
    let names = cli::SUBCOMMANDS.join(" ");
    assert!(
        zsh.contains(":_cmdambivalent'"),
        "zsh: the command after run"
    );
    assert!(zsh.contains(&format!(":({names})'")), "zsh: man and help");
    assert!(
        zsh.lines()
            .any(|l| l.starts_with("'--renew-while=[") && l.ends_with(":PID:' \\")),
        "zsh: --renew-while completes nothing"
    );
    let fish = file("completions/redlock.fish");
    for sub in ["man", "help"] {
        let line = format!("__fish_redlock_using_subcommand {sub}\" -f -a \"{names}\"");
        assert!(fish.contains(&line), "fish: {sub}");
    }
    assert!(fish.contains(
        "complete -c redlock -f -a \"(__fish_redlock_command_line)\" \\\n    \
         -n \"__fish_redlock_using_subcommand run; and __fish_redlock_after_double_dash\"\n"
    ));
    let renew = fish.lines().find(|l| l.contains("-l renew-while")).unwrap();
    assert!(renew.ends_with(" -r -f"), "fish: {renew}");
}
