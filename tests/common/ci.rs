//! CI runners as the tests replay them: how each starts a job's shell, and what it does to the
//! job's processes when the job is cancelled or times out, as the runners' sources say
//! (docs/ci.md, "When a job is cancelled or times out", names the file and function behind each
//! step). tests/ci_recipes.rs runs the manual's CI recipes through these; tests/ci_cancel.rs
//! cancels jobs through them.
//!
//! What is replayed is what decides the fate of a job's processes: the program a runner starts
//! and its arguments, the process group it starts it in, the environment it passes, and the
//! signals it sends, to which processes, in which order, after which waits. Nothing of the
//! runners' other work (logs, artifacts, talking to their server) is.
//!
//! - `github`: a `run:` step of GitHub Actions' runner (actions/runner);
//! - `gitlab`: a job's script under GitLab Runner's shell executor (gitlab-org/gitlab-runner);
//! - `jenkins`: a Pipeline `sh` step (jenkinsci/durable-task-plugin, hudson.util.ProcessTree).

pub mod github;
pub mod github_action;
pub mod gitlab;
pub mod gitlab_component;
pub mod jenkins;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::processes::{Captured, describe};

/// A process a runner started, its output read as it comes.
pub struct Started {
    child: Child,
    stdout: Captured,
    stderr: Captured,
}

/// What a runner saw of a process it started: its exit status and what it wrote.
pub struct Ended {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Started {
    /// Spawns `cmd` with stdin from /dev/null (unless set) and its output piped to the runner.
    pub fn spawn(cmd: &mut Command) -> Started {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let stdout = Captured::stdout_of(&mut child);
        let stderr = Captured::stderr_of(&mut child);
        Started {
            child,
            stdout,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `limit` for the process to exit; true if it did.
    pub fn exits_within(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits up to `limit` for the process to exit and its output pipes to close (their
    /// writers may include what it left running); true if both happened.
    pub fn ends_within(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        self.exits_within(limit)
            && super::eventually(deadline.saturating_duration_since(Instant::now()), || {
                self.stdout.finished() && self.stderr.finished()
            })
    }

    /// SIGKILL to this one process, if it has not exited (never to a pid already reaped).
    pub fn kill(&mut self) {
        if self.child.try_wait().expect("try_wait").is_none() {
            let _ = self.child.kill();
        }
    }

    /// Waits for the process to exit, then for its output pipes to close for up to 5 s (a
    /// process it left running may hold them), and returns what it wrote so far.
    pub fn end(mut self) -> Ended {
        let status = self.child.wait().expect("wait");
        super::eventually(Duration::from_secs(5), || {
            self.stdout.finished() && self.stderr.finished()
        });
        Ended {
            status,
            stdout: self.stdout.text(),
            stderr: self.stderr.text(),
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        self.kill();
        let _ = self.child.wait();
    }
}

impl Ended {
    /// The status as a shell reports it: the exit code, or 128+N for a death by signal N.
    pub fn shell_status(&self) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        match (self.status.code(), self.status.signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => unreachable!("a status is an exit code or a signal"),
        }
    }

    /// The status and output, for assertion messages.
    pub fn describe(&self) -> String {
        describe(&std::process::Output {
            status: self.status,
            stdout: self.stdout.clone().into_bytes(),
            stderr: self.stderr.clone().into_bytes(),
        })
    }
}

/// A directory holding `redlock` (a link to the binary under test), for a job's PATH where the
/// test plays the part of an install step.
pub fn redlock_bin_dir(root: &Path) -> PathBuf {
    let dir = root.join("redlock-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let binary = std::fs::canonicalize(super::redlock_binary()).expect("the binary under test");
    std::os::unix::fs::symlink(binary, dir.join("redlock")).unwrap();
    dir
}

/// `dirs` in front of this process's PATH.
pub fn path_with(dirs: &[&Path]) -> String {
    let mut parts: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    parts.push(std::env::var("PATH").unwrap_or_default());
    parts.join(":")
}

/// The live processes (not zombies) as `(pid, parent pid)`, by pid, as /proc lists them.
pub fn processes() -> Vec<(i32, i32)> {
    let mut found: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let fields = super::procfs::stat_fields(pid)?;
            // After the command's name: state, parent pid, ...
            (fields[0] != "Z").then(|| (pid, fields[1].parse().unwrap_or(0)))
        })
        .collect();
    found.sort();
    found
}

/// True if process `pid` was started with `variable=value` in its environment.
pub fn has_in_environment(pid: i32, variable: &str, value: &str) -> bool {
    let wanted = format!("{variable}={value}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|environ| {
            environ
                .split(|&b| b == 0)
                .any(|entry| entry == wanted.as_bytes())
        })
        .unwrap_or(false)
}

/// Sends `signal` to `pid` (a group if negative), ignoring a process that is already gone.
pub fn signal(pid: i32, signal: i32) {
    // SAFETY: kill takes plain integers; ESRCH for a process gone meanwhile is expected.
    unsafe { libc::kill(pid, signal) };
}
