//! GitHub Actions: SIGINT to the step's process alone, 7.5 s, SIGTERM, 2.5 s, SIGKILL to it
//! alone; `if: always()` steps; at the end of the job SIGKILL to whatever the job left.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use super::{
    Case, Deploy, KEY, TTL, assert_gone, deploy_started, killed_and_left_to_expire, left_to_expire,
    release_script, write_deploy,
};
use crate::common::ci::github::{Job, Step};
use crate::common::{Cluster, eventually, process_alive};

fn job(case: &Case, deploy: Deploy) -> Job {
    let job = Job::new(case.root(), case.env());
    write_deploy(&job.workspace, deploy);
    job
}

/// The page's deploy step: `exec` makes redlock the step's process, the one the runner signals.
fn run_step(job: &mut Job, exec: bool) -> Step {
    let exec = if exec { "exec " } else { "" };
    let script = format!("{exec}redlock run --key {KEY} --ttl {TTL} --wait 1m -- ./deploy.sh\n");
    job.start(&script, &BTreeMap::new())
}

/// A job whose deploy step runs the deploy under `run`; returns the job, the step, the
/// deploy's pid and its token.
fn deploying(case: &Case, deploy: Deploy, exec: bool) -> (Job, Step, i32, String) {
    let mut job = job(case, deploy);
    let step = run_step(&mut job, exec);
    let (pid, token) = deploy_started(&job.workspace);
    (job, step, pid, token)
}

#[test]
fn an_execd_run_forwards_sigint_releases_and_the_step_exits_130() {
    let case = Case::new();
    let (mut job, step, _, _) = deploying(&case, Deploy::Stops, true);
    let ended = job.cancel(step);
    // 130: the deploy died of the SIGINT redlock forwarded, before the runner's SIGTERM.
    assert_eq!(ended.status.code(), Some(130), "{}", ended.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
    job.assert_left_nothing();
}

#[test]
fn an_execd_run_whose_deploy_ignores_the_signals_is_killed_and_the_lock_expires() {
    let case = Case::new();
    let (mut job, step, deploy, token) = deploying(&case, Deploy::IgnoresInterrupts, true);
    let ended = job.cancel(step);
    killed_and_left_to_expire(&case, &ended, deploy, &token);
    job.assert_left_nothing();
}

/// Without `exec`, bash holds the SIGINT until its command ends (which it never does, as the
/// command never got it) and dies of the SIGTERM: redlock and the deploy run on, the lock
/// held, until the end of the job kills them all.
#[test]
fn without_exec_the_signals_stop_at_bash_and_the_lock_outlives_the_step() {
    let case = Case::new();
    let (mut job, step, deploy, token) = deploying(&case, Deploy::Stops, false);
    let ended = job.cancel(step);
    assert_eq!(
        ended.status.signal(),
        Some(libc::SIGTERM),
        "{}",
        ended.describe()
    );
    assert!(process_alive(deploy), "the deploy got a signal after all");
    assert_eq!(case.cluster.holding(KEY, &token), 3);
    assert!(
        job.end() >= 3,
        "redlock, its guard and the deploy are left to the job's end"
    );
    left_to_expire(&case.cluster, &token);
    assert_gone(deploy, "the deploy");
}

/// The lock across steps: acquire writes the token to $GITHUB_ENV, the deploy step `exec`s
/// the deploy, and the `if: always()` step releases after the cancelled one.
#[test]
fn acquire_then_a_cancelled_execd_deploy_then_the_always_step_releases() {
    let case = Case::new();
    let mut job = job(&case, Deploy::Stops);
    let none = BTreeMap::new();
    let take = job.start(
        &format!(
            "token=$(redlock acquire --key {KEY} --ttl 1m --wait 1m)\n\
             echo \"REDLOCK_TOKEN=$token\" >> \"$GITHUB_ENV\"\n"
        ),
        &none,
    );
    let taken = job.finish(take);
    assert_eq!(taken.status.code(), Some(0), "{}", taken.describe());
    let token = job.env["REDLOCK_TOKEN"].clone();
    let deploy = job.start("exec ./deploy.sh\n", &none);
    deploy_started(&job.workspace);
    assert_eq!(case.cluster.holding(KEY, &token), 3);
    // The deploy was the step's process: it died of the SIGINT (a shell reports 130).
    let ended = job.cancel(deploy);
    assert_eq!(
        ended.status.signal(),
        Some(libc::SIGINT),
        "{}",
        ended.describe()
    );
    let release = job.start(&release_script(), &none);
    let released = job.finish(release);
    assert_eq!(released.status.code(), Some(0), "{}", released.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
    job.assert_left_nothing();
}

/// A job cancelled while its `run --wait` waits in line leaves the line at once (130), and
/// its deploy never runs.
#[test]
fn a_job_cancelled_while_it_waits_in_line_leaves_at_once() {
    let case = Case::new();
    let mut job = job(&case, Deploy::Stops);
    let holder = case
        .cluster
        .redlock()
        .args(["acquire", "--key", KEY, "--ttl", "1m"])
        .output()
        .unwrap();
    assert!(holder.status.success());
    let step = run_step(&mut job, true);
    let queued = eventually(Duration::from_secs(30), || waiting(&case.cluster) == 1);
    assert!(queued, "the job never queued");
    let ended = job.cancel(step);
    assert_eq!(ended.status.code(), Some(130), "{}", ended.describe());
    assert!(!job.workspace.join("deploy.pid").exists(), "the deploy ran");
    let left = eventually(Duration::from_secs(10), || waiting(&case.cluster) == 0);
    assert!(left, "the job's place in line was not given back");
    let token = String::from_utf8(holder.stdout).unwrap();
    assert_eq!(
        case.cluster.holding(KEY, token.trim()),
        3,
        "the holder lost the lock"
    );
    job.assert_left_nothing();
}

/// How many wait in line for the key, as `status --json` lists them.
fn waiting(cluster: &Cluster) -> usize {
    let status = cluster
        .redlock()
        .args(["status", "--key", KEY, "--json"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    status["queue"].as_array().map_or(0, Vec::len)
}
