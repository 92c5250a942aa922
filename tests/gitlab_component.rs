//! The GitLab CI/CD component (templates/lock.yml) included with its inputs as GitLab expands
//! them (tests/common/ci/gitlab_component.rs) and its job run as GitLab Runner's shell
//! executor runs it (tests/common/ci/gitlab.rs: `before_script` and `script` in one shell,
//! `after_script` in a fresh one after a failure or a cancel too; a cancel is SIGTERM to the
//! shell's process group, SIGKILL after the grace), against three real masters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::ci::gitlab::{JOB_URL, Job};
use crate::common::ci::gitlab_component::{ComponentJob, Input, include};
use crate::common::ci::{Ended, Started, processes, signal};
use crate::common::release::{Release, VERSION};
use crate::common::{Cluster, eventually, wait_for_file};

const KEY: &str = "deploy-prod";
const TTL: &str = "2s";

/// A script that says it started, then waits for a file `gate` in the project directory.
const GATED: [&str; 2] = [
    "echo yes > started",
    "while [ ! -e gate ]; do sleep 0.05; done",
];

struct Case {
    cluster: Cluster,
    root: tempfile::TempDir,
    jobs: u32,
}

/// One included job, ready to run.
struct Runner {
    job: Job,
    component: ComponentJob,
}

impl Case {
    fn new() -> Case {
        Case {
            cluster: Cluster::start(3),
            root: tempfile::tempdir().unwrap(),
            jobs: 0,
        }
    }

    /// The component included with `inputs` (`key` and `ttl` this file's unless given), for a job of its own directory
    /// whose project variables are `settings` besides the masters, with redlock on PATH
    /// unless it installs it.
    fn job(&mut self, inputs: &[(&str, Input)], settings: &[(&str, &str)]) -> Runner {
        self.jobs += 1;
        let root = self.root.path().join(format!("job-{}", self.jobs));
        std::fs::create_dir_all(&root).unwrap();
        let mut given = inputs.to_vec();
        for (name, value) in [("key", KEY), ("ttl", TTL)] {
            if !given.iter().any(|(given, _)| *given == name) {
                given.push((name, text(value)));
            }
        }
        let component = include(&component_file(), &given);
        let mut project: BTreeMap<String, String> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        project.insert("REDLOCK_SERVERS".into(), self.cluster.servers_env());
        if !project.contains_key("REDLOCK_RELEASE_URL") {
            let bin = crate::common::ci::redlock_bin_dir(&root);
            project.insert("PATH".into(), crate::common::ci::path_with(&[&bin]));
        }
        let env = component.environment(&project);
        Runner {
            job: Job::new(&root, env),
            component,
        }
    }

    /// Held on a majority of the 3 masters: a turn is won there, and the third may still
    /// have the previous holder's release on its way when the turn ran on it.
    fn token_held(&self, token: &str) -> bool {
        self.cluster.holding(KEY, token) >= 2
    }

    fn free(&self) -> bool {
        self.cluster.values(KEY).iter().all(Option::is_none)
    }

    fn queued(&self) -> usize {
        let output = self
            .cluster
            .redlock()
            .args(["status", "--json", "--key", KEY])
            .output()
            .unwrap();
        let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        status["queue"].as_array().map_or(0, Vec::len)
    }
}

impl Runner {
    /// Starts `before_script` and `script` in one shell.
    fn start(&self) -> Started {
        self.job.start(
            &[
                self.component.before_script.clone(),
                self.component.script.clone(),
            ]
            .concat(),
        )
    }

    /// Runs `after_script`, which must succeed.
    fn after(&self) -> Ended {
        let ended = self.job.start(&self.component.after_script).end();
        assert_eq!(
            ended.status.code(),
            Some(0),
            "after_script: {}",
            ended.describe()
        );
        ended
    }

    fn path(&self, name: &str) -> PathBuf {
        self.job.workspace.join(name)
    }

    /// The token the job keeps for its after_script.
    fn token(&self) -> String {
        wait_for_file(&self.path(".redlock/token"), Duration::from_secs(10))
    }
}

fn component_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/lock.yml")
}

fn text(value: &str) -> Input {
    Input::Text(value.to_string())
}

fn script(lines: &[&str]) -> Input {
    Input::List(lines.iter().map(|l| l.to_string()).collect())
}

/// The included job is named and staged by its inputs, and its defaults are this release's.
#[test]
fn the_component_expands_with_its_inputs() {
    let job = include(
        &component_file(),
        &[
            ("key", text(KEY)),
            ("job", text("deploy-prod")),
            ("script", script(&["./deploy.sh"])),
        ],
    );
    assert_eq!(
        (job.name.as_str(), job.stage.as_str()),
        ("deploy-prod", "deploy")
    );
    assert_eq!(job.script, ["./deploy.sh"]);
    assert_eq!(job.variables["REDLOCK_LOCK_KEY"], KEY);
    assert_eq!(job.variables["REDLOCK_LOCK_VERSION"], VERSION);
    assert_eq!(
        job.variables["REDLOCK_LOCK_RELEASE_URL"],
        "$REDLOCK_RELEASE_URL"
    );
}

/// Two jobs of one key: the second waits in line while the first runs its script, with the
/// lock renewed past its TTL and noted with the job's URL, and goes once the first job's
/// after_script gave it back.
#[test]
fn two_jobs_serialize() {
    let mut case = Case::new();
    let first = case.job(&[("script", script(&GATED))], &[]);
    let second = case.job(&[("script", script(&["touch ran"]))], &[]);
    let running = first.start();
    let token = first.token();
    wait_for_file(&first.path("started"), Duration::from_secs(10));
    let waiting = second.start();
    assert!(
        eventually(Duration::from_secs(10), || case.queued() == 1),
        "the second job never queued"
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(case.token_held(&token), "not renewed past its TTL");
    let status = case
        .cluster
        .redlock()
        .args(["status", "--json", "--key", KEY])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["holder"]["note"], JOB_URL);
    assert!(
        !second.path("ran").exists(),
        "the second job ran under the first one's lock"
    );
    std::fs::write(first.path("gate"), "").unwrap();
    let ended = running.end();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.describe());
    first.after();
    let ended = waiting.end();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.describe());
    assert!(second.path("ran").exists());
    second.after();
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// A cancelled job (SIGTERM to the shell's group; its traps exit 1): the lock is free at once,
/// given back by the renewer when the job's shell exited, before after_script runs; after_script
/// then finds nothing to give back and says so without failing.
#[test]
fn a_cancelled_jobs_lock_is_free_at_once() {
    let mut case = Case::new();
    let runner = case.job(&[("script", script(&GATED))], &[]);
    let running = runner.start();
    let token = runner.token();
    wait_for_file(&runner.path("started"), Duration::from_secs(10));
    assert!(case.token_held(&token));
    let ended = runner.job.cancel(running, Duration::from_secs(10));
    assert_eq!(ended.status.code(), Some(1), "{}", ended.describe());
    assert!(
        eventually(Duration::from_secs(1), || case.free()),
        "the lock is still held after the job's shell exited"
    );
    let after = runner.after();
    assert!(
        after.stdout.contains("no longer holds the lock"),
        "{}",
        after.describe()
    );
}

/// A job that timed out with no time left for after_script (GitLab skips it then): SIGKILL to
/// the shell's group, and nothing else. The renewer, which follows the job's shell (not GitLab
/// Runner, whose process lives on: the test process plays it here), gives the lock back at
/// once, long before its TTL, and exits.
#[test]
fn a_killed_job_without_after_script_frees_the_lock_at_once() {
    let mut case = Case::new();
    let runner = case.job(&[("script", script(&GATED)), ("ttl", text("30s"))], &[]);
    let running = runner.start();
    let token = runner.token();
    wait_for_file(&runner.path("started"), Duration::from_secs(10));
    assert_eq!(renewers_of(&case.cluster).len(), 1, "one renewer");
    signal(-(running.pid() as i32), libc::SIGKILL);
    drop(running);
    assert!(case.token_held(&token) || case.free());
    assert!(
        eventually(Duration::from_secs(5), || case.free()),
        "a killed job's lock is still held (its TTL is 30 s): the renewer follows something that outlived the job"
    );
    assert!(
        eventually(Duration::from_secs(5), || renewers_of(&case.cluster)
            .is_empty()),
        "the renewer outlived the job"
    );
}

/// A job whose script ignores SIGTERM is killed (SIGKILL to the group after the grace, cut to
/// 1 s: the script only waits meanwhile); GitLab still runs after_script, which releases.
#[test]
fn a_job_killed_after_the_grace_releases_in_after_script() {
    let mut case = Case::new();
    let stubborn = ["trap '' TERM", GATED[0], GATED[1]];
    let runner = case.job(&[("script", script(&stubborn))], &[]);
    let running = runner.start();
    runner.token();
    wait_for_file(&runner.path("started"), Duration::from_secs(10));
    let ended = runner.job.cancel(running, Duration::from_secs(1));
    assert_eq!(
        ended.shell_status(),
        128 + libc::SIGKILL,
        "{}",
        ended.describe()
    );
    runner.after();
    assert!(case.free(), "the lock is still held");
}

/// A job whose machine died (no after_script; the renewer gone with everything else): the lock
/// expires within its TTL.
#[test]
fn a_dead_jobs_lock_expires_within_its_ttl() {
    let mut case = Case::new();
    let runner = case.job(&[("script", script(&GATED))], &[]);
    let running = runner.start();
    let token = runner.token();
    wait_for_file(&runner.path("started"), Duration::from_secs(10));
    let renewers = renewers_of(&case.cluster);
    assert_eq!(renewers.len(), 1, "one renewer");
    // The renewer first: it follows the job's shell, and would give the lock back the moment
    // the shell died; with the machine gone, nothing gives it back.
    signal(renewers[0], libc::SIGKILL);
    signal(-(running.pid() as i32), libc::SIGKILL);
    let died = Instant::now();
    drop(running);
    assert!(case.token_held(&token));
    assert!(
        eventually(Duration::from_secs(4), || case.free()),
        "the lock outlived its TTL"
    );
    assert!(
        died.elapsed() <= Duration::from_millis(2500),
        "expired after {:?}",
        died.elapsed()
    );
}

/// A failed script: the job fails with its status, and after_script releases.
#[test]
fn a_failed_job_releases() {
    let mut case = Case::new();
    let runner = case.job(&[("script", script(&["exit 3"]))], &[]);
    let ended = runner.start().end();
    assert_eq!(ended.status.code(), Some(3), "{}", ended.describe());
    runner.after();
    assert!(case.free(), "the lock is still held");
}

/// An older pipeline (a lower `order`) than one that already took the lock: before_script
/// ends the job with exit 81 before its script, and after_script has nothing to give back.
#[test]
fn an_outdated_order_is_skipped_with_exit_81() {
    let mut case = Case::new();
    let newer = case.job(
        &[
            ("order", text("$CI_PIPELINE_IID")),
            ("script", script(&["true"])),
        ],
        &[("CI_PIPELINE_IID", "7")],
    );
    let ended = newer.start().end();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.describe());
    newer.after();
    let older = case.job(
        &[
            ("order", text("$CI_PIPELINE_IID")),
            ("script", script(&["touch ran"])),
        ],
        &[("CI_PIPELINE_IID", "6")],
    );
    let ended = older.start().end();
    assert_eq!(ended.status.code(), Some(81), "{}", ended.describe());
    assert!(ended.stderr.contains("outdated"), "{}", ended.describe());
    assert!(
        !older.path("ran").exists(),
        "the outdated job ran its script"
    );
    older.after();
    assert!(case.cluster.key_gone_everywhere(KEY));
}

/// With REDLOCK_RELEASE_URL set, before_script installs the release for this machine from it
/// (served on loopback), checked against SHA256SUMS, and the job runs under its redlock.
#[test]
fn the_component_installs_redlock_from_the_release() {
    let mut case = Case::new();
    let release = Release::publish(case.root.path());
    let runner = case.job(
        &[("script", script(&["command -v redlock > which"]))],
        &[("REDLOCK_RELEASE_URL", &release.url)],
    );
    let ended = runner.start().end();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.describe());
    let which = std::fs::read_to_string(runner.path("which")).unwrap();
    assert_eq!(Path::new(which.trim()), runner.path(".redlock/redlock"));
    runner.after();
    assert_eq!(release.asked().len(), 2, "{:?}", release.asked());
    assert!(case.free());
    std::fs::write(release.dir.join(release.archive()), "tampered").unwrap();
    let tampered = case.job(
        &[("script", script(&["touch ran"]))],
        &[("REDLOCK_RELEASE_URL", &release.url)],
    );
    let ended = tampered.start().end();
    assert_eq!(ended.status.code(), Some(1), "{}", ended.describe());
    assert!(
        ended.stderr.contains("fails its sum: not installed"),
        "{}",
        ended.describe()
    );
    assert!(!tampered.path("ran").exists());
}

/// The renewers `acquire --renew-while` left for this cluster's masters.
fn renewers_of(cluster: &Cluster) -> Vec<i32> {
    processes()
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|&pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmdline
                .split(|&b| b == 0)
                .any(|arg| arg == b"__renew-while")
                && crate::common::ci::has_in_environment(
                    pid,
                    "REDLOCK_SERVERS",
                    &cluster.servers_env(),
                )
        })
        .collect()
}
