//! A GitLab CI job under GitLab Runner's shell executor, its scripts started and cancelled as
//! the runner does (the paths below are gitlab-org/gitlab-runner's):
//!
//! - Each stage (`before_script` and `script` together, then `after_script` in a fresh shell)
//!   is a generated script fed on stdin to `bash -l` (executors/shell/shell.go, `Run`;
//!   shells/bash.go, `GetConfiguration`), started in a process group of its own
//!   (helpers/process/job_unix.go, `setProcessGroup`: Setpgid).
//! - The generated script (shells/bash.go, `BashWriter.Finish`) traps TERM to `exit 1` and
//!   evaluates the job's lines in a subshell that sets the same trap, with errexit and
//!   pipefail on and stdin from /dev/null.
//! - Cancelled, or past its timeout (helpers/process/killer.go, `KillAndWait`;
//!   killer_unix.go): SIGTERM to the whole process group, up to `GracefulTimeout` (10
//!   minutes) for the shell to exit and its output to close, then SIGKILL to the group.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Ended, Started, signal};

/// How long the runner waits after SIGTERM before SIGKILL (`process.GracefulTimeout`).
pub const GRACEFUL_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// How long it waits after SIGKILL before giving up on the process (`process.KillTimeout`).
pub const KILL_TIMEOUT: Duration = Duration::from_secs(10);

/// The job's URL, as `CI_JOB_URL` gives it (redlock's automatic note).
pub const JOB_URL: &str = "https://gitlab.example.com/acme/shop/-/jobs/4242";

/// One job: its project directory (the working directory of every stage) and its variables.
pub struct Job {
    pub workspace: PathBuf,
    pub env: BTreeMap<String, String>,
}

/// `lines` as `BashWriter.Finish` wraps them (without the echo of each command that the runner
/// adds for its log).
fn generated_script(lines: &[String]) -> String {
    let body = lines.join("\n").replace('\'', "'\\''");
    format!(
        "trap 'exit 1' TERM\n\n\
         case \"$(set -o)\" in *\"pipefail\"*) set -o pipefail;; esac; set -o errexit\n\
         set +o noclobber\n\
         (trap 'exit 1' TERM; eval '{body}') < /dev/null\n\
         exit 0\n"
    )
}

impl Job {
    /// A job whose project directory is made under `root`, with `env` (its variables).
    pub fn new(root: &Path, env: BTreeMap<String, String>) -> Job {
        let workspace = root.join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        Job { workspace, env }
    }

    /// Starts one stage's shell with `lines` (each an entry of `script:`, `before_script:` or
    /// `after_script:`). `--noprofile` leaves out the host's login files, which are not the
    /// runner's to choose.
    pub fn start(&self, lines: &[String]) -> Started {
        use std::os::unix::process::CommandExt;
        let mut cmd = super::super::redlock_env(Command::new("bash"));
        cmd.args(["--noprofile", "-l"])
            .current_dir(&self.workspace)
            .envs(&self.env)
            .env("GITLAB_CI", "true")
            .env("CI", "true")
            .env("CI_PROJECT_DIR", &self.workspace)
            .env("CI_JOB_URL", JOB_URL)
            .process_group(0)
            .stdin(Stdio::piped());
        let mut started = Started::spawn(&mut cmd);
        let mut stdin = started.child.stdin.take().expect("stdin");
        stdin
            .write_all(generated_script(lines).as_bytes())
            .expect("the script on the shell's stdin");
        started
    }

    /// Cancels a running stage as the runner does, with `grace` between SIGTERM and SIGKILL
    /// ([`GRACEFUL_TIMEOUT`] for the runner; a test may shorten it where the page says why that
    /// does not change the outcome).
    pub fn cancel(&self, mut stage: Started, grace: Duration) -> Ended {
        let group = -(stage.pid() as i32);
        signal(group, libc::SIGTERM);
        if !stage.ends_within(grace) {
            signal(group, libc::SIGKILL);
            stage.ends_within(KILL_TIMEOUT);
        }
        stage.end()
    }
}
