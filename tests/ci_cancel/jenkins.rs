//! Jenkins: SIGTERM to every process of the `sh` step (found by its cookie), children before
//! parents, waiting up to 5 s for each tree; no SIGKILL; then `post { always }`.

use std::time::Duration;

use super::{Case, Deploy, KEY, TTL, assert_gone, deploy_started, release_script, write_deploy};
use crate::common::ci::jenkins::{Job, SOFT_KILL_WAIT, Sh};
use crate::common::process_alive;

fn job(case: &Case, deploy: Deploy) -> Job {
    let job = Job::new(case.root(), case.env());
    write_deploy(&job.workspace, deploy);
    job
}

/// A build whose `sh` step runs the deploy under `run`; the step, the deploy's pid and token.
fn deploying(case: &Case, deploy: Deploy) -> (Job, Sh, i32, String) {
    let mut job = job(case, deploy);
    let script = format!("redlock run --key {KEY} --ttl {TTL} --wait 1m -- ./deploy.sh\n");
    let sh = job.start(&script, false);
    let (pid, token) = deploy_started(&job.workspace);
    (job, sh, pid, token)
}

/// The deploy, a descendant of the step's shell, gets Jenkins' SIGTERM first and ends; redlock
/// releases and exits 143, the step's exit code.
#[test]
fn an_aborted_sh_step_stops_the_deploy_and_run_releases() {
    let case = Case::new();
    let (job, sh, deploy, _) = deploying(&case, Deploy::Stops);
    job.abort(SOFT_KILL_WAIT);
    let ended = job.finish(sh);
    assert_eq!(ended.code, 143, "{}", ended.log);
    assert_gone(deploy, "the deploy");
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// Jenkins never sends SIGKILL: a deploy that ignores SIGTERM runs on after the abort, and
/// redlock (which forwards its own SIGTERM and waits) keeps the lock renewed for it until it
/// ends, then releases.
#[test]
fn a_deploy_that_ignores_sigterm_runs_on_under_the_renewed_lock() {
    let case = Case::new();
    let (job, sh, deploy, token) = deploying(&case, Deploy::IgnoresInterrupts);
    // Jenkins waits up to 5 s for each process with the cookie and its descendants: here the
    // deploy outlives its SIGTERM in 3 of them and redlock's guard (which blocks every
    // signal) in 1, 20 s in all. Meanwhile the deploy and redlock only wait, so a shorter
    // wait changes nothing but the test's length.
    job.abort(Duration::from_millis(500));
    let ended = job.finish(sh);
    assert_eq!(ended.code, 143, "{}", ended.log);
    // Past the TTL: only renewal can have kept the lock.
    std::thread::sleep(humantime::parse_duration(TTL).unwrap() + Duration::from_secs(1));
    assert!(process_alive(deploy), "the deploy was killed");
    assert_eq!(case.cluster.holding(KEY, &token), 3);
    std::fs::write(job.workspace.join("gate"), "").unwrap();
    assert_gone(deploy, "the deploy");
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// The lock across stages: `env.REDLOCK_TOKEN = sh(returnStdout: true, ...)`, the aborted
/// deploy stage, the release in `post { always }`.
#[test]
fn acquire_in_one_stage_and_release_in_post_always() {
    let case = Case::new();
    let mut job = job(&case, Deploy::Stops);
    let take = job.start(
        &format!("redlock acquire --key {KEY} --ttl 1m --wait 1m\n"),
        true,
    );
    let taken = job.finish(take);
    assert_eq!(taken.code, 0, "{}", taken.log);
    let token = taken.stdout.trim().to_string();
    job.env.insert("REDLOCK_TOKEN".to_string(), token.clone());
    let sh = job.start("./deploy.sh\n", false);
    let (deploy, _) = deploy_started(&job.workspace);
    assert_eq!(case.cluster.holding(KEY, &token), 3);
    job.abort(SOFT_KILL_WAIT);
    assert_eq!(job.finish(sh).code, 143);
    assert_gone(deploy, "the deploy");
    let release = job.start(&release_script(), false);
    let released = job.finish(release);
    assert_eq!(released.code, 0, "{}", released.log);
    assert!(case.cluster.key_gone_everywhere(KEY));
}
