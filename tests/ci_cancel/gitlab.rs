//! GitLab Runner's shell executor: SIGTERM to the job shell's process group, up to 10 minutes,
//! SIGKILL to the group; then `after_script` in a fresh shell.

use std::time::Duration;

use super::{
    Case, Deploy, KEY, TTL, assert_gone, deploy_started, killed_and_left_to_expire, write_deploy,
};
use crate::common::ci::Started;
use crate::common::ci::gitlab::Job;

/// The grace before SIGKILL where the deploy ignores SIGTERM: the runner's 10 minutes,
/// shortened. Meanwhile redlock waits for its command and renews the lock, whatever the
/// length of the wait, so the SIGKILL finds the same state (tests/ci_cancel.rs says so too).
const SHORTENED_GRACE: Duration = Duration::from_secs(2);

/// The runner's grace (`GRACEFUL_TIMEOUT`) where the deploy stops at SIGTERM, capped at a
/// minute so that a test that fails does not hang for ten: the deploy and redlock end long
/// before either.
const GRACE: Duration = Duration::from_secs(60);

/// A job whose script runs `lines` and, once the deploy runs, its pid and token.
fn deploying(case: &Case, deploy: Deploy, lines: &[String]) -> (Job, Started, i32, String) {
    let job = Job::new(case.root(), case.env());
    write_deploy(&job.workspace, deploy);
    let script = job.start(lines);
    let (pid, token) = deploy_started(&job.workspace);
    (job, script, pid, token)
}

fn run_line() -> Vec<String> {
    vec![format!(
        "redlock run --key {KEY} --ttl {TTL} --wait 1m -- ./deploy.sh"
    )]
}

/// redlock gets the group's SIGTERM and forwards it to its command's group (which the runner's
/// signal does not reach), releases, exits 143; the shells' TERM trap makes the script exit 1.
#[test]
fn a_cancelled_script_stops_run_through_its_group_and_the_lock_is_released() {
    let case = Case::new();
    let (job, script, deploy, _) = deploying(&case, Deploy::Stops, &run_line());
    let ended = job.cancel(script, GRACE);
    assert_eq!(ended.status.code(), Some(1), "{}", ended.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
    assert_gone(deploy, "the deploy");
}

#[test]
fn a_deploy_that_ignores_sigterm_is_killed_with_redlock_and_the_lock_expires() {
    let case = Case::new();
    let (job, script, deploy, token) = deploying(&case, Deploy::IgnoresInterrupts, &run_line());
    let ended = job.cancel(script, SHORTENED_GRACE);
    // The group's SIGKILL missed the deploy's own group; redlock's guard took it down.
    killed_and_left_to_expire(&case, &ended, deploy, &token);
}

/// The lock across the script and `after_script`: the token in a file of the project
/// directory, which the fresh shell of `after_script` reads.
#[test]
fn acquire_in_the_script_and_release_in_after_script() {
    let case = Case::new();
    let lines = [
        format!("redlock acquire --key {KEY} --ttl 1m --wait 1m > .deploy-lock"),
        "./deploy.sh".to_string(),
    ];
    let (job, script, deploy, _) = deploying(&case, Deploy::Stops, &lines);
    let token = std::fs::read_to_string(job.workspace.join(".deploy-lock")).unwrap();
    assert_eq!(case.cluster.holding(KEY, token.trim()), 3);
    let ended = job.cancel(script, GRACE);
    assert_eq!(ended.status.code(), Some(1), "{}", ended.describe());
    assert_gone(deploy, "the deploy");
    let after = job.start(&[format!(
        "if [ -s .deploy-lock ]; then \
         redlock release --key {KEY} --token \"$(cat .deploy-lock)\"; fi"
    )]);
    let released = after.end();
    assert_eq!(released.status.code(), Some(0), "{}", released.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
}
