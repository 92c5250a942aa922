//! A plain shell runner (cron, a systemd timer, a script of yours) whose time limit is
//! coreutils' `timeout -k GRACE LIMIT`: at LIMIT, SIGTERM to the command and to timeout's
//! process group, then SIGCONT; GRACE later, SIGKILL to both (timeout itself dies of it).
//!
//! The real `timeout` runs here. Its limit is an hour, and the test makes it expire at once
//! with SIGALRM, the signal its timer delivers (coreutils' src/timeout.c, `cleanup`): from
//! there on, everything, the `-k` timer included, is timeout's own doing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{
    Case, Deploy, KEY, TTL, assert_gone, deploy_started, killed_and_left_to_expire, write_deploy,
};
use crate::common::ci::{Ended, Started, signal};

/// A job's directory, with the deploy in it.
fn workspace(case: &Case, deploy: Deploy) -> PathBuf {
    let workspace = case.root().join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    write_deploy(&workspace, deploy);
    workspace
}

/// Runs `timeout -k 2s 1h ARGS...` in `workspace` until the deploy runs, then makes its time
/// limit pass; returns how timeout ended, the deploy's pid and the token it saw.
fn timed_out(case: &Case, workspace: &Path, args: &[&str]) -> (Ended, i32, String) {
    let mut cmd = crate::common::redlock_env(Command::new("timeout"));
    cmd.args(["-k", "2s", "1h"])
        .args(args)
        .current_dir(workspace)
        .envs(case.env())
        .stdin(Stdio::null());
    let job = Started::spawn(&mut cmd);
    let (deploy, token) = deploy_started(workspace);
    signal(job.pid() as i32, libc::SIGALRM);
    (job.end(), deploy, token)
}

/// The job: the deploy under `run`.
const RUN: [&str; 10] = [
    "redlock",
    "run",
    "--key",
    KEY,
    "--ttl",
    TTL,
    "--wait",
    "1m",
    "--",
    "./deploy.sh",
];

#[test]
fn a_timed_out_run_forwards_sigterm_releases_and_timeout_exits_124() {
    let case = Case::new();
    let work = workspace(&case, Deploy::Stops);
    let (ended, deploy, _) = timed_out(&case, &work, &RUN);
    assert_eq!(ended.status.code(), Some(124), "{}", ended.describe());
    assert_gone(deploy, "the deploy");
    assert!(case.cluster.key_gone_everywhere(KEY));
}

#[test]
fn a_deploy_that_ignores_sigterm_is_killed_after_the_grace_and_the_lock_expires() {
    let case = Case::new();
    let work = workspace(&case, Deploy::IgnoresInterrupts);
    let (ended, deploy, token) = timed_out(&case, &work, &RUN);
    // timeout sends SIGKILL to its own group, itself included.
    killed_and_left_to_expire(&case, &ended, deploy, &token);
}

/// The page's script for the lock across steps: traps release on every way out, SIGTERM
/// included (the deploy, in timeout's group, gets SIGTERM too).
#[test]
fn a_timed_out_script_releases_in_its_exit_trap() {
    use std::os::unix::fs::PermissionsExt;
    let case = Case::new();
    let work = workspace(&case, Deploy::Stops);
    let script = work.join("deploy-job");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nset -eu\ntoken=$(redlock acquire --key {KEY} --ttl 1m --wait 1m)\n\
             trap 'redlock release --key {KEY} --token \"$token\"' EXIT\n\
             trap 'exit 143' TERM\ntrap 'exit 130' INT\n./deploy.sh\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (ended, deploy, _) = timed_out(&case, &work, &["./deploy-job"]);
    assert_eq!(ended.status.code(), Some(124), "{}", ended.describe());
    assert_gone(deploy, "the deploy");
    assert!(case.cluster.key_gone_everywhere(KEY));
}
