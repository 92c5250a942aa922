//! The CI recipes of docs/ci.md, run as their CI runs them: every code block of the page is a
//! recipe (a GitHub Actions workflow, a `.gitlab-ci.yml`, a Jenkinsfile, a plain runner's
//! command or script), and each is read as its CI reads it and its shell run as its runner
//! runs it (tests/common/ci), against a real master. docs/ci.md, "How this page is tested",
//! says what is emulated and what is not.
//!
//! Each recipe's workspace holds stub `deploy.sh` and `migrate.sh` that fail unless the lock
//! is held while they run; a recipe passes when every step exits 0, the stubs it names ran,
//! and the lock is free at the end. Its install step downloads a release of the binary under
//! test from a `file://` URL ([`Bench`]).

mod github;
mod gitlab;
mod jenkins;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::ci::{Started, path_with, redlock_bin_dir};
use crate::common::{Cluster, manual};

/// The lock of every recipe.
const KEY: &str = "deploy-prod";

/// What a code block of the page is.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Github,
    Gitlab,
    Jenkins,
    Shell,
}

/// The page's code blocks, each with what it is.
fn blocks() -> Vec<(Kind, String)> {
    let page = manual::page("docs/ci.md");
    manual::code_blocks(&page.text)
        .into_iter()
        .map(|(language, lines)| {
            let text = lines.join("\n") + "\n";
            let kind = match language.as_str() {
                "yaml" if text.starts_with("name:") && text.contains("\njobs:") => Kind::Github,
                "yaml" => Kind::Gitlab,
                "groovy" if text.starts_with("pipeline {") => Kind::Jenkins,
                "sh" => Kind::Shell,
                _ => panic!("docs/ci.md: a ```{language} block the docs test cannot run:\n{text}"),
            };
            (kind, text)
        })
        .collect()
}

/// The page's recipes for one CI.
fn recipes(kind: Kind) -> Vec<String> {
    blocks()
        .into_iter()
        .filter(|(k, _)| *k == kind)
        .map(|(_, text)| text)
        .collect()
}

/// The built-ins the page leads with, as a workflow and a `.gitlab-ci.yml` name them.
const ACTION: &str = "uses: acme/redlock@v";
const COMPONENT: &str = "component: $CI_SERVER_FQDN/acme/redlock/lock@";

/// Every code block is a recipe of a known kind (or `blocks` fails), the page has both plain
/// forms for each CI and, for GitHub and GitLab, one with the Action or the component, and
/// every recipe installs the version this checkout builds.
#[test]
fn every_example_of_the_ci_page_is_a_recipe_these_tests_run() {
    let blocks = blocks();
    for kind in [Kind::Github, Kind::Gitlab, Kind::Jenkins, Kind::Shell] {
        let texts: Vec<&String> = blocks
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, t)| t)
            .collect();
        let built_in = match kind {
            Kind::Github => Some(ACTION),
            Kind::Gitlab => Some(COMPONENT),
            Kind::Jenkins | Kind::Shell => None,
        };
        assert_eq!(
            texts.len(),
            2 + usize::from(built_in.is_some()),
            "{kind:?}: a deploy under `run`, the lock across steps, and the built-in if any"
        );
        if let Some(built_in) = built_in {
            assert!(
                texts.iter().any(|t| t.contains(built_in)),
                "{kind:?}: no {built_in}"
            );
        }
        assert!(
            texts.iter().any(|t| t.contains("redlock run ")),
            "{kind:?}: no `run`"
        );
        assert!(
            texts.iter().any(|t| t.contains("redlock acquire ")),
            "{kind:?}: no `acquire`"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    for (_, text) in &blocks {
        for line in text.lines().filter(|l| {
            let l = l.trim_start();
            l.starts_with("REDLOCK_VERSION") || l.contains(ACTION) || l.contains(COMPONENT)
        }) {
            assert!(line.contains(version), "not version {version}: {line}");
        }
    }
}

/// The plain runner's recipes: a command line as `sh -c` runs it (as cron does), a script as
/// an executable file.
#[test]
fn the_plain_runner_recipes_run() {
    let bench = Bench::new();
    for (n, recipe) in recipes(Kind::Shell).iter().enumerate() {
        let workspace = bench.root.path().join(format!("shell-{n}"));
        std::fs::create_dir_all(&workspace).unwrap();
        write_stubs(&workspace);
        let bin = redlock_bin_dir(&workspace);
        let mut cmd = crate::common::redlock_env(Command::new("sh"));
        if recipe.starts_with("#!") {
            let script = workspace.join("deploy-job");
            std::fs::write(&script, recipe).unwrap();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            cmd.args(["-c", "./deploy-job"]);
        } else {
            cmd.args(["-c", recipe]);
        }
        cmd.current_dir(&workspace)
            .env("REDLOCK_SERVERS", bench.cluster.servers_env())
            .env("PATH", path_with(&[&bin]));
        let ended = Started::spawn(&mut cmd).end();
        assert_eq!(
            ended.status.code(),
            Some(0),
            "{recipe}\n{}",
            ended.describe()
        );
        bench.check(&workspace, recipe, None);
    }
}

/// A place to run recipes: a master, and a release of the binary under test where the
/// recipes' install steps fetch it.
struct Bench {
    cluster: Cluster,
    root: tempfile::TempDir,
    release_url: String,
}

impl Bench {
    fn new() -> Bench {
        let root = tempfile::tempdir().unwrap();
        let release = publish(root.path());
        Bench {
            cluster: Cluster::start(1),
            release_url: format!("file://{}", release.display()),
            root,
        }
    }

    /// What the CI's settings (secrets, variables, credentials) give a job, by name.
    fn settings(&self) -> BTreeMap<String, String> {
        [
            ("REDLOCK_SERVERS".to_string(), self.cluster.servers_env()),
            ("REDLOCK_RELEASE_URL".to_string(), self.release_url.clone()),
        ]
        .into()
    }

    /// A directory of its own for the `n`th recipe of a kind.
    fn job_root(&self, kind: Kind, n: usize) -> PathBuf {
        let root = self.root.path().join(format!("{kind:?}-{n}"));
        std::fs::create_dir_all(&root).unwrap();
        root
    }

    /// After `recipe` ran in `workspace`: the stubs it names ran, under the lock, whose
    /// holder record carried `note` (the job's URL, which no recipe has to pass: redlock
    /// reads it from the CI's variables), and the lock is free.
    fn check(&self, workspace: &Path, recipe: &str, note: Option<&str>) {
        let ran = std::fs::read_to_string(workspace.join("ran")).unwrap_or_default();
        for stub in ["migrate.sh", "deploy.sh"] {
            let named = recipe.contains(&format!("./{stub}"));
            assert_eq!(
                ran.lines().any(|l| l == stub),
                named,
                "{stub} ran: {ran:?}\n{recipe}"
            );
            if named {
                let said = std::fs::read_to_string(workspace.join(format!("{stub}.status")));
                let status: serde_json::Value = serde_json::from_str(&said.unwrap()).unwrap();
                assert_eq!(
                    status["holder"]["note"].as_str(),
                    note,
                    "{stub}: {status}\n{recipe}"
                );
            }
        }
        assert!(
            self.cluster.key_gone_everywhere(KEY),
            "the lock is still held\n{recipe}"
        );
    }
}

/// Writes `deploy.sh` and `migrate.sh` into `workspace`: each fails unless the lock is held
/// (asking the binary under test by its path: a deploy needs no redlock on its PATH), keeps
/// what `status --json` said in `STUB.status`, and records that it ran in `ran`.
fn write_stubs(workspace: &Path) {
    let redlock = std::fs::canonicalize(crate::common::redlock_binary()).unwrap();
    for stub in ["migrate.sh", "deploy.sh"] {
        let path = workspace.join(stub);
        let script = format!(
            "#!/bin/sh\n'{}' status --json --key {KEY} > {stub}.status || \
             {{ echo \"{stub}: the lock is not held\" >&2; exit 1; }}\necho {stub} >> ran\n",
            redlock.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Publishes the binary under test as `scripts/package` names the static archive, with a
/// `SHA256SUMS` that lists another file too; returns the directory.
fn publish(root: &Path) -> PathBuf {
    let name = format!(
        "redlock-{}-x86_64-unknown-linux-musl",
        env!("CARGO_PKG_VERSION")
    );
    let staged = root.join("staged").join(&name);
    std::fs::create_dir_all(&staged).unwrap();
    std::fs::copy(crate::common::redlock_binary(), staged.join("redlock")).unwrap();
    let release = root.join("release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::write(release.join("redlock_other.deb"), "another file\n").unwrap();
    let archive = format!("{name}.tar.gz");
    let run = |cmd: &mut Command| {
        let output = cmd.current_dir(&release).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            crate::common::describe(&output)
        );
        output.stdout
    };
    // The fastest gzip: a debug build is 100 MB.
    run(Command::new("tar")
        .args(["-I", "gzip -1", "-cf", &archive, "-C"])
        .arg(root.join("staged"))
        .arg(&name));
    let sums = run(Command::new("sha256sum").args(["redlock_other.deb", &archive]));
    std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
    release
}
