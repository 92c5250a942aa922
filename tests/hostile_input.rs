//! Input that a careless or hostile caller hands redlock, against the real binary and real
//! masters: standard descriptors that are closed or cannot be written, environment values that
//! are not text, and server URLs whose password must never be echoed.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use common::{Cluster, describe};

const OS_ERROR: i32 = 71;

/// Closes `fds` in the child after its standard streams are set up, as `>&-` does in a shell.
fn closing<'a>(cmd: &'a mut Command, fds: &'static [i32]) -> &'a mut Command {
    // SAFETY: close is async-signal-safe and touches only the child's own descriptors.
    unsafe {
        cmd.pre_exec(move || {
            for &fd in fds {
                libc::close(fd);
            }
            Ok(())
        })
    }
}

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
            server.keys(),
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
