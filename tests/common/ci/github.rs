//! A GitHub Actions job on a Linux runner, its `run:` steps started and cancelled as the runner
//! does (the paths below are actions/runner's):
//!
//! - A step without `shell:` is its script in a file, run as `bash -e FILE`
//!   (src/Runner.Worker/Handlers/ScriptHandler.cs picks bash, ScriptHandlerHelpers.cs gives
//!   `-e {0}`), in the runner's own process group, with RUNNER_TRACKING_ID in its environment
//!   (src/Runner.Worker/JobExtension.cs sets it for every process of the job).
//! - Every step sees the runner's machine as RUNNER_OS, RUNNER_ARCH and RUNNER_TOOL_CACHE
//!   (a job's `env` may say otherwise, to play another runner).
//! - Later steps see what earlier ones wrote to the files named by $GITHUB_ENV (`NAME=value`
//!   lines) and $GITHUB_PATH (directories put in front of PATH).
//! - Cancelled, or past its `timeout-minutes` (src/Runner.Sdk/ProcessInvoker.cs,
//!   `CancelAndKillProcessTree`): SIGINT to the step's process alone (`SendSignal` is
//!   `kill(pid)`), up to 7.5 s for it to exit, SIGTERM to it, up to 2.5 s, then SIGKILL to
//!   it alone (`NixKillProcessTree` is .NET's `Process.Kill()`, which kills one process).
//! - At the end of the job, every process left that carries the job's RUNNER_TRACKING_ID
//!   gets SIGKILL, one by one in the order /proc lists them (JobExtension.cs, "Cleaning up
//!   orphan processes").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Ended, Started, has_in_environment, processes, signal};

/// How long the runner waits for the step's process after SIGINT (`_sigintTimeout`).
pub const SIGINT_WAIT: Duration = Duration::from_millis(7500);
/// How long it waits after SIGTERM (`_sigtermTimeout`), before SIGKILL.
pub const SIGTERM_WAIT: Duration = Duration::from_millis(2500);

/// The run's URL, as the variables a step sees make it.
pub const JOB_URL: &str = "https://github.com/acme/shop/actions/runs/1658821493";

/// One job: its workspace, its environment, what its steps wrote to $GITHUB_ENV and
/// $GITHUB_PATH so far.
pub struct Job {
    pub workspace: PathBuf,
    /// RUNNER_TEMP: the step scripts and the file-command files live here.
    pub temp: PathBuf,
    /// RUNNER_TOOL_CACHE: where setup actions keep what they installed.
    pub tool_cache: PathBuf,
    pub env: BTreeMap<String, String>,
    path: Vec<String>,
    tracking_id: String,
    steps: u32,
}

/// A running step.
pub struct Step {
    started: Started,
    env_file: PathBuf,
    path_file: PathBuf,
}

impl Step {
    pub fn pid(&self) -> u32 {
        self.started.pid()
    }
}

impl Job {
    /// A job whose workspace and RUNNER_TEMP are made under `root`, with `env` (the
    /// workflow's and the job's `env:`).
    pub fn new(root: &Path, env: BTreeMap<String, String>) -> Job {
        let workspace = root.join("work");
        let temp = root.join("runner-temp");
        let tool_cache = root.join("tool-cache");
        for dir in [&workspace, &temp, &tool_cache] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Job {
            workspace,
            temp,
            tool_cache,
            env,
            path: Vec::new(),
            tracking_id: format!("github_{}", uuid::Uuid::new_v4()),
            steps: 0,
        }
    }

    /// Starts a `run:` step (`step_env`: the step's own `env:`).
    pub fn start(&mut self, script: &str, step_env: &BTreeMap<String, String>) -> Step {
        let file = self.temp.join(format!("step-{}.sh", self.steps + 1));
        std::fs::write(&file, script).unwrap();
        let mut cmd = Command::new("bash");
        cmd.arg("-e").arg(&file);
        self.start_command(cmd, step_env)
    }

    /// Starts a step that is `cmd` (a `run:` step's shell, or an action's `node FILE`), with
    /// the job's environment, the step's own, and what the runner sets for every step.
    pub fn start_command(&mut self, cmd: Command, step_env: &BTreeMap<String, String>) -> Step {
        self.steps += 1;
        let env_file = self.temp.join(format!("set_env_{}", self.steps));
        let path_file = self.temp.join(format!("add_path_{}", self.steps));
        std::fs::write(&env_file, "").unwrap();
        std::fs::write(&path_file, "").unwrap();
        let mut cmd = super::super::redlock_env(cmd);
        cmd.current_dir(&self.workspace)
            // The runner's machine: overridden by `env` to play another one.
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", runner_arch())
            .env("RUNNER_TOOL_CACHE", &self.tool_cache);
        cmd.envs(&self.env).envs(step_env);
        let mut path = self.path.clone();
        path.push(match self.env.get("PATH") {
            Some(path) => path.clone(),
            None => std::env::var("PATH").unwrap_or_default(),
        });
        cmd.env("PATH", path.join(":"))
            .env("GITHUB_ACTIONS", "true")
            .env("CI", "true")
            // What the run's URL is made of (redlock's automatic note names it).
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "acme/shop")
            .env("GITHUB_RUN_ID", "1658821493")
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("RUNNER_TEMP", &self.temp)
            .env("GITHUB_ENV", &env_file)
            .env("GITHUB_PATH", &path_file)
            .env("RUNNER_TRACKING_ID", &self.tracking_id)
            .stdin(std::process::Stdio::null());
        Step {
            started: Started::spawn(&mut cmd),
            env_file,
            path_file,
        }
    }

    /// Waits for the step to end and takes in what it wrote to $GITHUB_ENV and $GITHUB_PATH.
    pub fn finish(&mut self, step: Step) -> Ended {
        let ended = step.started.end();
        self.env.extend(file_commands(&step.env_file));
        let added = std::fs::read_to_string(&step.path_file).unwrap_or_default();
        // Each line goes in front of those added before it.
        for dir in added.lines().filter(|l| !l.is_empty()) {
            self.path.insert(0, dir.to_string());
        }
        ended
    }

    /// Cancels the step as the runner does, and returns how it ended.
    pub fn cancel(&mut self, step: Step) -> Ended {
        let step = self.interrupt(step);
        self.finish(step)
    }

    /// The runner's cancel of a step: its signals and waits, until the step's process exited.
    pub fn interrupt(&mut self, mut step: Step) -> Step {
        let pid = step.pid() as i32;
        signal(pid, libc::SIGINT);
        if !step.started.exits_within(SIGINT_WAIT) {
            signal(pid, libc::SIGTERM);
            if !step.started.exits_within(SIGTERM_WAIT) {
                step.started.kill();
            }
        }
        step
    }

    /// The processes still carrying the job's RUNNER_TRACKING_ID, in pid order.
    pub fn left(&self) -> Vec<i32> {
        processes()
            .into_iter()
            .map(|(pid, _)| pid)
            .filter(|&pid| has_in_environment(pid, "RUNNER_TRACKING_ID", &self.tracking_id))
            .collect()
    }

    /// What is left of the job once whatever was ending had 10 s to end by itself (redlock's
    /// guard exits just after redlock; an orphaned `sleep` of a signalled script finishes).
    pub fn settled(&self) -> Vec<i32> {
        super::super::eventually(std::time::Duration::from_secs(10), || {
            self.left().is_empty()
        });
        self.left()
    }

    /// Checks that the job left no process behind, once those ending had time to ([`settled`]).
    ///
    /// [`settled`]: Job::settled
    pub fn assert_left_nothing(&self) {
        assert_eq!(
            self.settled(),
            Vec::<i32>::new(),
            "the job left processes behind"
        );
    }

    /// The end of the job: SIGKILL to every process it left ([`Job::left`]). Returns how
    /// many there were.
    pub fn end(&self) -> usize {
        let left = self.left();
        for &pid in &left {
            signal(pid, libc::SIGKILL);
        }
        left.len()
    }
}

/// What a file command file holds (GITHUB_ENV, GITHUB_OUTPUT, GITHUB_STATE): `NAME=value`
/// lines, or `NAME<<DELIMITER`, the value's lines, `DELIMITER`; later lines win.
pub fn file_commands(file: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut found = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            found.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            found.insert(name.to_string(), value.to_string());
        }
    }
    found
}

/// RUNNER_ARCH for this machine, as the runner names it.
fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "X64",
        "aarch64" => "ARM64",
        other => panic!("no GitHub runner runs on {other}"),
    }
}
