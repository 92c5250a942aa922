//! The Action's install step, from a release served on loopback (tests/common/release.rs):
//! the archive for RUNNER_OS and RUNNER_ARCH, checked against SHA256SUMS or the sha256 input,
//! unpacked into the tool cache, on PATH for the later steps.

use std::collections::BTreeMap;
use std::path::Path;

use super::Case;
use crate::common::ci::github::Job;
use crate::common::ci::github_action::Used;
use crate::common::release::{Release, VERSION};

/// A job with no redlock on its PATH, its tool cache `cache`.
fn bare_job(root: &Path, cache: &Path) -> Job {
    std::fs::create_dir_all(root).unwrap();
    let mut job = Job::new(root, BTreeMap::new());
    job.tool_cache = cache.to_path_buf();
    job
}

/// `mode: install` from `release`, with `env` for the step (to play another runner).
fn install(case: &Case, job: &mut Job, release: &Release, with: &[(&str, &str)]) -> Used {
    let mut inputs = vec![
        ("mode", "install"),
        ("release-url", release.url.as_str()),
        ("version", VERSION),
    ];
    inputs.extend_from_slice(with);
    let running = job.uses(&case.action, &inputs);
    job.finish_action(running)
}

/// The step installs the archive for this runner, checked, into the tool cache, and puts it
/// on the later steps' PATH; a second job on the same runner takes it from the cache without
/// a download.
#[test]
fn install_puts_the_checked_release_on_path_and_caches_it() {
    let case = Case::new();
    let release = Release::publish(case.root.path());
    let cache = case.root.path().join("tool-cache");
    let mut job = bare_job(&case.root.path().join("first"), &cache);
    let used = install(&case, &mut job, &release, &[]);
    assert_eq!(
        used.ended.status.code(),
        Some(0),
        "{}",
        used.ended.describe()
    );
    assert_eq!(
        release.asked(),
        [
            format!("/releases/v{VERSION}/SHA256SUMS"),
            format!("/releases/v{VERSION}/{}", release.archive())
        ]
    );
    let arch = if cfg!(target_arch = "x86_64") {
        "x64"
    } else {
        "arm64"
    };
    let installed = cache.join("redlock").join(VERSION).join(arch);
    assert!(
        cache
            .join("redlock")
            .join(VERSION)
            .join(format!("{arch}.complete"))
            .exists()
    );
    let step = job.start("command -v redlock\nredlock --version\n", &BTreeMap::new());
    let ran = job.finish(step);
    assert_eq!(ran.status.code(), Some(0), "{}", ran.describe());
    assert_eq!(
        ran.stdout.lines().next(),
        Some(installed.join("redlock").to_str().unwrap())
    );
    assert!(
        ran.stdout.contains(&format!("redlock {VERSION}")),
        "{}",
        ran.describe()
    );

    let mut again = bare_job(&case.root.path().join("second"), &cache);
    let cached = install(&case, &mut again, &release, &[]);
    assert_eq!(
        cached.ended.status.code(),
        Some(0),
        "{}",
        cached.ended.describe()
    );
    assert_eq!(
        release.asked().len(),
        2,
        "downloaded again: {:?}",
        release.asked()
    );
    assert!(
        cached.ended.stderr.contains("from the tool cache"),
        "{}",
        cached.ended.describe()
    );
}

/// An archive whose sum is not the one SHA256SUMS lists, or the one the sha256 input pins, is
/// refused with one line, and nothing is installed.
#[test]
fn an_archive_that_fails_its_sum_is_not_installed() {
    let case = Case::new();
    let release = Release::publish(case.root.path());
    let cache = case.root.path().join("tool-cache");
    let mut job = bare_job(&case.root.path().join("pinned"), &cache);
    let wrong = "0".repeat(64);
    let used = install(&case, &mut job, &release, &[("sha256", &wrong)]);
    assert_eq!(
        used.ended.status.code(),
        Some(1),
        "{}",
        used.ended.describe()
    );
    let line = used.ended.stderr.trim();
    assert!(
        line.starts_with("::error::redlock action: ")
            && line.contains(&format!("not {wrong}: not installed")),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");
    std::fs::write(release.dir.join(release.archive()), "tampered").unwrap();
    let mut job = bare_job(&case.root.path().join("listed"), &cache);
    let used = install(&case, &mut job, &release, &[]);
    assert_eq!(
        used.ended.status.code(),
        Some(1),
        "{}",
        used.ended.describe()
    );
    assert!(
        used.ended.stderr.contains("not installed"),
        "{}",
        used.ended.describe()
    );
    assert!(
        !cache.join("redlock").join(VERSION).exists()
            || std::fs::read_dir(cache.join("redlock").join(VERSION))
                .unwrap()
                .next()
                .is_none()
    );
}

/// A release URL's user and password (a release host may ask for them) never reach the log,
/// not even in the line that says the download failed.
#[test]
fn a_password_in_the_release_url_is_never_printed() {
    let case = Case::new();
    let release = Release::publish(case.root.path());
    let cache = case.root.path().join("tool-cache");
    let mut job = bare_job(&case.root.path().join("secret"), &cache);
    let url = release.url.replace("http://", "http://deploy:s3cr3t@") + "/missing";
    let inputs = [
        ("mode", "install"),
        ("release-url", url.as_str()),
        ("version", VERSION),
    ];
    let running = job.uses(&case.action, &inputs);
    let used = job.finish_action(running);
    assert_eq!(
        used.ended.status.code(),
        Some(1),
        "{}",
        used.ended.describe()
    );
    assert!(
        used.ended.stderr.contains("HTTP 404"),
        "{}",
        used.ended.describe()
    );
    assert!(
        !used.ended.stderr.contains("s3cr3t") && !used.ended.stdout.contains("s3cr3t"),
        "{}",
        used.ended.describe()
    );
}

/// A runner with no build gets one line saying which runners have one; an ARM64 runner, a
/// release whose SHA256SUMS lists no arm64 archive.
#[test]
fn a_runner_without_a_build_gets_a_clear_error() {
    let case = Case::new();
    let release = Release::publish(case.root.path());
    let cache = case.root.path().join("tool-cache");
    for (os, arch, says) in [
        (
            "Windows",
            "X64",
            "no redlock build for Windows X64 (RUNNER_OS, RUNNER_ARCH): redlock is built for Linux X64 and Linux ARM64",
        ),
        ("macOS", "ARM64", "no redlock build for macOS ARM64"),
        ("Linux", "ARM", "no redlock build for Linux ARM"),
    ] {
        let mut job = bare_job(&case.root.path().join(format!("{os}-{arch}")), &cache);
        job.env.insert("RUNNER_OS".into(), os.into());
        job.env.insert("RUNNER_ARCH".into(), arch.into());
        let used = install(&case, &mut job, &release, &[]);
        assert_eq!(
            used.ended.status.code(),
            Some(64),
            "{}",
            used.ended.describe()
        );
        assert!(
            used.ended.stderr.contains(says),
            "{}",
            used.ended.describe()
        );
    }
    if cfg!(target_arch = "x86_64") {
        let mut job = bare_job(&case.root.path().join("arm64"), &cache);
        job.env.insert("RUNNER_ARCH".into(), "ARM64".into());
        let used = install(&case, &mut job, &release, &[]);
        assert_eq!(
            used.ended.status.code(),
            Some(64),
            "{}",
            used.ended.describe()
        );
        assert!(
            used.ended
                .stderr
                .contains("SHA256SUMS lists no Linux ARM64 build"),
            "{}",
            used.ended.describe()
        );
    }
}

/// The version the Action installs by default is the one this checkout builds (the Action's
/// tag and the release it installs go together).
#[test]
fn the_default_version_is_this_release() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    assert_eq!(
        docs[0]["inputs"]["version"]["default"].as_str(),
        Some(VERSION)
    );
}
