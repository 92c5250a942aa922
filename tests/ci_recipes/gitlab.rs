//! The page's `.gitlab-ci.yml` files, read by a YAML parser and run as GitLab Runner's shell
//! executor runs them (tests/common/ci/gitlab.rs): `before_script` (the job's, else
//! `default:`'s) and `script` in one shell, then `after_script` in a fresh one, whatever the
//! script did; the file's and the job's `variables:` and the project's CI/CD variables in the
//! environment.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

use super::{Bench, COMPONENT, Kind, recipes, write_stubs};
use crate::common::ci::gitlab::{self, Job};
use crate::common::ci::gitlab_component::{Input, include};

/// What `$CI_PIPELINE_IID` is in the tests' pipelines.
const PIPELINE_IID: &str = "42";

/// Top-level keys of a `.gitlab-ci.yml` that are not jobs.
const NOT_JOBS: [&str; 5] = ["variables", "default", "stages", "workflow", "include"];

#[test]
fn the_gitlab_ci_files_run() {
    let bench = Bench::new();
    for (n, file) in recipes(Kind::Gitlab).iter().enumerate() {
        let docs = YamlLoader::load_from_str(file)
            .unwrap_or_else(|e| panic!("docs/ci.md: a .gitlab-ci.yml that is not YAML: {e}"));
        let doc = &docs[0];
        if file.contains(COMPONENT) {
            run_component(&bench, n, file, doc);
            continue;
        }
        let jobs: Vec<(&Yaml, &Yaml)> = doc
            .as_hash()
            .expect("a mapping")
            .iter()
            .filter(|(name, _)| {
                let name = name.as_str().unwrap();
                !NOT_JOBS.contains(&name) && !name.starts_with('.')
            })
            .collect();
        assert_eq!(jobs.len(), 1, "one job per recipe");
        for (_, job) in jobs {
            let mut env = bench.settings();
            env.extend(variables(&doc["variables"]));
            env.extend(variables(&job["variables"]));
            let runner = Job::new(&bench.job_root(Kind::Gitlab, n), env);
            write_stubs(&runner.workspace);
            let before = match lines(&job["before_script"]) {
                own if !own.is_empty() => own,
                _ => lines(&doc["default"]["before_script"]),
            };
            let script = [before, lines(&job["script"])].concat();
            assert!(script.len() > 1, "a job without its script");
            let ended = runner.start(&script).end();
            assert_eq!(ended.status.code(), Some(0), "{}\n{file}", ended.describe());
            let after = lines(&job["after_script"]);
            if !after.is_empty() {
                let ended = runner.start(&after).end();
                assert_eq!(ended.status.code(), Some(0), "{}\n{file}", ended.describe());
            }
            bench.check(&runner.workspace, file, Some(gitlab::JOB_URL));
        }
    }
}

/// A file that includes this repository's component (and nothing else): the component
/// expanded with the file's inputs, its job run as the runner runs it.
fn run_component(bench: &Bench, n: usize, file: &str, doc: &Yaml) {
    let includes = doc["include"].as_vec().expect("include: a list");
    assert_eq!(doc.as_hash().unwrap().len(), 1, "only the include\n{file}");
    assert_eq!(includes.len(), 1, "one component\n{file}");
    let inputs: Vec<(String, Input)> = includes[0]["inputs"]
        .as_hash()
        .expect("inputs")
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Yaml::Array(items) => Input::List(
                    items
                        .iter()
                        .map(|i| i.as_str().expect("a script line").to_string())
                        .collect(),
                ),
                other => Input::Text(
                    other
                        .as_str()
                        .expect("a string input (quote numbers)")
                        .to_string(),
                ),
            };
            (name.as_str().unwrap().to_string(), value)
        })
        .collect();
    let inputs: Vec<(&str, Input)> = inputs
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    let component = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/lock.yml");
    let job = include(&component, &inputs);
    let mut settings = bench.settings();
    settings.insert("CI_PIPELINE_IID".into(), PIPELINE_IID.into());
    let runner = Job::new(&bench.job_root(Kind::Gitlab, n), job.environment(&settings));
    write_stubs(&runner.workspace);
    let ended = runner
        .start(&[job.before_script, job.script].concat())
        .end();
    assert_eq!(ended.status.code(), Some(0), "{}\n{file}", ended.describe());
    let ended = runner.start(&job.after_script).end();
    assert_eq!(ended.status.code(), Some(0), "{}\n{file}", ended.describe());
    bench.check(&runner.workspace, file, Some(gitlab::JOB_URL));
}

/// A `variables:` mapping.
fn variables(variables: &Yaml) -> BTreeMap<String, String> {
    let Some(variables) = variables.as_hash() else {
        return BTreeMap::new();
    };
    variables
        .iter()
        .map(|(name, value)| {
            let value = value.as_str().expect("a string value (quote numbers)");
            (name.as_str().unwrap().to_string(), value.to_string())
        })
        .collect()
}

/// The entries of a script list (absent: none).
fn lines(list: &Yaml) -> Vec<String> {
    let Some(list) = list.as_vec() else {
        assert!(list.is_badvalue(), "a script that is not a list: {list:?}");
        return Vec::new();
    };
    list.iter()
        .map(|line| line.as_str().expect("a script line").to_string())
        .collect()
}
