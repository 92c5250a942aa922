//! The page's Jenkinsfiles, run as Jenkins runs their `sh` steps (tests/common/ci/jenkins.rs).
//! No Groovy runs here: a small reader takes the few forms the recipes use, and fails on any
//! other:
//!
//! - in `environment { }`, `NAME = 'text'` and `NAME = credentials('id')`;
//! - `sh '''SCRIPT'''`, and `env.NAME = sh(returnStdout: true, script: '''SCRIPT''').trim()`,
//!   which puts the script's trimmed stdout in the environment of the steps after it;
//! - the steps after `post {`, which must be `always`, run last, whatever came before.
//!
//! `'''` strings are taken as written, so they must hold no backslash (Groovy would read
//! escapes there).

use std::collections::BTreeMap;

use super::{Bench, Kind, recipes, write_stubs};
use crate::common::ci::jenkins::{self, Job};

/// One `sh` step: its script, and the variable its stdout goes to.
struct Step {
    script: String,
    stdout_to: Option<String>,
}

/// What the reader takes from a Jenkinsfile.
struct Pipeline {
    environment: BTreeMap<String, String>,
    stages: Vec<Step>,
    post_always: Vec<Step>,
}

#[test]
fn the_jenkinsfiles_run() {
    let bench = Bench::new();
    for (n, file) in recipes(Kind::Jenkins).iter().enumerate() {
        let pipeline = read(file, &bench);
        // REDLOCK_RELEASE_URL comes from the controller's settings, the rest from the file.
        let mut env = bench.settings();
        env.extend(pipeline.environment);
        let mut runner = Job::new(&bench.job_root(Kind::Jenkins, n), env);
        write_stubs(&runner.workspace);
        let mut failed = Vec::new();
        for step in &pipeline.stages {
            if failed.is_empty() {
                run(&mut runner, step, &mut failed);
            }
        }
        for step in &pipeline.post_always {
            run(&mut runner, step, &mut failed);
        }
        assert!(failed.is_empty(), "{}\n{file}", failed.join("\n"));
        bench.check(&runner.workspace, file, Some(jenkins::JOB_URL));
    }
}

fn run(runner: &mut Job, step: &Step, failed: &mut Vec<String>) {
    let sh = runner.start(&step.script, step.stdout_to.is_some());
    let ended = runner.finish(sh);
    if ended.code != 0 {
        failed.push(format!("sh exited {}:\n{}", ended.code, ended.log));
    } else if let Some(name) = &step.stdout_to {
        runner
            .env
            .insert(name.clone(), ended.stdout.trim().to_string());
    }
}

fn read(file: &str, bench: &Bench) -> Pipeline {
    let credentials: BTreeMap<&str, String> =
        [("redlock-servers", bench.cluster.servers_env())].into();
    let start = file.find("environment {").expect("`environment { }`") + "environment {".len();
    let block = &file[start..start + file[start..].find('}').expect("the end of `environment`")];
    let mut environment = BTreeMap::new();
    for line in block.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let (name, value) = line.split_once(" = ").unwrap_or_else(|| panic!("{line}"));
        let value = if let Some(id) = quoted(value, "credentials('", "')") {
            credentials
                .get(id)
                .unwrap_or_else(|| panic!("no credential {id}"))
                .clone()
        } else {
            quoted(value, "'", "'")
                .unwrap_or_else(|| panic!("cannot read {line}"))
                .to_string()
        };
        environment.insert(name.to_string(), value);
    }
    let post = file.find("post {");
    if let Some(post) = post {
        let conditions = file[post..].matches(" {").count();
        assert!(
            file[post..].contains("always {") && conditions == 2,
            "post: only `always`"
        );
    }
    let (mut stages, mut post_always) = (Vec::new(), Vec::new());
    let mut at = 0;
    while let Some(open) = file[at..].find("'''").map(|i| at + i) {
        let close = open + 3 + file[open + 3..].find("'''").expect("a closing `'''`");
        let script = file[open + 3..close].to_string();
        assert!(
            !script.contains('\\'),
            "a backslash in a ''' string: {script}"
        );
        let line_start = file[..open].rfind('\n').map_or(0, |i| i + 1);
        let before = file[line_start..open].trim();
        let stdout_to = if before == "sh" {
            None
        } else if let Some(name) = quoted(before, "env.", " = sh(returnStdout: true, script:") {
            assert!(
                file[close + 3..].starts_with(").trim()"),
                "`.trim()` after the script"
            );
            Some(name.to_string())
        } else {
            panic!("the docs test cannot read `{before} '''`");
        };
        let steps = match post {
            Some(post) if open > post => &mut post_always,
            _ => &mut stages,
        };
        steps.push(Step { script, stdout_to });
        at = close + 3;
    }
    // Every `sh` call is one of the forms above.
    let calls = file
        .lines()
        .filter(|l| l.contains("sh '") || l.contains("sh("))
        .count();
    assert_eq!(
        calls,
        stages.len() + post_always.len(),
        "an `sh` of another form"
    );
    Pipeline {
        environment,
        stages,
        post_always,
    }
}

/// `text` without `prefix` and `suffix`, if it has both.
fn quoted<'a>(text: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)?.strip_suffix(suffix)
}
