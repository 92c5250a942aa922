//! Input that a careless or hostile caller hands redlock, against the real binary and real
//! masters: standard descriptors that are closed or cannot be written, environment values that
//! are not text, and server URLs whose password must never be echoed.

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Output, Stdio};

use crate::common::{Cluster, closing, describe};

const OS_ERROR: i32 = 71;

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts exit 71 with one line on stderr naming standard output, and no key on any master.
fn assert_refused_and_released(cluster: &Cluster, output: &Output, case: &str) {
    assert_eq!(
        output.status.code(),
        Some(OS_ERROR),
        "{case}: {}",
        describe(output)
    );
    let stderr = stderr_of(output);
    assert_eq!(stderr.lines().count(), 1, "{case}: {}", describe(output));
    assert!(
        stderr.starts_with("redlock: ") && stderr.contains("standard output"),
        "{case}: {}",
        describe(output)
    );
    for server in &cluster.servers {
        assert_eq!(
            server.lock_keys(),
            Vec::<String>::new(),
            "{case}: lock left held"
        );
    }
}

/// `acquire >&-`: the token could be printed nowhere, so no lock is taken at all (not taken
/// and left to expire: that would block everyone else for the whole TTL).
#[test]
fn acquire_with_stdout_closed_takes_no_lock() {
    let cluster = Cluster::start(3);
    for format in ["plain", "env", "json"] {
        for fds in [&[1][..], &[0, 1, 2], &[1, 2]] {
            let output = closing(
                cluster
                    .redlock()
                    .args(["acquire", "--key", "closed", "--ttl", "30s", "-f", format]),
                fds,
            )
            .output()
            .unwrap();
            let case = format!("--format {format}, fds {fds:?} closed");
            if fds.contains(&2) {
                // Nothing can be said; the exit code still says it.
                assert_eq!(output.status.code(), Some(OS_ERROR), "{case}");
                assert!(output.stderr.is_empty(), "{case}: {}", describe(&output));
            } else {
                assert_refused_and_released(&cluster, &output, &case);
            }
            assert!(cluster.key_gone_everywhere("closed"), "{case}");
        }
    }
    // Refused before touching a master: not even taken and given back.
    for server in &cluster.servers {
        assert_eq!(server.command_calls("set"), 0);
        assert_eq!(
            server.command_calls("evalsha") + server.command_calls("eval"),
            0
        );
    }
    // --renew-while as well: no renewer is left behind with a lock nobody can release.
    let output = closing(
        cluster.redlock().args([
            "acquire",
            "--key",
            "closed",
            "--renew-while",
            &std::process::id().to_string(),
        ]),
        &[1],
    )
    .output()
    .unwrap();
    assert_refused_and_released(&cluster, &output, "--renew-while");
}

/// `acquire >/dev/full`: the write fails, so the lock is released and the exit code says so.
#[test]
fn acquire_to_a_full_device_releases_the_lock() {
    let cluster = Cluster::start(3);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = cluster
        .redlock()
        .args(["acquire", "--key", "full", "--ttl", "30s"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_refused_and_released(&cluster, &output, ">/dev/full");
    assert!(
        stderr_of(&output).contains("released"),
        "{}",
        describe(&output)
    );
}

/// `acquire | (exit)`: a pipe whose reader is gone (EPIPE) loses the token like a full disk.
#[test]
fn acquire_into_a_pipe_nobody_reads_releases_the_lock() {
    let cluster = Cluster::start(3);
    for format in ["plain", "json"] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = cluster
            .redlock()
            .args(["acquire", "--key", "epipe", "--ttl", "30s", "-f", format])
            .stdout(Stdio::from(writer))
            .output()
            .unwrap();
        assert_refused_and_released(&cluster, &output, &format!("EPIPE, --format {format}"));
        assert!(
            stderr_of(&output).contains("released"),
            "{}",
            describe(&output)
        );
    }
}

/// `2>&-` changes nothing but where messages go: the token is printed and the lock held; a
/// failure still has its exit code; `run` still runs its command.
#[test]
fn a_closed_stderr_breaks_nothing() {
    let cluster = Cluster::start(3);
    let output = closing(
        cluster
            .redlock()
            .args(["acquire", "--key", "quiet", "--ttl", "30s"]),
        &[2],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.holding("quiet", &token), 3);

    // Held: 75, with nowhere to say so.
    let output = closing(cluster.redlock().args(["acquire", "--key", "quiet"]), &[2])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    assert!(output.stdout.is_empty());

    let output = closing(
        cluster
            .redlock()
            .args(["release", "--key", "quiet", "--token", &token]),
        &[0, 2],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("quiet"));

    let output = closing(
        cluster.redlock().args([
            "run",
            "--key",
            "quiet",
            "--",
            "sh",
            "-c",
            "echo ran; exit 3",
        ]),
        &[2],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
    assert!(cluster.key_gone_everywhere("quiet"));
}

/// With stdout closed, `status`, `doctor` and `config` still talk to their masters over
/// descriptors of their own: no connection lands on fd 1, where the report would be written
/// into it (and the master would answer the report's words with errors). Each master answers
/// such a run with exactly as many errors as a run whose stdout is open.
#[test]
fn a_closed_stdout_never_becomes_a_connection() {
    let cluster = Cluster::start(3);
    cluster.servers[0].set("probe", "x");
    let errors = || -> Vec<u64> { cluster.servers.iter().map(error_replies).collect() };
    let deltas = |close: bool| -> Vec<u64> {
        let before = errors();
        for args in [&["status", "--key", "probe"][..], &["doctor"], &["config"]] {
            let mut cmd = cluster.redlock();
            cmd.args(args);
            if close {
                closing(&mut cmd, &[1]);
            }
            let output = cmd.output().unwrap();
            assert_eq!(
                output.stdout.is_empty(),
                close,
                "{args:?}: {}",
                describe(&output)
            );
        }
        errors().iter().zip(before).map(|(a, b)| a - b).collect()
    };
    assert_eq!(
        deltas(true),
        deltas(false),
        "a master received something that is not a command"
    );
}

/// How many error replies a server has sent (a report written into a connection is parsed as
/// unknown commands).
fn error_replies(server: &common::Server) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut server.connection())
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("total_error_replies:"))
        .map_or(0, |n| n.trim().parse().expect("a number"))
}

// ---------------------------------------------------------------------------------------------
// Environment values that are not UTF-8.

const CONFIG: i32 = 78;

/// A value that is not UTF-8, with a marker that must never be echoed (it may be a password).
fn not_utf8(marker: &str) -> OsString {
    let mut bytes = marker.as_bytes().to_vec();
    bytes.extend_from_slice(b"\xff\xfe");
    OsString::from_vec(bytes)
}

/// What is wrong with a refusal that should be exit 78 with exactly one line on stderr that
/// names `variable` and does not show `marker`, nothing on stdout, and no key written to any
/// master (but the enclosing lock's); empty when nothing is.
fn names_variable(cluster: &Cluster, output: &Output, variable: &str, marker: &str) -> String {
    let stderr = stderr_of(output);
    let problem = if output.status.code() != Some(CONFIG) {
        "exit code is not 78"
    } else if stderr.lines().count() != 1 {
        "not exactly one line on stderr"
    } else if !stderr.contains(&format!("${variable} ")) {
        "the message does not name the variable"
    } else if stderr.contains(marker) {
        "the message shows the value"
    } else if !output.stdout.is_empty() {
        "something on stdout"
    } else {
        ""
    };
    if !problem.is_empty() {
        return format!("{problem}\n{}", describe(output));
    }
    for server in &cluster.servers {
        let keys: Vec<String> = server
            .keys()
            .into_iter()
            .filter(|k| !k.contains("held"))
            .collect();
        if !keys.is_empty() {
            return format!("keys written: {keys:?}");
        }
    }
    String::new()
}

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// Other variables a case sets, with their (valid) values.
type Env = Vec<(&'static str, OsString)>;

/// Every text variable redlock reads, set to bytes that are not UTF-8, in every subcommand
/// that reads it: refused with one line naming it, never taken for unset (REDLOCK_SERVERS
/// taken for unset means the lock is taken on whatever Redis runs on 127.0.0.1:6379).

#[test]
fn environment_values_that_are_not_utf8_are_configuration_errors() {
    let cluster = Cluster::start(3);
    // An enclosing lock, for the variables read only when a lock is inherited.
    let held = cluster
        .redlock()
        .args(["acquire", "--key", "held", "--ttl", "1m"])
        .output()
        .unwrap();
    assert!(held.status.success(), "{}", describe(&held));
    let held_token = String::from_utf8(held.stdout).unwrap().trim().to_string();

    let configured: &[&[&str]] = &[
        &["run", "--key", "k", "--", "true"],
        &["acquire", "--key", "k"],
        &["release", "--key", "k", "--token", TOKEN],
        &["extend", "--key", "k", "--token", TOKEN],
        &["status", "--key", "k"],
        &["doctor"],
        &["config"],
    ];
    let mut cases: Vec<(&str, Vec<&str>, Env)> = Vec::new();
    for args in configured {
        for variable in ["REDLOCK_SERVERS", "REDLOCK_PASSWORD"] {
            cases.push((variable, args.to_vec(), vec![]));
        }
        // Even where a flag overrides it: the broken value is found now, not the day the flag
        // is dropped.
        let mut with_server = vec!["--server", "redis://127.0.0.1:1"];
        with_server.extend_from_slice(args);
        cases.push(("REDLOCK_SERVERS", with_server, vec![]));
    }
    for name in ["release", "extend"] {
        // Read by clap for --key and --token; clap alone says "invalid UTF-8 was detected in
        // one or more arguments" and exits 64.
        cases.push((
            "REDLOCK_KEY",
            vec![name],
            vec![("REDLOCK_TOKEN", TOKEN.into())],
        ));
        cases.push((
            "REDLOCK_TOKEN",
            vec![name],
            vec![("REDLOCK_KEY", "k".into())],
        ));
        cases.push((
            "REDLOCK_KEY",
            vec![name, "--key", "k", "--token", TOKEN],
            vec![],
        ));
        cases.push((
            "REDLOCK_TOKEN",
            vec![name, "--key", "k", "--token", TOKEN],
            vec![],
        ));
    }
    for args in [
        &["run", "--key", "held", "--", "true"][..],
        &["acquire", "--key", "held"],
    ] {
        // Read to re-use an enclosing lock; taken for unset, the caller waits for itself.
        cases.push((
            "REDLOCK_KEY",
            args.to_vec(),
            vec![("REDLOCK_TOKEN", held_token.clone().into())],
        ));
        cases.push((
            "REDLOCK_TOKEN",
            args.to_vec(),
            vec![("REDLOCK_KEY", "held".into())],
        ));
        let inherited = vec![
            ("REDLOCK_KEY", OsString::from("held")),
            ("REDLOCK_TOKEN", held_token.clone().into()),
        ];
        let mut fenced = args.to_vec();
        fenced.insert(1, "--fence");
        cases.push(("REDLOCK_FENCE", fenced, inherited));
    }
    let mut failures = Vec::new();
    for (variable, args, others) in &cases {
        for json in [false, true] {
            let mut cmd = cluster.redlock();
            if json {
                cmd.args(["--log-format", "json"]);
            }
            cmd.args(args).env(variable, not_utf8("S3cr3tValue"));
            for (name, value) in others {
                cmd.env(name, value);
            }
            let output = cmd.output().unwrap();
            let case = format!("{variable} not UTF-8, json {json}: redlock {args:?}");
            let mut problem = names_variable(&cluster, &output, variable, "S3cr3tValue");
            if problem.is_empty()
                && json
                && serde_json::from_slice::<serde_json::Value>(&output.stderr)
                    .map_or(true, |line| line["level"] != "error")
            {
                problem = format!("not one JSON error line\n{}", describe(&output));
            }
            if !problem.is_empty() {
                failures.push(format!("{case}: {problem}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases misbehaved:\n\n{}",
        failures.len(),
        cases.len() * 2,
        failures.join("\n\n")
    );
    assert_eq!(cluster.holding("held", &held_token), 3);
}

/// File names are bytes on Unix: a name that is not UTF-8 is still a name, and is used.
#[test]
fn file_names_that_are_not_utf8_are_used() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let odd = |name: &str| {
        dir.path()
            .join(OsString::from_vec([name.as_bytes(), b"-\xff"].concat()))
    };
    let servers = format!("servers = [{:?}]\n", cluster.servers[0].url());
    let show = |cmd: &mut Command| -> serde_json::Value {
        let output = cmd.args(["config", "--json"]).output().unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        serde_json::from_slice(&output.stdout).unwrap()
    };

    // $REDLOCK_CONFIG
    let config = odd("config.toml");
    std::fs::write(&config, &servers).unwrap();
    let json = show(common::redlock().env("REDLOCK_CONFIG", &config));
    assert_eq!(json["servers"]["source"], "config file", "{json}");
    // ... and a missing one is refused, naming where the name came from.
    let output = common::redlock()
        .env("REDLOCK_CONFIG", odd("missing.toml"))
        .arg("config")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(CONFIG), "{}", describe(&output));
    assert!(
        stderr_of(&output).contains("$REDLOCK_CONFIG"),
        "{}",
        describe(&output)
    );

    // $REDLOCK_PASSWORD_FILE
    let password = odd("password");
    std::fs::write(&password, "pw\n").unwrap();
    std::fs::set_permissions(
        &password,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let json = show(common::redlock().env("REDLOCK_PASSWORD_FILE", &password));
    assert!(
        json["password"]
            .as_str()
            .unwrap()
            .contains("$REDLOCK_PASSWORD_FILE"),
        "{json}"
    );

    // $XDG_CONFIG_HOME, then $HOME/.config
    let xdg = odd("xdg");
    std::fs::create_dir_all(xdg.join("redlock")).unwrap();
    std::fs::write(xdg.join("redlock/config.toml"), &servers).unwrap();
    let json = show(common::redlock().env("XDG_CONFIG_HOME", &xdg));
    assert_eq!(json["servers"]["source"], "config file", "{json}");
    let home = odd("home");
    std::fs::create_dir_all(home.join(".config/redlock")).unwrap();
    std::fs::write(home.join(".config/redlock/config.toml"), &servers).unwrap();
    let json = show(
        common::redlock()
            .env_remove("XDG_CONFIG_HOME")
            .env("HOME", &home),
    );
    assert_eq!(json["servers"]["source"], "config file", "{json}");
}

// ---------------------------------------------------------------------------------------------
// Passwords in server URLs that do not parse.

/// A malformed server URL, and the pieces of its secret that must never be shown.
struct Shape {
    url: &'static str,
    secrets: &'static [&'static str],
}

const SHAPES: &[Shape] = &[
    Shape {
        url: "redis:/:S3cr3tPw@127.0.0.1:1",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis//:S3cr3tPw@127.0.0.1:1",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "//u:S3cr3tPw@127.0.0.1:1",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis://u:S3cr3tPw@127.0.0.1:notaport",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis://:S3cr3tPw@[::1",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "rediss:S3cr3tPw@127.0.0.1",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis://:S3cr3tPw@127.0.0.1:1/notadb",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis://:S3cr3tPw@127.0.0.1:1/?protocol=bogus",
        secrets: &["S3cr3tPw"],
    },
    // A space or a line break: $REDLOCK_SERVERS splits the entry there, leaving pieces.
    Shape {
        url: "redis://:S3cr3t Xyzzy9@127.0.0.1:1",
        secrets: &["S3cr3t", "Xyzzy9"],
    },
    Shape {
        url: "redis://:S3cr3t\nXyzzy9@127.0.0.1:1",
        secrets: &["S3cr3t", "Xyzzy9"],
    },
    Shape {
        url: "redis://:S3cr%33t%58yzzy9@127.0.0.1:notaport",
        secrets: &["S3cr%33t", "S3cr3t", "yzzy9"],
    },
    Shape {
        url: "redis://:S3cr3tÜñï@127.0.0.1:x",
        secrets: &["S3cr3t", "Üñï"],
    },
    // The `@host` forgotten.
    Shape {
        url: "redis://u:S3cr3tPw",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "redis+unix:///nonexistent/redis.sock?pass=S3cr3tPw&db=x",
        secrets: &["S3cr3tPw"],
    },
    // A query parameter redlock does not read: refused, never echoed (issue 33).
    Shape {
        url: "redis://127.0.0.1:1/?password=S3cr3tPw",
        secrets: &["S3cr3tPw"],
    },
    Shape {
        url: "rediss://127.0.0.1:1?db=1&S3cr3tPw",
        secrets: &["S3cr3tPw"],
    },
];

/// Where the bad URL is given: after a good one on the command line, in $REDLOCK_SERVERS, or
/// in the config file.
#[derive(Clone, Copy, Debug)]
enum Given {
    Flag,
    Env,
    File,
}

/// Every malformed shape, from every source, in every subcommand that shows servers, as text
/// and as JSON: refused (78) with one line that names the bad entry and where it came from,
/// and no piece of the password anywhere on stdout or stderr.
#[test]
fn a_malformed_server_url_never_shows_its_password() {
    let cluster = Cluster::start(1);
    let good = cluster.servers[0].url();
    let dir = tempfile::tempdir().unwrap();
    let subcommands: &[&[&str]] = &[
        &["run", "--key", "k", "--", "true"],
        &["acquire", "--key", "k"],
        &["status", "--key", "k"],
        &["doctor"],
        &["config"],
    ];
    let mut failures = Vec::new();
    let mut cases = 0;
    for (n, shape) in SHAPES.iter().enumerate() {
        let config = dir.path().join(format!("config-{n}.toml"));
        let list = [good.as_str(), shape.url];
        std::fs::write(
            &config,
            format!("servers = {}\n", serde_json::to_string(&list).unwrap()),
        )
        .unwrap();
        std::fs::set_permissions(&config, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        for given in [Given::Flag, Given::Env, Given::File] {
            for args in subcommands {
                for json in [false, true] {
                    cases += 1;
                    let mut cmd = common::redlock();
                    cmd.arg("-vv");
                    if json {
                        cmd.args(["--log-format", "json"]);
                    }
                    let source = match given {
                        Given::Flag => {
                            cmd.args(["--server", &good, "--server", shape.url]);
                            "--server"
                        }
                        Given::Env => {
                            cmd.env("REDLOCK_SERVERS", format!("{good},{}", shape.url));
                            "$REDLOCK_SERVERS"
                        }
                        Given::File => {
                            cmd.arg("--config").arg(&config);
                            "config file"
                        }
                    };
                    let output = cmd.args(*args).output().unwrap();
                    let problem = url_refusal_problem(&output, shape, source, json);
                    if !problem.is_empty() {
                        failures.push(format!(
                            "{:?} via {given:?}, json {json}, redlock {args:?}: {problem}\n{}",
                            shape.url,
                            describe(&output)
                        ));
                    }
                }
            }
        }
    }
    assert_eq!(cluster.servers[0].lock_keys(), Vec::<String>::new());
    assert!(
        failures.is_empty(),
        "{} of {cases} cases misbehaved:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// What is wrong with the refusal of a malformed URL; empty when nothing is.
fn url_refusal_problem(output: &Output, shape: &Shape, source: &str, json: bool) -> String {
    let everything = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if let Some(secret) = shape.secrets.iter().find(|s| everything.contains(*s)) {
        return format!("the password shows ({secret:?})");
    }
    if output.status.code() != Some(CONFIG) {
        return "exit code is not 78".into();
    }
    if !output.stdout.is_empty() {
        return "something on stdout".into();
    }
    let stderr = stderr_of(output);
    if stderr.lines().count() != 1 {
        return "not exactly one line on stderr".into();
    }
    let message = if json {
        match serde_json::from_str::<serde_json::Value>(&stderr) {
            Ok(line) if line["level"] == "error" => line["message"].as_str().unwrap().to_string(),
            _ => return "not one JSON error line".into(),
        }
    } else {
        stderr
    };
    for needed in ["invalid server URL", source, "entry ", "***"] {
        if !message.contains(needed) {
            return format!("the message does not say {needed:?}");
        }
    }
    String::new()
}

/// The config file's own parser quotes a value it rejects: a URL there is redacted too.
#[test]
fn a_config_file_error_that_quotes_a_url_redacts_it() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [
        (
            "not-a-list.toml",
            "servers = \"redis://:S3cr3tPw@127.0.0.1:1\"\n",
        ),
        (
            "ttl-a-url.toml",
            "ttl = \"redis://:S3cr3tPw@127.0.0.1:1\"\n",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        for json in [false, true] {
            let mut cmd = cluster.redlock();
            if json {
                cmd.args(["--log-format", "json"]);
            }
            let output = cmd
                .arg("--config")
                .arg(&path)
                .arg("config")
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(CONFIG), "{}", describe(&output));
            let stderr = stderr_of(&output);
            assert_eq!(stderr.lines().count(), 1, "{}", describe(&output));
            assert!(
                !stderr.contains("S3cr3tPw"),
                "{name}: {}",
                describe(&output)
            );
            assert!(
                stderr.contains("***@127.0.0.1:1"),
                "{name}: {}",
                describe(&output)
            );
        }
    }
}
