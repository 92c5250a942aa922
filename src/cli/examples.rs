//! The examples shown in `--help`, the man pages' EXAMPLES section, and README.md's "Commands"
//! (tests/docs.rs checks): one table.

/// The subcommands a user can name (`redlock help NAME`, `redlock man NAME`), in --help order.
/// Written out because clap cannot list them while it builds the command they belong to;
/// `tests::subcommand_names_are_the_visible_subcommands` keeps the list true.
pub const SUBCOMMANDS: &[&str] = &[
    "run",
    "acquire",
    "release",
    "extend",
    "status",
    "history",
    "list",
    "doctor",
    "config",
    "completions",
    "man",
    "help",
];

/// Examples, per subcommand ("redlock" for the main page): under "Examples:" in the
/// subcommand's --help, and in the EXAMPLES section of its man page. A long command goes on
/// with ` \` on the next line, indented: every line fits 80 columns with the help's indent of
/// two, so no terminal cuts one in the middle (tests/generated.rs checks).
pub const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "redlock",
        &[
            "redlock run --key deploy-prod --ttl 30s -- ./deploy.sh --env prod",
            "token=$(redlock acquire --key deploy --ttl 10m)",
            "redlock release --key deploy --token \"$token\"",
            "redlock status --key deploy-prod",
            "redlock list",
            "redlock doctor",
        ],
    ),
    (
        "run",
        &[
            "redlock run --key deploy-prod --ttl 30s -- ./deploy.sh --env prod",
            "redlock run --key report --ttl 5m --conflict-exit-code 0 -- ./report.sh",
            "redlock run --key backups --limit 3 --ttl 1m --wait 2h -- ./backup.sh",
            "redlock run --key deploy-prod --wait 30m --note \"release 2.4, INC-7\" \\\n    \
             -- ./deploy.sh",
            "redlock run -s redis://r1:6379 -s redis://r2:6379 -s redis://r3:6379 \\\n    \
             --key release --wait 10m -- make release",
            "redlock run --key report --ttl 5m \\\n    \
             --metrics-file /var/lib/node_exporter/textfile/redlock.prom -- ./report.sh",
        ],
    ),
    (
        "acquire",
        &[
            "token=$(redlock acquire --key deploy --ttl 10m)",
            "eval \"$(redlock acquire --key deploy --ttl 30s --renew-while $$ --format env)\"",
            "redlock acquire --key deploy --ttl 1m --format json",
        ],
    ),
    (
        "release",
        &[
            "redlock release --key deploy --token \"$token\"",
            "redlock release  # after eval \"$(redlock acquire ... --format env)\"",
            "redlock release --force --key deploy --reason \"runner 7 hung, INC-42\"",
        ],
    ),
    (
        "extend",
        &["redlock extend --key deploy --token \"$token\" --ttl 10m"],
    ),
    (
        "status",
        &[
            "redlock status --key deploy-prod",
            "redlock status --key deploy-prod --json",
            "redlock status --key deploy-prod --watch",
            "if redlock status -q --key deploy-prod >/dev/null; then echo held; fi",
        ],
    ),
    (
        "history",
        &[
            "redlock history --key nightly-backup",
            "redlock history --key deploy-prod --since 7d --limit 50",
            "redlock history --key deploy-prod --json",
        ],
    ),
    (
        "list",
        &[
            "redlock list",
            "redlock list --pattern 'deploy-*' --json",
            "redlock list --problems --idle 30d",
        ],
    ),
    (
        "doctor",
        &[
            "redlock doctor",
            "redlock -s redis://r1:6379 -s redis://r2:6379 -s redis://r3:6379 doctor --json",
        ],
    ),
    (
        "config",
        &[
            "redlock config",
            "redlock --config ./redlock.toml config --json",
        ],
    ),
    (
        "completions",
        &[
            "redlock completions bash > ~/.local/share/bash-completion/completions/redlock",
            "redlock completions zsh > ~/.zfunc/_redlock",
            "redlock completions fish > ~/.config/fish/completions/redlock.fish",
        ],
    ),
    (
        "man",
        &[
            "redlock man > /usr/local/share/man/man1/redlock.1",
            "redlock man run > /usr/local/share/man/man1/redlock-run.1",
        ],
    ),
    ("help", &["redlock help run"]),
];

/// The examples of `subcommand` ("redlock": the main page's).
pub fn examples(subcommand: &str) -> &'static [&'static str] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == subcommand)
        .map_or(&[], |(_, examples)| examples)
}

/// The "Examples:" block that ends a subcommand's --help.
pub(super) fn examples_help(subcommand: &str) -> String {
    let mut out = String::from("Examples:");
    for line in examples(subcommand).iter().flat_map(|e| e.lines()) {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}
