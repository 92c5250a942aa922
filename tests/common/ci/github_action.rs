//! A JavaScript action's steps in a GitHub Actions job, as actions/runner runs them
//! (src/Runner.Worker/Handlers/NodeScriptActionHandler.cs, ActionManifestManager.cs,
//! FileCommandManager.cs): the action's `action.yml` is read for `runs` and its inputs; the
//! main step is `node MAIN` started by the worker (here, the test process) in the workspace,
//! with each input as `INPUT_<NAME>` (upper-cased, spaces as `_`), the `with:` value or
//! action.yml's default, and GITHUB_OUTPUT and GITHUB_STATE naming files of its own; after the
//! job's steps, its post step is `node POST` with the same inputs and `STATE_<name>` for each
//! state the main step saved, under `post-if: always()`: whether the job passed, failed or was
//! cancelled. Everything else (the environment, GITHUB_ENV and GITHUB_PATH, the cancel's
//! signals, the end-of-job kill) is the `run:` step's, in [`super::github`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use super::Ended;
use super::github::{Job, Step, file_commands};

/// An action as its action.yml declares it.
pub struct Action {
    main: PathBuf,
    post: Option<PathBuf>,
    inputs: BTreeMap<String, Option<String>>,
    pub outputs: BTreeSet<String>,
}

/// A running main step of an action.
pub struct Running {
    step: Step,
    files: StepFiles,
    inputs: BTreeMap<String, String>,
}

/// A main step that ended: how, what it set as outputs, and what its post step gets.
pub struct Used {
    pub ended: Ended,
    pub outputs: BTreeMap<String, String>,
    inputs: BTreeMap<String, String>,
    state: BTreeMap<String, String>,
}

struct StepFiles {
    output: PathBuf,
    state: PathBuf,
}

impl Action {
    /// Reads `dir/action.yml`; a file the runner would refuse, or one this harness does not
    /// play (anything but node24 with `post-if: always()`), fails the test.
    pub fn load(dir: &Path) -> Action {
        assert_node();
        let file = dir.join("action.yml");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let manifest = &docs[0];
        let runs = &manifest["runs"];
        assert_eq!(
            runs["using"].as_str(),
            Some("node24"),
            "{file:?}: runs.using"
        );
        let post = runs["post"].as_str().map(|p| dir.join(p));
        if post.is_some() {
            assert_eq!(
                runs["post-if"].as_str(),
                Some("always()"),
                "{file:?}: post-if"
            );
        }
        let main = dir.join(runs["main"].as_str().expect("runs.main"));
        let inputs = names(&manifest["inputs"])
            .into_iter()
            .map(|name| {
                let default = match &manifest["inputs"][name.as_str()]["default"] {
                    Yaml::String(s) => Some(s.clone()),
                    Yaml::Integer(n) => Some(n.to_string()),
                    Yaml::Boolean(b) => Some(b.to_string()),
                    Yaml::BadValue => None,
                    other => panic!("{file:?}: input {name}: default {other:?}"),
                };
                (name, default)
            })
            .collect();
        Action {
            main,
            post,
            inputs,
            outputs: names(&manifest["outputs"]).into_iter().collect(),
        }
    }

    /// The INPUT_* variables of a step with `with`: each input's value, else its default; a
    /// name action.yml does not declare fails the test (the runner only warns: a test must
    /// not pass on an input the action ignores).
    fn input_env(&self, with: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        for (name, default) in &self.inputs {
            if let Some(default) = default {
                values.insert(name, default.clone());
            }
        }
        for (name, value) in with {
            assert!(
                self.inputs.contains_key(*name),
                "action.yml has no input {name}"
            );
            values.insert(name, value.to_string());
        }
        values
            .into_iter()
            .map(|(name, value)| {
                (
                    format!("INPUT_{}", name.replace(' ', "_").to_uppercase()),
                    value,
                )
            })
            .collect()
    }
}

/// The keys of a YAML mapping.
fn names(map: &Yaml) -> Vec<String> {
    map.as_hash()
        .map(|h| {
            h.keys()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Fails, saying how to install it, unless `node` 20 or later is on PATH. The runner runs the
/// action on its own Node.js 24 (`using: node24`: GitHub's runners made it the default in June
/// 2026 and removed Node.js 20 in September 2026); the action's files use nothing newer than
/// Node.js 20, which Debian ships, so the tests run them on either.
fn assert_node() {
    let how = "install Node.js 20 or later (on Debian or Ubuntu: scripts/ensure-tools tests \
               node=nodejs, or apt-get install nodejs)";
    let output = Command::new("node")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!("the action's tests run it with node, which cannot start ({e}): {how}")
        });
    let version = String::from_utf8_lossy(&output.stdout);
    let major: u32 = version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 20,
        "node {version} is too old for the action's files (Node.js 20 or later): {how}"
    );
}

impl Job {
    /// Starts the main step of `uses: action` `with:` those inputs.
    pub fn uses(&mut self, action: &Action, with: &[(&str, &str)]) -> Running {
        let inputs = action.input_env(with);
        let files = self.step_files();
        let mut env = inputs.clone();
        env.insert("GITHUB_OUTPUT".into(), files.output.display().to_string());
        env.insert("GITHUB_STATE".into(), files.state.display().to_string());
        let mut node = Command::new("node");
        node.arg(&action.main);
        Running {
            step: self.start_command(node, &env),
            files,
            inputs,
        }
    }

    /// Waits for a main step to end; takes in its outputs, state and file commands.
    pub fn finish_action(&mut self, running: Running) -> Used {
        let ended = self.finish(running.step);
        Used {
            ended,
            outputs: file_commands(&running.files.output),
            state: file_commands(&running.files.state),
            inputs: running.inputs,
        }
    }

    /// Cancels a main step as the runner cancels any step.
    pub fn cancel_action(&mut self, running: Running) -> Used {
        let step = self.interrupt(running.step);
        self.finish_action(Running { step, ..running })
    }

    /// Runs the action's post step for the main step `used` (the runner runs it after the
    /// job's steps, however they ended), and returns how it ended.
    pub fn post(&mut self, action: &Action, used: &Used) -> Ended {
        let post = action.post.as_ref().expect("the action has no post step");
        let files = self.step_files();
        let mut env = used.inputs.clone();
        env.insert("GITHUB_OUTPUT".into(), files.output.display().to_string());
        env.insert("GITHUB_STATE".into(), files.state.display().to_string());
        for (name, value) in &used.state {
            env.insert(format!("STATE_{name}"), value.clone());
        }
        let mut node = Command::new("node");
        node.arg(post);
        let step = self.start_command(node, &env);
        self.finish(step)
    }

    /// Empty GITHUB_OUTPUT and GITHUB_STATE files for the next step.
    fn step_files(&self) -> StepFiles {
        let id = uuid::Uuid::new_v4();
        let files = StepFiles {
            output: self.temp.join(format!("set_output_{id}")),
            state: self.temp.join(format!("save_state_{id}")),
        };
        std::fs::write(&files.output, "").unwrap();
        std::fs::write(&files.state, "").unwrap();
        files
    }
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.step.pid()
    }
}
