//! A Jenkins Pipeline's `sh` steps on a Linux agent, started and aborted as Jenkins does:
//!
//! - The script goes to a file in a control directory beside the workspace, and a wrapper
//!   runs it in the background with `nohup sh -c '(... JENKINS_SERVER_COOKIE=$jsc sh -xe
//!   SCRIPT > LOG 2>&1; echo $? > RESULT ...) >&- 2>&- &'`
//!   (jenkinsci/durable-task-plugin, BourneShellScript.java, `scriptLauncherCmd`); Jenkins
//!   reads the step's exit status from RESULT. With `returnStdout: true` the script's stdout
//!   goes to a file of its own.
//! - Aborted (the build's stop button, a `timeout` step or option running out): the step's
//!   stop (FileMonitoringTask.java, `FileMonitoringController.stop`) asks the agent to kill
//!   every process whose environment holds the step's cookie (jenkinsci/jenkins,
//!   core/src/main/java/hudson/util/ProcessTree.java, `Unix.killAll`): for each in the order
//!   of its snapshot of /proc, `killRecursively`: its children first, then itself, each with
//!   SIGTERM (`ProcessHandle.destroy`) and a wait until it is gone or until the deadline,
//!   5 s after the start of that process's tree (`SoftKillWaitSeconds`). No SIGKILL follows:
//!   after the wait only `ProcessKiller` extensions are asked, and none kills on Linux.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{has_in_environment, processes, signal};

/// The shared deadline of one process tree's SIGTERMs (`SoftKillWaitSeconds`).
pub const SOFT_KILL_WAIT: Duration = Duration::from_secs(5);

/// The build's URL, as `BUILD_URL` gives it (redlock's automatic note).
pub const JOB_URL: &str = "https://jenkins.example.com/job/deploy/15/";

/// One build: its workspace, its environment, the cookie of its steps.
pub struct Job {
    pub workspace: PathBuf,
    pub env: BTreeMap<String, String>,
    cookie: String,
    steps: u32,
}

/// A running `sh` step: its control directory's files.
pub struct Sh {
    result: PathBuf,
    log: PathBuf,
    output: Option<PathBuf>,
}

/// How a step ended: its exit status as Jenkins reads it, its log and its captured stdout.
pub struct ShEnded {
    pub code: i32,
    pub log: String,
    pub stdout: String,
}

impl Job {
    /// A build whose workspace is made under `root`, with `env` (its `environment {}`).
    pub fn new(root: &Path, env: BTreeMap<String, String>) -> Job {
        let workspace = root.join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        Job {
            workspace,
            env,
            cookie: format!("durable-{}", uuid::Uuid::new_v4().simple()),
            steps: 0,
        }
    }

    /// Starts `sh script` (`returnStdout: true` when `return_stdout`).
    pub fn start(&mut self, script: &str, return_stdout: bool) -> Sh {
        self.steps += 1;
        let control = self
            .workspace
            .with_file_name(format!("workspace@tmp/durable-{}", self.steps));
        std::fs::create_dir_all(&control).unwrap();
        let file = control.join("script.sh");
        std::fs::write(&file, script).unwrap();
        let (log, result) = (
            control.join("jenkins-log.txt"),
            control.join("jenkins-result.txt"),
        );
        let output = return_stdout.then(|| control.join("output.txt"));
        let q = |p: &Path| format!("'{}'", p.display());
        let redirect = match &output {
            Some(output) => format!("> {} 2> {}", q(output), q(&log)),
            None => format!("> {} 2>&1", q(&log)),
        };
        let wrapper = format!(
            "cp {script} {copy}; {{ while [ -d {control} -a \\! -f {result} ]; do touch {log}; \
             sleep 3; done }} & jsc={cookie}; JENKINS_SERVER_COOKIE=$jsc 'sh' -xe {copy} \
             {redirect}; echo $? > {result}.tmp; mv {result}.tmp {result}; wait",
            script = q(&file),
            copy = format!("'{}.copy'", file.display()),
            control = q(&control),
            result = q(&result),
            log = q(&log),
            cookie = self.cookie,
        );
        let mut cmd = super::super::redlock_env(Command::new("nohup"));
        cmd.args(["sh", "-c", &format!("({wrapper}) >&- 2>&- &")])
            .current_dir(&self.workspace)
            .envs(&self.env)
            .env("WORKSPACE", &self.workspace)
            .env("JENKINS_URL", "https://jenkins.example.com/")
            .env("BUILD_URL", JOB_URL)
            // The launcher's own copy; the script alone gets the real cookie.
            .env("JENKINS_SERVER_COOKIE", "please-do-not-kill-me")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let status = cmd.status().expect("nohup sh -c");
        assert!(status.success(), "the wrapper did not start: {status}");
        Sh {
            result,
            log,
            output,
        }
    }

    /// Waits (up to a minute) for the step's exit status, as Jenkins polls its result file.
    pub fn finish(&self, sh: Sh) -> ShEnded {
        let found = super::super::eventually(Duration::from_secs(60), || {
            std::fs::read_to_string(&sh.result).is_ok_and(|r| r.ends_with('\n'))
        });
        let log = std::fs::read_to_string(&sh.log).unwrap_or_default();
        assert!(found, "the sh step never wrote its result; its log:\n{log}");
        let code = std::fs::read_to_string(&sh.result).unwrap();
        ShEnded {
            code: code.trim().parse().expect("a number in the result file"),
            log,
            stdout: sh
                .output
                .map(|o| std::fs::read_to_string(o).unwrap_or_default())
                .unwrap_or_default(),
        }
    }

    /// Aborts the build's running step as Jenkins does (`ProcessTree.killAll`), with
    /// `soft_kill_wait` as each tree's deadline ([`SOFT_KILL_WAIT`] for Jenkins; a test may
    /// shorten it where the page says why that does not change the outcome). Each process
    /// with the cookie starts a tree of its own, so one that outlives SIGTERM is waited for
    /// once as every such process's descendant, and once more as itself.
    pub fn abort(&self, soft_kill_wait: Duration) {
        let snapshot = processes();
        for &(pid, _) in &snapshot {
            if has_in_environment(pid, "JENKINS_SERVER_COOKIE", &self.cookie) {
                kill_recursively(&snapshot, pid, Instant::now() + soft_kill_wait);
            }
        }
    }
}

/// `UnixProcess.killRecursively`: the children (from the snapshot) first, then `pid`.
fn kill_recursively(snapshot: &[(i32, i32)], pid: i32, deadline: Instant) {
    for &(child, _) in snapshot.iter().filter(|(_, parent)| *parent == pid) {
        kill_recursively(snapshot, child, deadline);
    }
    kill(pid, deadline);
}

/// `UnixProcess.kill`: SIGTERM, then wait until /proc/PID is gone or the deadline passed
/// (sleeping 10 ms, doubling up to 1 s, at least once).
fn kill(pid: i32, deadline: Instant) {
    signal(pid, libc::SIGTERM);
    let status = PathBuf::from(format!("/proc/{pid}/status"));
    let mut sleep = Duration::from_millis(10);
    loop {
        if !status.exists() {
            return;
        }
        std::thread::sleep(sleep);
        sleep = (sleep * 2).min(Duration::from_secs(1));
        if Instant::now() >= deadline {
            return;
        }
    }
}
