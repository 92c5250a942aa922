//! A CI job that holds the lock is cancelled or times out: each runner's sequence of signals,
//! replayed against `redlock run` and against `acquire` ... `release` (docs/ci.md, "When a job
//! is cancelled or times out", says what each runner does and what follows; this checks it).
//!
//! Each test starts the job's shell as its runner does (tests/common/ci: the program, its
//! arguments, its process group, its environment), waits until the deploy runs under the lock,
//! then sends what the runner sends, to the processes it sends it to, with its waits. The real
//! waits are kept (GitHub's 7.5 s and 2.5 s, Jenkins' 5 s where the deploy ends), except where
//! the deploy ignores SIGTERM: GitLab Runner's 10 minutes before SIGKILL, Jenkins' 5 s per
//! process tree and the page's `timeout -k 30s` are cut to seconds. In that time redlock only
//! waits for the deploy and renews the lock, so a shorter wait finds at its end what the
//! longer one would (the page says so too).
//!
//! The deploy is `deploy.sh` in the job's workspace (`Deploy`): it either stops at SIGINT and
//! SIGTERM, or ignores both, as a deploy that must not be interrupted might.

mod github;
mod gitlab;
mod jenkins;
mod plain;

use std::path::Path;
use std::time::Duration;

use crate::common::ci::Ended;
use crate::common::{Cluster, eventually, process_alive, wait_for_file};

/// The lock every job here takes, as on the page.
const KEY: &str = "deploy-prod";

/// The TTL of the tests' jobs: short, so that a lock left to expire frees soon, and long
/// enough that it is still there when the test looks right after the kill.
const TTL: &str = "4s";

/// How the deploy takes the runner's signals.
#[derive(Clone, Copy, PartialEq)]
enum Deploy {
    /// It ends at SIGINT or SIGTERM (the default action of both).
    Stops,
    /// It ignores both (`trap '' INT TERM`); only SIGKILL ends it.
    IgnoresInterrupts,
}

/// Writes `deploy.sh` into `workspace`: it records its pid and the token it sees (under `run`),
/// then waits until a file `gate` appears.
fn write_deploy(workspace: &Path, deploy: Deploy) {
    use std::os::unix::fs::PermissionsExt;
    let traps = match deploy {
        Deploy::Stops => "",
        Deploy::IgnoresInterrupts => "trap '' INT TERM",
    };
    let script = format!(
        "#!/bin/sh\n{traps}\necho \"${{REDLOCK_TOKEN:-}}\" > deploy.token\necho $$ > deploy.pid\n\
         while [ ! -e gate ]; do sleep 0.05; done\n"
    );
    let path = workspace.join("deploy.sh");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Waits until deploy.sh runs; returns its pid and the token it saw.
fn deploy_started(workspace: &Path) -> (i32, String) {
    let pid = wait_for_file(&workspace.join("deploy.pid"), Duration::from_secs(30));
    let token = std::fs::read_to_string(workspace.join("deploy.token")).unwrap_or_default();
    (pid.parse().unwrap(), token.trim().to_string())
}

/// Waits until the process is gone (the guard or a signal took it down).
fn assert_gone(pid: i32, what: &str) {
    assert!(
        eventually(Duration::from_secs(10), || !process_alive(pid)),
        "{what} (pid {pid}) still runs"
    );
}

/// The cancelled job's lock was left to its TTL: `token` still holds a majority, with a TTL,
/// and the next job takes the lock once it expired.
fn left_to_expire(cluster: &Cluster, token: &str) {
    let majority = cluster.servers.len() / 2 + 1;
    assert!(
        cluster.holding(KEY, token) >= majority,
        "the lock is not held by {token}: {:?}",
        cluster.values(KEY)
    );
    for server in &cluster.servers {
        if server.get(KEY).as_deref() == Some(token) {
            assert!(
                server.pttl(KEY) > 0,
                "the key has no TTL on {}",
                server.url()
            );
        }
    }
    let next = cluster
        .redlock()
        .args([
            "run", "--key", KEY, "--ttl", TTL, "--wait", "1m", "--", "true",
        ])
        .output()
        .unwrap();
    assert_eq!(
        next.status.code(),
        Some(0),
        "{}",
        crate::common::describe(&next)
    );
}

/// One test's masters, and the directory its job lives in.
struct Case {
    cluster: Cluster,
    root: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        Case {
            cluster: Cluster::start(3),
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.root.path()
    }

    /// The environment of the job: the masters, and redlock on the PATH (the page's install
    /// step, which tests/ci_recipes.rs runs, in short).
    fn env(&self) -> std::collections::BTreeMap<String, String> {
        let bin = crate::common::ci::redlock_bin_dir(self.root());
        [
            ("REDLOCK_SERVERS".to_string(), self.cluster.servers_env()),
            ("PATH".to_string(), crate::common::ci::path_with(&[&bin])),
        ]
        .into()
    }
}

/// The always-run step's script where the token is in REDLOCK_TOKEN (GitHub, Jenkins): it
/// releases only if the lock was taken.
fn release_script() -> String {
    format!(
        "if [ -n \"${{REDLOCK_TOKEN:-}}\" ]; then\n  \
         redlock release --key {KEY} --token \"$REDLOCK_TOKEN\"\nfi\n"
    )
}

/// The runner's SIGKILL ended the job's process (a shell reports 137), redlock's guard took
/// the deploy down with redlock, and the lock was left to its TTL.
fn killed_and_left_to_expire(case: &Case, ended: &Ended, deploy: i32, token: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        ended.status.signal(),
        Some(libc::SIGKILL),
        "{}",
        ended.describe()
    );
    left_to_expire(&case.cluster, token);
    assert_gone(deploy, "the deploy");
}
