//! The page's GitHub Actions workflows, read by a YAML parser and run as the runner runs them:
//! each job's `run:` steps in order (tests/common/ci/github.rs), a step with no `if:` only
//! while every step before it succeeded, an `if: always()` step whatever happened before; a
//! step that uses this repository's Action runs its files (tests/common/ci/github_action.rs),
//! and its post step after the job's steps, whatever happened; then the job's end kills what
//! is left (the Action's renewer, which would stop by itself within a third of its TTL).

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

use super::{ACTION, Bench, Kind, recipes, write_stubs};
use crate::common::ci::github::{self, Job};
use crate::common::ci::github_action::{Action, Used};

/// What `${{ github.run_number }}` is in the tests' runs.
const RUN_NUMBER: &str = "42";

#[test]
fn the_github_actions_workflows_run() {
    let bench = Bench::new();
    for (n, workflow) in recipes(Kind::Github).iter().enumerate() {
        let docs = YamlLoader::load_from_str(workflow)
            .unwrap_or_else(|e| panic!("docs/ci.md: a workflow that is not YAML: {e}"));
        let doc = &docs[0];
        assert!(!doc["on"].is_badvalue(), "a workflow without `on:`");
        let jobs = doc["jobs"].as_hash().expect("`jobs:`");
        assert_eq!(jobs.len(), 1, "one job per recipe");
        for job in jobs.values() {
            let mut env = variables(&bench, &doc["env"]);
            env.extend(variables(&bench, &job["env"]));
            let mut runner = Job::new(&bench.job_root(Kind::Github, n), env);
            write_stubs(&runner.workspace);
            let failed = run_steps(&bench, &mut runner, &job["steps"]);
            assert!(failed.is_empty(), "{}\n{workflow}", failed.join("\n"));
            if workflow.contains(ACTION) {
                runner.end();
            }
            bench.check(&runner.workspace, workflow, Some(github::JOB_URL));
            assert_eq!(
                runner.settled(),
                Vec::<i32>::new(),
                "the job left processes behind"
            );
        }
    }
}

/// Runs the steps, then the post steps of the actions they used, last first; returns what each
/// failed one wrote.
fn run_steps(bench: &Bench, runner: &mut Job, steps: &Yaml) -> Vec<String> {
    let mut failed = Vec::new();
    let mut used: Vec<(Action, Used)> = Vec::new();
    for step in steps.as_vec().expect("`steps:`") {
        if let Some(action) = step["uses"].as_str() {
            if format!("uses: {action}").starts_with(ACTION) {
                if !failed.is_empty() {
                    continue;
                }
                let this = Action::load(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
                let with = variables(bench, &step["with"]);
                let with: Vec<(&str, &str)> =
                    with.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let running = runner.uses(&this, &with);
                let ended = runner.finish_action(running);
                if !ended.ended.status.success() {
                    failed.push(format!(
                        "step {:?}: {}",
                        step["name"],
                        ended.ended.describe()
                    ));
                }
                used.push((this, ended));
                continue;
            }
            // The workspace is the test's: it holds what a checkout would bring.
            assert!(
                action.starts_with("actions/checkout@"),
                "cannot run {action}"
            );
            continue;
        }
        match step["if"].as_str() {
            None if !failed.is_empty() => continue,
            None | Some("always()") => {}
            Some(other) => panic!("the docs test cannot evaluate `if: {other}`"),
        }
        let script = step["run"]
            .as_str()
            .expect("a step runs a script or uses an action");
        let started = runner.start(&substitute(bench, script), &variables(bench, &step["env"]));
        let ended = runner.finish(started);
        if !ended.status.success() {
            failed.push(format!("step {:?}: {}", step["name"], ended.describe()));
        }
    }
    for (action, main) in used.iter().rev() {
        let ended = runner.post(action, main);
        if !ended.status.success() {
            failed.push(format!("post step: {}", ended.describe()));
        }
    }
    failed
}

/// An `env:` mapping, its values substituted.
fn variables(bench: &Bench, env: &Yaml) -> BTreeMap<String, String> {
    let Some(env) = env.as_hash() else {
        return BTreeMap::new();
    };
    env.iter()
        .map(|(name, value)| {
            let value = value.as_str().expect("a string value (quote numbers)");
            (name.as_str().unwrap().to_string(), substitute(bench, value))
        })
        .collect()
}

/// `text` with each `${{ secrets.NAME }}` and `${{ vars.NAME }}` replaced by the setting NAME,
/// and `${{ github.run_number }}` by the run's number; any other expression fails the test.
fn substitute(bench: &Bench, text: &str) -> String {
    let settings = bench.settings();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let end = at + rest[at..].find("}}").expect("`}}` closing `${{`");
        let expression = rest[at + 3..end].trim();
        let value = match expression {
            "github.run_number" => RUN_NUMBER,
            _ => expression
                .strip_prefix("secrets.")
                .or_else(|| expression.strip_prefix("vars."))
                .and_then(|name| settings.get(name))
                .unwrap_or_else(|| panic!("the docs test cannot evaluate `{expression}`")),
        };
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out + rest
}
