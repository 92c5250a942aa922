//! How `redlock run` starts the command: what the command finds when it starts (its own
//! process group, its signals as if started by a shell, a parent-death signal), and how a
//! file that is not a binary is run. Exit codes 126 and 127 are in tests/run.rs, the terminal
//! hand-off in tests/terminal.rs and tests/job_control.rs.

use crate::common;

use std::time::Duration;

use crate::common::{Cluster, Running, describe, eventually, process_alive, procfs};

/// A line of /proc/PID/status, such as `SigBlk`, as a bit mask.
fn signal_mask(status: &str, field: &str) -> u64 {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {status}"));
    u64::from_str_radix(line.trim(), 16).unwrap()
}

fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
}

#[test]
fn the_command_leads_its_own_group_with_no_signal_blocked_and_sigpipe_default() {
    let cluster = Cluster::start(1);
    // `exec` so that the status read is the command's own, not a shell's child's.
    let output = cluster
        .redlock()
        .args(["run", "--key", "start", "--", "sh", "-c"])
        .arg("echo pgrp=$(cut -d' ' -f5 /proc/$$/stat) pid=$$; exec cat /proc/self/status")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap();
    let (pgrp, pid) = first
        .strip_prefix("pgrp=")
        .and_then(|rest| rest.split_once(" pid="))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(pgrp, pid, "the command does not lead its own process group");
    // redlock blocks every signal around the spawn; the command must not inherit that.
    assert_eq!(signal_mask(&stdout, "SigBlk"), 0, "{stdout}");
    // redlock (a Rust program) ignores SIGPIPE; the command gets the default, so that
    // `cmd | head` ends it.
    assert_eq!(
        signal_mask(&stdout, "SigIgn") & bit(libc::SIGPIPE),
        0,
        "{stdout}"
    );
}

#[test]
fn a_script_without_a_shebang_runs_with_the_shell() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("plain-script");
    std::fs::write(&script, "echo from-sh; exit 4\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = cluster
        .redlock()
        .args(["run", "--key", "plain", "--"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "from-sh");
}

/// The parent-death signal on its own: with the guard gone first, SIGKILL to redlock still
/// takes the command (its direct child) down.
#[test]
fn the_command_dies_with_redlock_even_without_the_guard() {
    let cluster = Cluster::start(1);
    let mut run = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "pdeath", "--ttl", "5s"]),
    );
    let command = run.wait_ready();
    let redlock = run.child.id() as i32;
    let guard = procfs::guard_of(redlock, command);
    // SAFETY: kill takes plain integers; `guard` is a child of our own child.
    assert_eq!(unsafe { libc::kill(guard, libc::SIGKILL) }, 0);
    common::send_signal(run.child.id(), libc::SIGKILL);
    run.child.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(10), || !process_alive(command)),
        "the command outlived redlock"
    );
}
