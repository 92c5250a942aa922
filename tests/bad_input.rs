//! The bad-input matrix, against the real binary and real masters: every bad flag value,
//! server URL, config file or environment variable is refused with exactly one line on stderr
//! (`redlock: ...`), the documented exit code (64 usage, 78 configuration), nothing on stdout,
//! and no key written to any master.
//!
//! Each test function starts its own 3 masters and runs every case against them; failures are
//! collected and reported together, each naming its case (arguments and environment).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{Cluster, describe};
use tempfile::TempDir;

const USAGE: i32 = 64;
const CONFIG: i32 = 78;

const KEY: &str = "bad-input";
const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// A subcommand's minimal valid invocation: arguments before the options under test, and
/// arguments after them (`-- true` for `run`).
#[derive(Clone, Copy, Debug)]
struct Sub {
    before: &'static [&'static str],
    after: &'static [&'static str],
}

const RUN: Sub = Sub {
    before: &["run", "--key", KEY],
    after: &["--", "true"],
};
const ACQUIRE: Sub = Sub {
    before: &["acquire", "--key", KEY],
    after: &[],
};
const RELEASE: Sub = Sub {
    before: &["release", "--key", KEY, "--token", TOKEN],
    after: &[],
};
const EXTEND: Sub = Sub {
    before: &["extend", "--key", KEY, "--token", TOKEN],
    after: &[],
};
const STATUS: Sub = Sub {
    before: &["status", "--key", KEY],
    after: &[],
};
const DOCTOR: Sub = Sub {
    before: &["doctor"],
    after: &[],
};
const SHOW_CONFIG: Sub = Sub {
    before: &["config"],
    after: &[],
};

/// Every subcommand that resolves servers, secrets and the config file.
const CONFIGURED: [Sub; 7] = [RUN, ACQUIRE, RELEASE, EXTEND, STATUS, DOCTOR, SHOW_CONFIG];

impl Sub {
    /// The invocation with `options` between its own arguments and the trailing command.
    fn with(&self, options: &[&str]) -> Vec<String> {
        self.before
            .iter()
            .chain(options)
            .chain(self.after)
            .map(|s| s.to_string())
            .collect()
    }
}

/// An environment change for one case: set a variable, or remove it.
#[derive(Clone, Debug)]
enum Env {
    Set(&'static str, String),
    Unset(&'static str),
}

/// One bad input, the exit code it must give, and what its message must mention.
#[derive(Clone, Debug)]
struct Case {
    args: Vec<String>,
    env: Vec<Env>,
    code: i32,
    mentions: Vec<&'static str>,
}

impl Case {
    fn new(args: Vec<String>, code: i32) -> Case {
        Case {
            args,
            env: Vec::new(),
            code,
            mentions: Vec::new(),
        }
    }

    /// The message must contain `text` (e.g. name where the bad value came from).
    fn mentioning(mut self, text: &'static str) -> Case {
        self.mentions.push(text);
        self
    }

    fn env(mut self, name: &'static str, value: impl Into<String>) -> Case {
        self.env.push(Env::Set(name, value.into()));
        self
    }

    fn unset(mut self, name: &'static str) -> Case {
        self.env.push(Env::Unset(name));
        self
    }

    fn describe(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|e| match e {
                Env::Set(name, value) => format!("{name}={value:?}"),
                Env::Unset(name) => format!("unset {name}"),
            })
            .collect();
        if env.is_empty() {
            format!("redlock {:?}", self.args)
        } else {
            format!("{} redlock {:?}", env.join(" "), self.args)
        }
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The masters and a clean environment for the cases of one test.
struct Bench {
    cluster: Cluster,
    /// An empty XDG_CONFIG_HOME, so a developer's own config file cannot interfere.
    config_home: TempDir,
    /// Scratch space for the files the cases point at.
    files: TempDir,
}

impl Bench {
    fn start() -> Bench {
        Bench {
            cluster: Cluster::start(3),
            config_home: tempfile::tempdir().unwrap(),
            files: tempfile::tempdir().unwrap(),
        }
    }

    /// `redlock` with REDLOCK_SERVERS set to the masters and no inherited secrets or config.
    fn redlock(&self) -> Command {
        let mut cmd = self.cluster.redlock();
        for var in ["REDLOCK_PASSWORD", "REDLOCK_PASSWORD_FILE"] {
            cmd.env_remove(var);
        }
        cmd.env("XDG_CONFIG_HOME", self.config_home.path());
        cmd
    }

    fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.files.path().join(name);
        std::fs::write(&path, content.as_ref()).unwrap();
        path
    }

    fn run(&self, case: &Case) -> Output {
        let mut cmd = self.redlock();
        for env in &case.env {
            match env {
                Env::Set(name, value) => cmd.env(name, value),
                Env::Unset(name) => cmd.env_remove(name),
            };
        }
        cmd.args(&case.args).output().expect("run redlock")
    }

    /// The keys on each master, when some master has any.
    fn leftover_keys(&self) -> Option<Vec<(String, Vec<String>)>> {
        let keys: Vec<(String, Vec<String>)> = self
            .cluster
            .servers
            .iter()
            .map(|s| (s.url(), s.lock_keys()))
            .collect();
        keys.iter().any(|(_, k)| !k.is_empty()).then_some(keys)
    }

    /// Runs every case and returns a description of each that did not behave.
    fn check(&self, cases: &[Case]) -> Vec<String> {
        let mut failures = Vec::new();
        for case in cases {
            let output = self.run(case);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let mut wrong = Vec::new();
            if output.status.code() != Some(case.code) {
                wrong.push(format!(
                    "exit code {:?}, expected {}",
                    output.status.code(),
                    case.code
                ));
            }
            if stderr.lines().count() != 1 {
                wrong.push(format!(
                    "{} lines on stderr, expected exactly 1",
                    stderr.lines().count()
                ));
            }
            if !stderr.starts_with("redlock: ") {
                wrong.push("stderr does not start with \"redlock: \"".to_string());
            }
            for text in &case.mentions {
                if !stderr.contains(text) {
                    wrong.push(format!("the message does not mention {text:?}"));
                }
            }
            if !output.stdout.is_empty() {
                wrong.push("something was printed on stdout".to_string());
            }
            if let Some(keys) = self.leftover_keys() {
                wrong.push(format!("keys left on the masters: {keys:?}"));
                self.flush();
            }
            if !wrong.is_empty() {
                failures.push(format!(
                    "{}: {}\n{}",
                    case.describe(),
                    wrong.join("; "),
                    describe(&output)
                ));
            }
        }
        failures
    }

    /// Empties every master, so one misbehaving case does not blame the next ones.
    fn flush(&self) {
        for server in &self.cluster.servers {
            let _: () = redis::cmd("FLUSHALL")
                .query(&mut server.connection())
                .expect("FLUSHALL");
        }
    }

    /// Runs the cases, then asserts that all behaved and that every master is still empty.
    fn assert_all_rejected(&self, cases: &[Case]) {
        assert!(!cases.is_empty());
        let failures = self.check(cases);
        assert!(
            failures.is_empty(),
            "{} of {} bad inputs were not rejected as documented:\n\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n\n")
        );
        for server in &self.cluster.servers {
            assert_eq!(
                server.lock_keys(),
                Vec::<String>::new(),
                "{} is not empty",
                server.url()
            );
        }
    }

    /// A valid `run` and `status` work against these masters and leave nothing behind: the
    /// rejections below are about the input, not about a broken setup.
    fn assert_control_works(&self) {
        let output = self
            .redlock()
            .args(RUN.with(&["--node-timeout", "5s"]))
            .output()
            .expect("run redlock");
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let output = self
            .redlock()
            .args(STATUS.with(&["--node-timeout", "5s"]))
            .output()
            .expect("run redlock");
        assert_eq!(output.status.code(), Some(1), "free: {}", describe(&output));
        assert_eq!(self.leftover_keys(), None);
    }

    fn url(&self, i: usize) -> String {
        self.cluster.servers[i].url()
    }

    fn port(&self, i: usize) -> u16 {
        self.cluster.servers[i].port
    }
}

fn path_str(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// Values no duration option accepts: negative (as `--opt=-5s` and as a separate word),
/// overflowing, an unknown unit, no number, no unit, empty.
const BAD_DURATIONS: [&str; 6] = ["-5s", "99999999999999999999s", "30x", "soon", "30", ""];

/// Cases for one duration option on the subcommands that take it.
fn duration_cases(option: &str, zero_is_invalid: bool, subs: &[Sub]) -> Vec<Case> {
    let mut values: Vec<&str> = BAD_DURATIONS.to_vec();
    if zero_is_invalid {
        values.extend(["0", "0s", "0ms"]);
    }
    let mut cases = Vec::new();
    for sub in subs {
        for value in &values {
            cases.push(Case::new(sub.with(&[option, value]), USAGE));
            cases.push(Case::new(sub.with(&[&format!("{option}={value}")]), USAGE));
        }
    }
    cases
}

#[test]
fn invalid_durations_are_usage_errors() {
    let bench = Bench::start();
    bench.assert_control_works();
    let mut cases = Vec::new();
    cases.extend(duration_cases("--ttl", true, &[RUN, ACQUIRE, EXTEND]));
    cases.extend(duration_cases("--wait", false, &[RUN, ACQUIRE]));
    cases.extend(duration_cases("--kill-after", false, &[RUN]));
    cases.extend(duration_cases(
        "--node-timeout",
        true,
        &[RUN, ACQUIRE, RELEASE, EXTEND, STATUS, DOCTOR],
    ));
    cases.extend(duration_cases("--hold-min", false, &[RUN]));
    cases.extend(duration_cases("--max-duration", true, &[RUN]));
    // The short forms.
    for sub in [RUN, ACQUIRE] {
        cases.push(Case::new(sub.with(&["-t", "soon"]), USAGE));
        cases.push(Case::new(sub.with(&["-w", "30"]), USAGE));
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn a_negative_duration_given_as_a_separate_word_is_named_in_the_message() {
    let bench = Bench::start();
    let cases: Vec<Case> = [
        (RUN, "--ttl"),
        (RUN, "--wait"),
        (RUN, "--kill-after"),
        (RUN, "--node-timeout"),
        (RUN, "--hold-min"),
        (RUN, "--max-duration"),
        (ACQUIRE, "--ttl"),
        (EXTEND, "--ttl"),
        (STATUS, "--node-timeout"),
    ]
    .into_iter()
    .map(|(sub, option)| {
        Case::new(sub.with(&[option, "-5s"]), USAGE)
            .mentioning(option)
            .mentioning("negative")
    })
    .collect();
    bench.assert_all_rejected(&cases);
}

#[test]
fn timings_that_do_not_fit_together_are_usage_errors() {
    let bench = Bench::start();
    bench.assert_control_works();
    let mut cases = Vec::new();
    for sub in [RUN, ACQUIRE, EXTEND] {
        for options in [
            // A TTL shorter than (or not above twice) the per-node timeout.
            &["--ttl", "100ms", "--node-timeout", "200ms"][..],
            &["--ttl", "1s", "--node-timeout", "500ms"],
            &["--ttl", "1s", "--node-timeout", "2s"],
            // Too short, too long.
            &["--ttl", "5ms"],
            &["--ttl", "400days"],
        ] {
            cases.push(Case::new(sub.with(options), USAGE));
        }
    }
    for sub in [RUN, ACQUIRE] {
        for options in [
            &["--drift-factor", "0.7"][..],
            &["--drift-factor", "0.5"],
            &["--drift-factor=-0.1"],
            &["--drift-factor", "NaN"],
            &["--drift-factor", "lots"],
            &[
                "--ttl",
                "20ms",
                "--node-timeout",
                "9ms",
                "--drift-factor",
                "0.49",
            ],
        ] {
            cases.push(Case::new(sub.with(options), USAGE));
        }
    }
    // --kill-after must leave the command dead before the validity ends: at most TTL/2.
    for options in [
        &["--ttl", "10s", "--kill-after", "6s"][..],
        &["--ttl", "10s", "--kill-after", "5001ms"],
        &["--ttl", "1s", "--kill-after", "1s"],
        &["--ttl", "100ms", "--kill-after", "1m"],
        &["--kill-after", "16s"], // default TTL 30s
    ] {
        cases.push(Case::new(RUN.with(options), USAGE));
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn an_empty_key_is_a_usage_error() {
    let bench = Bench::start();
    bench.assert_control_works();
    let mut cases = Vec::new();
    let subs = [
        ("run", &["--", "true"][..]),
        ("acquire", &[]),
        ("release", &["--token", TOKEN]),
        ("extend", &["--token", TOKEN]),
        ("status", &[]),
    ];
    for (name, rest) in subs {
        for key in [&["--key", ""][..], &["--key="], &["-k", ""]] {
            let mut list = vec![name];
            list.extend_from_slice(key);
            list.extend_from_slice(rest);
            cases.push(Case::new(args(&list), USAGE));
        }
    }
    // release and extend also take the key from the environment.
    for name in ["release", "extend"] {
        cases.push(Case::new(args(&[name, "--token", TOKEN]), USAGE).env("REDLOCK_KEY", ""));
        cases.push(
            Case::new(args(&[name]), USAGE)
                .env("REDLOCK_KEY", "")
                .env("REDLOCK_TOKEN", TOKEN),
        );
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn a_missing_or_empty_command_is_a_usage_error() {
    let bench = Bench::start();
    bench.assert_control_works();
    let cases = [
        args(&["run", "--key", KEY, "--"]),
        args(&["run", "--key", KEY]),
        args(&["run", "--key", KEY, "--", ""]),
        args(&["run", "--key", KEY, "--", "", "arg"]),
        args(&["run", "--key", KEY, "--ttl", "10s", "--"]),
    ]
    .into_iter()
    .map(|a| Case::new(a, USAGE))
    .collect::<Vec<_>>();
    bench.assert_all_rejected(&cases);
}

#[test]
fn unknown_subcommands_flags_and_values_are_usage_errors() {
    let bench = Bench::start();
    bench.assert_control_works();
    let mut cases = vec![
        Case::new(args(&["frobnicate"]), USAGE),
        Case::new(args(&["frobnicate", "--key", KEY]), USAGE),
        Case::new(args(&["runn", "--key", KEY, "--", "true"]), USAGE),
        Case::new(args(&["--bogus", "run", "--key", KEY, "--", "true"]), USAGE),
        Case::new(ACQUIRE.with(&["--format", "xml"]), USAGE),
        Case::new(ACQUIRE.with(&["-f", "xml"]), USAGE),
        Case::new(ACQUIRE.with(&["--format="]), USAGE),
        Case::new(ACQUIRE.with(&["--renew-while", "not-a-pid"]), USAGE),
        Case::new(ACQUIRE.with(&["--renew-while", "999999999"]), USAGE),
        Case::new(RUN.with(&["--conflict-exit-code", "300"]), USAGE),
        Case::new(RUN.with(&["--conflict-exit-code", "x"]), USAGE),
        Case::new(RUN.with(&["--wait", "1s", "--no-wait"]), USAGE),
        Case::new(STATUS.with(&["--json", "--json"]), USAGE),
        // Options of other subcommands.
        Case::new(RELEASE.with(&["--ttl", "10s"]), USAGE),
        Case::new(STATUS.with(&["--wait", "1s"]), USAGE),
        Case::new(DOCTOR.with(&["--format", "xml"]), USAGE),
        // Missing required options.
        Case::new(args(&["acquire"]), USAGE),
        Case::new(args(&["status"]), USAGE),
        Case::new(args(&["release", "--key", KEY]), USAGE),
        Case::new(args(&["extend", "--token", TOKEN]), USAGE),
        Case::new(args(&["run", "--", "true"]), USAGE),
    ];
    for sub in CONFIGURED {
        cases.push(Case::new(sub.with(&["--bogus"]), USAGE));
        cases.push(Case::new(sub.with(&["--log-format", "xml"]), USAGE));
        cases.push(Case::new(sub.with(&["--server"]), USAGE));
    }
    bench.assert_all_rejected(&cases);
}

/// Issue 47, item 10: `--outdated-exit-code -1` got clap's "unexpected argument '-1'" (a
/// flag?) where 256 gets the range; every exit-code option says its range for a negative
/// value too, as for any other value out of it.
#[test]
fn a_negative_exit_code_is_out_of_range_not_a_flag() {
    let bench = Bench::start();
    bench.assert_control_works();
    let mut cases = Vec::new();
    for option in [
        "--conflict-exit-code",
        "--outdated-exit-code",
        "--superseded-exit-code",
    ] {
        for value in ["-1", "256"] {
            cases.push(
                Case::new(RUN.with(&[option, value]), USAGE)
                    .mentioning(option)
                    .mentioning("is not in 0..=255"),
            );
        }
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn malformed_server_urls_are_configuration_errors() {
    let bench = Bench::start();
    bench.assert_control_works();
    let good = bench.url(0);
    let bad_urls = [
        "localhost:6379",
        "redis://",
        "redis://host:99999",
        "http://x:1",
        "redis://:1",
        "127.0.0.1",
        // TLS that would not verify the server: refused, not tried.
        "rediss://127.0.0.1:6379/#insecure",
    ];
    let port = bench.port(1);
    let duplicates = [
        (
            format!("redis://127.0.0.1:{port}"),
            format!("redis://localhost:{port}"),
        ),
        (
            format!("redis://127.0.0.1:{port}/0"),
            format!("redis://127.0.0.1:{port}/1"),
        ),
        // Old IPv4 forms the resolver takes: each reaches the same server.
        (
            format!("redis://127.1:{port}"),
            format!("redis://0x7f000001:{port}"),
        ),
        (
            format!("redis://[::ffff:127.0.0.1]:{port}"),
            format!("redis://2130706433:{port}"),
        ),
    ];
    // With a password in one URL: the duplicate is still found, and the message redacts it.
    let with_password = format!("redis://:secret@localhost:{port}");
    let mut cases = Vec::new();
    for sub in CONFIGURED {
        for bad in bad_urls {
            // Via --server, alone and after a good one (REDLOCK_SERVERS is set, and ignored).
            cases.push(Case::new(sub.with(&["-s", bad]), CONFIG));
            cases.push(Case::new(sub.with(&["-s", &good, "--server", bad]), CONFIG));
            // Via REDLOCK_SERVERS, alone and in a list.
            cases.push(Case::new(sub.with(&[]), CONFIG).env("REDLOCK_SERVERS", bad));
            cases.push(
                Case::new(sub.with(&[]), CONFIG).env("REDLOCK_SERVERS", format!("{good},{bad}")),
            );
        }
        // REDLOCK_SERVERS set but empty.
        for empty in ["", " ", " , ,\t"] {
            cases.push(Case::new(sub.with(&[]), CONFIG).env("REDLOCK_SERVERS", empty));
        }
        // The same master twice: it would count twice toward the quorum.
        for (a, b) in &duplicates {
            cases.push(Case::new(
                sub.with(&["-s", &good, "-s", a, "-s", b]),
                CONFIG,
            ));
            cases.push(
                Case::new(sub.with(&[]), CONFIG).env("REDLOCK_SERVERS", format!("{good} {a} {b}")),
            );
        }
        cases.push(
            Case::new(sub.with(&[]), CONFIG)
                .env(
                    "REDLOCK_SERVERS",
                    format!("{good} {} {with_password}", duplicates[0].0),
                )
                .mentioning(":***@"),
        );
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn config_file_problems_are_configuration_errors() {
    let bench = Bench::start();
    bench.assert_control_works();
    let missing = bench.files.path().join("missing.toml");
    let directory = bench.files.path().join("a-directory");
    std::fs::create_dir(&directory).unwrap();
    let files = [
        missing.clone(),
        directory,
        bench.file("malformed.toml", b"servers = [\"redis://a:1\"\nttl = \n"),
        bench.file("unknown-key.toml", b"ttl = \"30s\"\nttll = \"1s\"\n"),
        bench.file("unknown-tls-key.toml", b"[tls]\nbogus = \"x\"\n"),
        bench.file("ttl-soon.toml", b"ttl = \"soon\"\n"),
        bench.file("ttl-no-unit.toml", b"ttl = \"30\"\n"),
        bench.file("ttl-number.toml", b"ttl = 30\n"),
        bench.file("node-timeout-bad.toml", b"node_timeout = \"-5s\"\n"),
        bench.file("kill-after-bad.toml", b"kill_after = \"30x\"\n"),
        bench.file("drift-not-a-number.toml", b"drift_factor = \"x\"\n"),
        bench.file("invalid-utf8.toml", b"ttl = \"30s\"\n# \xff\xfe\xc3\x28\n"),
        bench.file("servers-not-a-list.toml", b"servers = \"redis://a:1\"\n"),
        bench.file(
            "password-file-missing.toml",
            format!("password_file = {:?}\n", path_str(&missing)),
        ),
    ];
    let mut cases = Vec::new();
    for sub in CONFIGURED {
        for file in &files {
            let file = path_str(file);
            cases.push(Case::new(sub.with(&["--config", &file]), CONFIG));
            cases.push(Case::new(sub.with(&[]), CONFIG).env("REDLOCK_CONFIG", file));
        }
        // Server lists from the file count only when nothing else names servers.
        for (name, content) in [
            ("servers-empty.toml", &b"servers = []\n"[..]),
            ("servers-bad.toml", b"servers = [\"localhost:6379\"]\n"),
            (
                "servers-twice.toml",
                b"servers = [\"redis://127.0.0.1:1\", \"redis://localhost:1\"]\n",
            ),
        ] {
            let file = path_str(&bench.file(name, content));
            cases.push(Case::new(sub.with(&["--config", &file]), CONFIG).unset("REDLOCK_SERVERS"));
        }
        // The --config flag wins over REDLOCK_CONFIG, and must exist too.
        cases.push(
            Case::new(sub.with(&["--config", &path_str(&missing)]), CONFIG).env(
                "REDLOCK_CONFIG",
                path_str(&bench.file("fine.toml", b"ttl = \"30s\"\n")),
            ),
        );
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn out_of_range_values_in_the_config_file_are_configuration_errors() {
    let bench = Bench::start();
    let mut cases = Vec::new();
    for (name, content, subs) in [
        (
            "ttl-zero.toml",
            &b"ttl = \"0s\"\n"[..],
            &[RUN, ACQUIRE, RELEASE, EXTEND][..],
        ),
        (
            "ttl-short.toml",
            b"ttl = \"5ms\"\n",
            &[RUN, ACQUIRE, RELEASE, EXTEND],
        ),
        (
            "node-timeout-zero.toml",
            b"node_timeout = \"0s\"\n",
            &[RUN, ACQUIRE, RELEASE, EXTEND, STATUS, DOCTOR],
        ),
        ("kill-after-long.toml", b"kill_after = \"1h\"\n", &[RUN]),
        (
            "drift-factor-high.toml",
            b"drift_factor = 0.9\n",
            &[RUN, ACQUIRE],
        ),
    ] {
        let file = path_str(&bench.file(name, content));
        for sub in subs {
            cases.push(Case::new(sub.with(&["--config", &file]), CONFIG).mentioning("config file"));
        }
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn bad_secrets_and_tokens_in_the_environment_are_rejected() {
    let bench = Bench::start();
    bench.assert_control_works();
    let missing = path_str(&bench.files.path().join("no-such-password-file"));
    let empty = path_str(&bench.file("empty-password", b""));
    let directory = path_str(bench.files.path());
    // Endless: must be refused, not read into memory.
    let endless = "/dev/zero".to_string();
    let mut cases = Vec::new();
    for sub in CONFIGURED {
        for file in [&missing, &empty, &directory, &endless] {
            cases.push(Case::new(sub.with(&[]), CONFIG).env("REDLOCK_PASSWORD_FILE", file.clone()));
            cases.push(Case::new(sub.with(&["--password-file", file]), CONFIG));
        }
        cases.push(Case::new(sub.with(&[]), CONFIG).env("REDLOCK_PASSWORD", ""));
        // A password file named in the environment wins over $REDLOCK_PASSWORD, and must exist.
        cases.push(
            Case::new(sub.with(&[]), CONFIG)
                .env("REDLOCK_PASSWORD_FILE", missing.clone())
                .env("REDLOCK_PASSWORD", "secret"),
        );
    }
    // An empty token, from the environment or the flag.
    for name in ["release", "extend"] {
        for token in ["", " ", "\t"] {
            cases.push(
                Case::new(args(&[name]), USAGE)
                    .env("REDLOCK_KEY", KEY)
                    .env("REDLOCK_TOKEN", token),
            );
            cases.push(Case::new(
                args(&[name, "--key", KEY, "--token", token]),
                USAGE,
            ));
        }
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn a_client_certificate_without_its_key_is_a_usage_error() {
    let bench = Bench::start();
    bench.assert_control_works();
    let cert = path_str(&bench.file("client.pem", b"not really a certificate\n"));
    let mut cases = Vec::new();
    for sub in CONFIGURED {
        cases.push(Case::new(sub.with(&["--tls-cert", &cert]), USAGE));
        cases.push(Case::new(sub.with(&["--tls-key", &cert]), USAGE));
        // As a global option before the subcommand.
        let mut before = args(&["--tls-cert", &cert]);
        before.extend(sub.with(&[]));
        cases.push(Case::new(before, USAGE));
    }
    // With a rediss:// master, TLS files that cannot be used are a configuration error.
    let tls_url = format!("rediss://127.0.0.1:{}", bench.port(0));
    let missing = path_str(&bench.files.path().join("no-such-ca.pem"));
    for sub in CONFIGURED {
        cases.push(Case::new(
            sub.with(&["-s", &tls_url, "--tls-ca-cert", &missing]),
            CONFIG,
        ));
        cases.push(Case::new(
            sub.with(&["-s", &tls_url, "--tls-ca-cert", &cert]),
            CONFIG,
        ));
        // Endless: must be refused, not read into memory.
        cases.push(Case::new(
            sub.with(&["-s", &tls_url, "--tls-ca-cert", "/dev/zero"]),
            CONFIG,
        ));
    }
    bench.assert_all_rejected(&cases);
}

#[test]
fn a_secret_warning_does_not_add_a_line_to_a_rejection() {
    let bench = Bench::start();
    let port = bench.port(1);
    let good = bench.url(0);
    let password_url = format!("redis://:secret@127.0.0.1:{port}");
    let password_file = bench.file("password", "secret\n");
    std::fs::set_permissions(
        &password_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let password_file = path_str(&password_file);
    let exposed_config = bench.file(
        "exposed.toml",
        format!("servers = [\"{good}\", \"{password_url}\"]\nttl = \"soon\"\n"),
    );
    std::fs::set_permissions(
        &exposed_config,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let exposed_config = path_str(&exposed_config);
    let mut cases = Vec::new();
    for sub in [RUN, ACQUIRE, RELEASE, EXTEND, STATUS, DOCTOR] {
        // The same master twice, one URL with a password, on the command line.
        cases.push(Case::new(
            sub.with(&[
                "-s",
                &good,
                "-s",
                &format!("redis://localhost:{port}"),
                "-s",
                &password_url,
            ]),
            CONFIG,
        ));
        // A malformed URL with a password, on the command line.
        cases.push(Case::new(
            sub.with(&["-s", &good, "-s", "redis://:secret@host:99999"]),
            CONFIG,
        ));
        // A readable password file, then a duplicate master.
        cases.push(Case::new(
            sub.with(&[
                "--password-file",
                &password_file,
                "-s",
                &good,
                "-s",
                &format!("redis://localhost:{}", bench.port(0)),
            ]),
            CONFIG,
        ));
        // A readable config file holding a password, with a bad value.
        cases.push(
            Case::new(sub.with(&["--config", &exposed_config]), CONFIG).unset("REDLOCK_SERVERS"),
        );
    }
    for sub in [RUN, ACQUIRE] {
        // A valid password URL on the command line, then a bad value.
        cases.push(Case::new(
            sub.with(&["-s", &good, "-s", &password_url, "--ttl", "0s"]),
            USAGE,
        ));
        cases.push(Case::new(
            sub.with(&["--password-file", &password_file, "--ttl", "0s"]),
            USAGE,
        ));
    }
    bench.assert_all_rejected(&cases);
}
