//! The GitHub Action (action.yml, action/) run as the runner runs it
//! (tests/common/ci/github_action.rs: `node` main and post steps, their inputs, outputs and
//! state files; the cancel's signals and the end-of-job kill of tests/common/ci/github.rs),
//! against three real masters: `lock` holds the lock for the rest of the job and its post step
//! gives it back however the job ends; `run` and `check`; and the install step
//! (`github_action/install.rs`).
//!
//! Each job here gets redlock on PATH from the test (the install step is tested on its own).

mod install;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::ci::github::{JOB_URL, Job};
use crate::common::ci::github_action::{Action, Used};
use crate::common::{Cluster, eventually, wait_for_file};

const KEY: &str = "deploy-prod";

/// What a held lock is on, of the case's 3 masters: a round is won at a majority, and the
/// third master may still have the previous holder's release on its way when a turn ran
/// there (a waiter then keeps its place there, it does not hold it).
const MAJORITY: usize = 2;
/// Short, so that a lock left to expire frees soon; the renewer renews every third of it.
const TTL: &str = "2s";

/// One test's masters and the directory its jobs live in.
struct Case {
    cluster: Cluster,
    root: tempfile::TempDir,
    action: Action,
    jobs: u32,
}

impl Case {
    fn new() -> Case {
        Case {
            cluster: Cluster::start(3),
            root: tempfile::tempdir().unwrap(),
            action: Action::load(Path::new(env!("CARGO_MANIFEST_DIR"))),
            jobs: 0,
        }
    }

    /// A job of its own directory, with the masters in REDLOCK_SERVERS and redlock on PATH.
    fn job(&mut self) -> Job {
        self.jobs += 1;
        let root = self.root.path().join(format!("job-{}", self.jobs));
        std::fs::create_dir_all(&root).unwrap();
        let bin = crate::common::ci::redlock_bin_dir(&root);
        let env: BTreeMap<String, String> = [
            ("REDLOCK_SERVERS".to_string(), self.cluster.servers_env()),
            ("PATH".to_string(), crate::common::ci::path_with(&[&bin])),
        ]
        .into();
        Job::new(&root, env)
    }

    /// A `mode: lock` step with these inputs besides key and ttl, run to its end.
    fn lock(&self, job: &mut Job, with: &[(&str, &str)]) -> Used {
        let running = job.uses(&self.action, &lock_inputs(with));
        job.finish_action(running)
    }

    /// `status --json` of the key.
    fn status(&self) -> serde_json::Value {
        let output = self
            .cluster
            .redlock()
            .args(["status", "--json", "--key", KEY])
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null)
    }
}

fn lock_inputs<'a>(with: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut inputs = vec![("key", KEY), ("ttl", TTL)];
    inputs.extend_from_slice(with);
    inputs
}

/// The step exited with `code`, and its outputs are all set, `exit-code` to `code`.
fn assert_ended(used: &Used, code: i32, acquired: bool) {
    assert_eq!(
        used.ended.status.code(),
        Some(code),
        "{}",
        used.ended.describe()
    );
    assert_eq!(
        used.outputs["exit-code"],
        code.to_string(),
        "{:?}",
        used.outputs
    );
    assert_eq!(
        used.outputs["acquired"],
        acquired.to_string(),
        "{:?}",
        used.outputs
    );
}

/// The holder output, parsed.
fn holder(used: &Used) -> serde_json::Value {
    serde_json::from_str(&used.outputs["holder"])
        .unwrap_or_else(|e| panic!("holder: {e}: {:?}", used.outputs))
}

/// `lock` takes the lock, says so in its outputs (the token on the masters, the holder noted
/// with the run's URL), keeps it renewed past its TTL while the job's other steps run, and the
/// post step gives it back at the end of a job that passed.
#[test]
fn lock_holds_the_lock_for_the_rest_of_the_job_and_post_releases_it() {
    let mut case = Case::new();
    let mut job = case.job();
    let used = case.lock(&mut job, &[]);
    assert_ended(&used, 0, true);
    assert_eq!(
        case.action.outputs,
        ["acquired", "exit-code", "holder", "token"]
            .map(String::from)
            .into()
    );
    let token = &used.outputs["token"];
    assert_eq!(case.cluster.holding(KEY, token), 3);
    assert_eq!(holder(&used)["note"], JOB_URL);
    // The holder is the runner's worker (here the test process), which the renewer follows.
    assert_eq!(holder(&used)["pid"], std::process::id());
    std::thread::sleep(Duration::from_secs(3));
    let deploy = job.start(
        "redlock status --key deploy-prod >/dev/null\n",
        &BTreeMap::new(),
    );
    let deployed = job.finish(deploy);
    assert_eq!(
        deployed.status.code(),
        Some(0),
        "held past its TTL?\n{}",
        deployed.describe()
    );
    assert_eq!(case.cluster.holding(KEY, token), 3, "not renewed");
    let post = job.post(&case.action, &used);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
    job.assert_left_nothing();
}

/// Two jobs of one key: the second waits in line while the first holds, and takes the lock
/// once the first job's post step gave it back.
#[test]
fn two_jobs_serialize() {
    let mut case = Case::new();
    let mut first = case.job();
    let mut second = case.job();
    let used = case.lock(&mut first, &[]);
    assert_ended(&used, 0, true);
    let waiting = second.uses(&case.action, &lock_inputs(&[("wait", "30s")]));
    assert!(
        eventually(Duration::from_secs(10), || case.status()["queue"]
            .as_array()
            .is_some_and(|q| q.len() == 1)),
        "the second job never queued: {}",
        case.status()
    );
    assert!(case.cluster.holding(KEY, &used.outputs["token"]) >= MAJORITY);
    let released = Instant::now();
    let post = first.post(&case.action, &used);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    let taken = second.finish_action(waiting);
    assert_ended(&taken, 0, true);
    assert!(
        released.elapsed() < Duration::from_secs(5),
        "the second job took {:?}",
        released.elapsed()
    );
    assert!(case.cluster.holding(KEY, &taken.outputs["token"]) >= MAJORITY);
    let post = second.post(&case.action, &taken);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
    first.assert_left_nothing();
    second.assert_left_nothing();
}

/// A job cancelled in a later step: the runner still runs the post step, and the lock is free
/// as soon as it ended (looked at at once, while a lock left to expire would still live for
/// up to its TTL: the renewer kept it fresh until the release).
#[test]
fn a_cancelled_jobs_lock_is_free_at_once() {
    let mut case = Case::new();
    let mut job = case.job();
    let used = case.lock(&mut job, &[]);
    assert_ended(&used, 0, true);
    let deploy = job.start("echo $$ > deploy.pid\nexec sleep 60\n", &BTreeMap::new());
    wait_for_file(&job.workspace.join("deploy.pid"), Duration::from_secs(10));
    let cancelled = job.cancel(deploy);
    assert_eq!(
        cancelled.shell_status(),
        128 + libc::SIGINT,
        "{}",
        cancelled.describe()
    );
    let post = job.post(&case.action, &used);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    assert!(
        case.cluster.values(KEY).iter().all(Option::is_none),
        "the lock is still held"
    );
    job.assert_left_nothing();
}

/// A job killed outright (its machine gone: no post step, every process of the job killed,
/// the renewer with them): the lock expires within its TTL.
#[test]
fn a_killed_jobs_lock_expires_within_its_ttl() {
    let mut case = Case::new();
    let mut job = case.job();
    let used = case.lock(&mut job, &[]);
    assert_ended(&used, 0, true);
    assert_eq!(
        job.end(),
        1,
        "the renewer, and nothing else, outlives the step"
    );
    let killed = Instant::now();
    assert!(case.cluster.holding(KEY, &used.outputs["token"]) >= MAJORITY);
    assert!(
        eventually(Duration::from_secs(4), || case
            .cluster
            .values(KEY)
            .iter()
            .all(Option::is_none)),
        "the lock outlived its TTL"
    );
    assert!(
        killed.elapsed() <= Duration::from_millis(2500),
        "expired after {:?}",
        killed.elapsed()
    );
}

/// A job whose later step fails: the post step releases.
#[test]
fn a_failed_job_releases() {
    let mut case = Case::new();
    let mut job = case.job();
    let used = case.lock(&mut job, &[]);
    let failed = job.start("exit 3\n", &BTreeMap::new());
    assert_eq!(job.finish(failed).status.code(), Some(3));
    let post = job.post(&case.action, &used);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    assert!(
        case.cluster.values(KEY).iter().all(Option::is_none),
        "the lock is still held"
    );
    job.assert_left_nothing();
}

/// A run with a lower `order` than one that already took the lock is skipped with exit 81
/// (README: outdated), takes nothing, and its post step has nothing to give back.
#[test]
fn an_outdated_order_is_skipped_with_exit_81() {
    let mut case = Case::new();
    let mut newer = case.job();
    let used = case.lock(&mut newer, &[("order", "7")]);
    assert_ended(&used, 0, true);
    assert_eq!(holder(&used)["order"], 7);
    assert_eq!(newer.post(&case.action, &used).status.code(), Some(0));
    let mut older = case.job();
    let skipped = case.lock(&mut older, &[("order", "6"), ("wait", "10s")]);
    assert_ended(&skipped, 81, false);
    assert_eq!(skipped.outputs["token"], "");
    assert!(
        skipped.ended.stderr.contains("outdated"),
        "{}",
        skipped.ended.describe()
    );
    let post = older.post(&case.action, &skipped);
    assert_eq!(post.status.code(), Some(0), "{}", post.describe());
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// `supersede: true`: a newer waiter evicts the older one, which ends with exit 80 without
/// the lock; `note` says what the holder record notes instead of the run's URL.
#[test]
fn supersede_evicts_the_older_waiter_and_note_is_noted() {
    let mut case = Case::new();
    let mut holder_job = case.job();
    let held = case.lock(&mut holder_job, &[("note", "INC-9")]);
    assert_ended(&held, 0, true);
    assert_eq!(holder(&held)["note"], "INC-9");
    let superseding = [("wait", "30s"), ("supersede", "true")];
    let mut older = case.job();
    let waiting = older.uses(&case.action, &lock_inputs(&superseding));
    assert!(
        eventually(Duration::from_secs(10), || case.status()["queue"]
            .as_array()
            .is_some_and(|q| q.len() == 1)),
        "the older job never queued"
    );
    let mut newer = case.job();
    let newest = newer.uses(&case.action, &lock_inputs(&superseding));
    let evicted = older.finish_action(waiting);
    assert_ended(&evicted, 80, false);
    assert_eq!(holder_job.post(&case.action, &held).status.code(), Some(0));
    let taken = newer.finish_action(newest);
    assert_ended(&taken, 0, true);
    assert_eq!(newer.post(&case.action, &taken).status.code(), Some(0));
    assert_eq!(older.post(&case.action, &evicted).status.code(), Some(0));
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// The lock held elsewhere past `wait`: exit 75, and `holder` names who holds it.
#[test]
fn a_lock_held_elsewhere_fails_with_75_naming_the_holder() {
    let mut case = Case::new();
    let token = case
        .cluster
        .acquire(KEY, &["--ttl", "1m", "--note", "INC-7"]);
    let mut job = case.job();
    let used = case.lock(&mut job, &[("wait", "0")]);
    assert_ended(&used, 75, false);
    assert_eq!(holder(&used)["note"], "INC-7");
    assert_eq!(job.post(&case.action, &used).status.code(), Some(0));
    assert_eq!(
        case.cluster.holding(KEY, &token),
        3,
        "the holder lost its lock"
    );
}

/// Cancelled while it waits in line: the step leaves the line within the runner's SIGINT
/// wait (130), and the holder keeps its lock.
#[test]
fn a_lock_step_cancelled_while_it_waits_leaves_the_line() {
    let mut case = Case::new();
    let token = case.cluster.acquire(KEY, &["--ttl", "1m"]);
    let mut job = case.job();
    let waiting = job.uses(&case.action, &lock_inputs(&[]));
    assert!(
        eventually(Duration::from_secs(10), || case.status()["queue"]
            .as_array()
            .is_some_and(|q| q.len() == 1)),
        "the job never queued"
    );
    let cancelled = Instant::now();
    let used = job.cancel_action(waiting);
    assert!(
        cancelled.elapsed() < Duration::from_secs(5),
        "{:?}",
        cancelled.elapsed()
    );
    assert_ended(&used, 130, false);
    assert_eq!(job.post(&case.action, &used).status.code(), Some(0));
    assert!(
        eventually(Duration::from_secs(10), || case.status()["queue"]
            .as_array()
            .is_none_or(Vec::is_empty)),
        "the job's place in line was not given back"
    );
    assert!(case.cluster.holding(KEY, &token) >= MAJORITY);
    job.assert_left_nothing();
}

/// `run`: the command runs under the lock with the inputs' options, the step ends with its
/// status, and the lock is free after it (the post step has nothing to do).
#[test]
fn run_mode_runs_one_command_under_the_lock() {
    let mut case = Case::new();
    let mut job = case.job();
    let command = "redlock status --json --key deploy-prod > status.json\n\
                   echo \"$REDLOCK_TOKEN\" > token\nexit 3";
    let running = job.uses(
        &case.action,
        &[
            ("mode", "run"),
            ("key", KEY),
            ("ttl", TTL),
            ("command", command),
        ],
    );
    let used = job.finish_action(running);
    assert_ended(&used, 3, true);
    let status: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(job.workspace.join("status.json")).unwrap())
            .unwrap();
    assert_eq!(status["holder"]["note"], JOB_URL);
    let seen = std::fs::read_to_string(job.workspace.join("token")).unwrap();
    assert_eq!(used.outputs["token"], seen.trim());
    assert!(case.cluster.key_gone_everywhere(KEY));
    assert_eq!(job.post(&case.action, &used).status.code(), Some(0));
    job.assert_left_nothing();
}

/// `check`: the holder while one holds it, nothing when the lock is free; both exit 0.
#[test]
fn check_mode_says_who_holds_the_lock() {
    let mut case = Case::new();
    let mut job = case.job();
    let check = [("mode", "check"), ("key", KEY)];
    let running = job.uses(&case.action, &check);
    let free = job.finish_action(running);
    assert_eq!(
        free.ended.status.code(),
        Some(0),
        "{}",
        free.ended.describe()
    );
    // status's own code: 1, the lock is free.
    assert_eq!(free.outputs["exit-code"], "1");
    assert_eq!(free.outputs["holder"], "");
    let token = case
        .cluster
        .acquire(KEY, &["--ttl", "1m", "--note", "INC-7"]);
    let running = job.uses(&case.action, &check);
    let held = job.finish_action(running);
    assert_ended(&held, 0, false);
    assert_eq!(holder(&held)["note"], "INC-7");
    assert!(case.cluster.holding(KEY, &token) >= MAJORITY);
}

/// Bad input: one line on stderr naming the input and what to give, exit 64.
#[test]
fn a_bad_mode_is_one_clear_line() {
    let mut case = Case::new();
    let mut job = case.job();
    let running = job.uses(&case.action, &[("mode", "lcok"), ("key", KEY)]);
    let used = job.finish_action(running);
    assert_eq!(
        used.ended.status.code(),
        Some(64),
        "{}",
        used.ended.describe()
    );
    assert_eq!(
        used.ended.stderr.trim(),
        "::error::redlock action: mode \"lcok\": give lock, run, check or install"
    );
}
