//! The CI install steps against the release scripts/package made: its `target/dist/` served
//! over HTTP on loopback (tests/common/release.rs), as a project's release page would serve
//! it. The Action's install step (`mode: install`) for a Linux X64 runner and for a Linux ARM64
//! one (whose aarch64 binary runs here under qemu-user: `package_arm64::require_emulation`),
//! and the GitLab component's before_script: each checks the real archive against the real
//! SHA256SUMS, unpacks it and runs the build for its runner's CPU. tests/github_action.rs and
//! tests/gitlab_component.rs test the same steps against a stand-in archive of the debug build.

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts;
use crate::common::Cluster;
use crate::common::ci::github::Job;
use crate::common::ci::github_action::Action;
use crate::common::ci::gitlab::Job as GitlabJob;
use crate::common::ci::gitlab_component::{Input, include};
use crate::common::release::{Release, VERSION};

/// target/dist/, served.
fn dist() -> Release {
    let dir = artifacts().sums.parent().unwrap().to_path_buf();
    Release::serve(dir)
}

/// The Action installs the build for `arch` (RUNNER_ARCH) from the release; the next step's
/// `redlock --version` names `target`.
fn action_installs(arch: &str, target: &str) {
    let release = dist();
    let root = tempfile::tempdir().unwrap();
    let action = Action::load(Path::new(env!("CARGO_MANIFEST_DIR")));
    let mut job = Job::new(root.path(), BTreeMap::new());
    job.tool_cache = root.path().join("tool-cache");
    job.env.insert("RUNNER_OS".into(), "Linux".into());
    job.env.insert("RUNNER_ARCH".into(), arch.into());
    let running = job.uses(
        &action,
        &[
            ("mode", "install"),
            ("release-url", release.url.as_str()),
            ("version", VERSION),
        ],
    );
    let used = job.finish_action(running);
    assert_eq!(
        used.ended.status.code(),
        Some(0),
        "{}",
        used.ended.describe()
    );
    let archive = format!("redlock-{VERSION}-{target}.tar.gz");
    assert!(
        release.asked().iter().any(|path| path.ends_with(&archive)),
        "{:?}",
        release.asked()
    );
    let step = job.start("redlock --version\n", &BTreeMap::new());
    let ran = job.finish(step);
    assert_eq!(ran.status.code(), Some(0), "{}", ran.describe());
    assert!(
        ran.stdout.contains(&format!("target {target}")),
        "{}",
        ran.describe()
    );
}

#[test]
#[ignore]
fn the_action_installs_the_x86_64_release_on_an_x64_runner() {
    action_installs("X64", "x86_64-unknown-linux-musl");
}

#[test]
#[ignore]
fn the_action_installs_the_aarch64_release_on_an_arm64_runner() {
    crate::package_arm64::require_emulation();
    action_installs("ARM64", "aarch64-unknown-linux-musl");
}

/// The component's before_script installs this machine's build from the release (it picks it
/// by `uname -m`), takes the lock with it, and the script runs it.
#[test]
#[ignore]
fn the_gitlab_component_installs_the_release_for_this_machine() {
    let release = dist();
    let cluster = Cluster::start(3);
    let root = tempfile::tempdir().unwrap();
    let component = include(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/lock.yml"),
        &[
            ("key", Input::Text("deploy".into())),
            (
                "script",
                Input::List(vec!["redlock --version > version".into()]),
            ),
        ],
    );
    let project: BTreeMap<String, String> = [
        ("REDLOCK_SERVERS".to_string(), cluster.servers_env()),
        ("REDLOCK_RELEASE_URL".to_string(), release.url.clone()),
    ]
    .into();
    let job = GitlabJob::new(root.path(), component.environment(&project));
    let ended = job
        .start(&[component.before_script.clone(), component.script.clone()].concat())
        .end();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.describe());
    let version = std::fs::read_to_string(job.workspace.join("version")).unwrap();
    let target = format!("target {}-unknown-linux-musl", std::env::consts::ARCH);
    assert!(version.contains(&target), "{version}");
    let after = job.start(&component.after_script).end();
    assert_eq!(after.status.code(), Some(0), "{}", after.describe());
    assert!(cluster.key_gone_everywhere("deploy"));
}
