//! A report that cannot be delivered is an error: every subcommand that prints exits 71 when
//! its standard output was closed when it started (`>&-`) or is full (`>/dev/full`), as a
//! script piping `status` into a program that died must not read success. A pipe closed by a
//! reader that had enough (`| head -1`) is not an error. `run` prints nothing of its own on
//! standard output, so its status stays the command's.

use crate::common;

use std::process::{Command, Stdio};

use crate::common::{Cluster, closing, describe};

const OS_ERROR: i32 = 71;

/// Every subcommand that prints, with arguments that make it print.
const PRINTING: &[&[&str]] = &[
    &["status", "--key", "k"],
    &["status", "--key", "k", "--json"],
    &["list"],
    &["list", "--json"],
    &["list", "--problems"],
    &["doctor"],
    &["config"],
    &["completions", "bash"],
    &["man"],
    &["help"],
    &["--help"],
    &["run", "--help"],
    &["--version"],
];

/// The command for `args`, with the cluster's masters where the subcommand talks to them.
fn command(cluster: &Cluster, args: &[&str]) -> Command {
    let mut cmd = common::redlock();
    if matches!(args[0], "status" | "list" | "doctor" | "config") {
        cmd.env("REDLOCK_SERVERS", cluster.servers_env());
    }
    cmd.args(args).stdin(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn assert_os_error(output: &std::process::Output, args: &[&str], case: &str, cause: &str) {
    assert_eq!(
        output.status.code(),
        Some(OS_ERROR),
        "{args:?} {case}: {}",
        describe(output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write to standard output") && stderr.contains(cause),
        "{args:?} {case}: {stderr}"
    );
}

#[test]
fn a_closed_standard_output_is_an_error_for_every_subcommand_that_prints() {
    let cluster = Cluster::start(1);
    for args in PRINTING {
        let mut cmd = command(&cluster, args);
        closing(&mut cmd, &[1]);
        let output = cmd.output().unwrap();
        assert_os_error(&output, args, ">&-", "closed when redlock started");
    }
}

#[test]
fn a_full_standard_output_is_an_error_for_every_subcommand_that_prints() {
    let cluster = Cluster::start(1);
    for args in PRINTING {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let output = command(&cluster, args).stdout(full).output().unwrap();
        assert_os_error(&output, args, ">/dev/full", "No space left");
    }
}

#[test]
fn a_reader_that_had_enough_is_not_an_error() {
    let cluster = Cluster::start(1);
    for args in [&["status", "--key", "k"][..], &["man"], &["--help"]] {
        let mut cmd = command(&cluster, args);
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        // The reader goes away before reading a byte, as `| head -c0` would.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert_ne!(
            output.status.code(),
            Some(OS_ERROR),
            "{args:?}: {}",
            describe(&output)
        );
        assert!(output.stderr.is_empty(), "{args:?}: {}", describe(&output));
    }
}

#[test]
fn run_with_standard_output_closed_keeps_the_commands_status() {
    let cluster = Cluster::start(1);
    let mut cmd = cluster.redlock();
    cmd.args(["run", "--key", "k", "--", "sh", "-c", "exit 3"]);
    closing(&mut cmd, &[1]);
    let output = cmd.output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    assert!(output.stderr.is_empty(), "{}", describe(&output));
}
