//! `redlock --version` as users paste it into bug reports: the version, the commit the binary
//! was built from and the target; and the build script that finds the commit, run as cargo
//! runs it on the kinds of source tree a build starts from (a checkout, a source archive
//! without .git, one unpacked inside another repository, a crate from crates.io).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stdout(output: Output) -> String {
    assert!(output.status.success(), "{}", common::describe(&output));
    String::from_utf8(output.stdout).expect("utf-8")
}

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .output()
        .expect("run git")
}

#[test]
fn version_names_the_release_the_commit_and_the_target() {
    let shown = stdout(common::redlock().arg("--version").output().unwrap());
    common::assert_long_version(&shown, std::path::Path::new(common::redlock_binary()));
    // -V is the short form; the man pages show that one too.
    let short = stdout(common::redlock().arg("-V").output().unwrap());
    assert_eq!(short, format!("redlock {}\n", env!("CARGO_PKG_VERSION")));
}

/// build.rs compiled on its own and run with the variables cargo gives it, from `dir`.
struct BuildScript {
    binary: PathBuf,
    _dir: tempfile::TempDir,
}

impl BuildScript {
    fn compile() -> BuildScript {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("build-script");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs");
        let output = Command::new("rustc")
            .args(["--edition", "2024", "-o"])
            .arg(&binary)
            .arg(&source)
            .output()
            .expect("run rustc");
        assert!(output.status.success(), "{}", common::describe(&output));
        BuildScript { binary, _dir: dir }
    }

    /// What the script tells cargo for a crate whose manifest is in `dir`.
    fn run(&self, dir: &Path) -> Vec<String> {
        let output = Command::new(&self.binary)
            .env("CARGO_MANIFEST_DIR", dir)
            .env("TARGET", "x86_64-unknown-linux-gnu")
            .current_dir(dir)
            .output()
            .expect("run the build script");
        stdout(output).lines().map(str::to_string).collect()
    }
}

fn commit_in(lines: &[String]) -> &str {
    lines
        .iter()
        .find_map(|line| line.strip_prefix("cargo::rustc-env=REDLOCK_BUILD_COMMIT="))
        .unwrap_or_else(|| panic!("no commit in {lines:?}"))
}

/// Every file the script asks cargo to watch exists: a missing one would make cargo rerun it
/// (and rebuild the crate) on every build.
fn assert_watched_files_exist(dir: &Path, lines: &[String]) {
    for line in lines {
        if let Some(path) = line.strip_prefix("cargo::rerun-if-changed=") {
            assert!(dir.join(path).exists(), "{path} is watched but missing");
        }
    }
}

/// A crate's source tree in `dir`, as far as the build script looks at it.
fn crate_in(dir: &Path) -> &Path {
    std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(dir.join("build.rs"), "fn main() {}\n").unwrap();
    dir
}

fn commit_all(dir: &Path) -> String {
    assert!(git(dir, &["init", "--quiet"]).status.success());
    let committed = git(dir, &["commit", "--quiet", "--allow-empty", "-m", "first"]);
    assert!(
        committed.status.success(),
        "{}",
        common::describe(&committed)
    );
    let head = git(dir, &["rev-parse", "HEAD"]);
    String::from_utf8(head.stdout).unwrap().trim().to_string()
}

#[test]
fn the_build_script_names_head_in_a_checkout_and_watches_it_move() {
    let script = BuildScript::compile();
    let checkout = tempfile::tempdir().unwrap();
    let first = commit_all(crate_in(checkout.path()));
    let lines = script.run(checkout.path());
    assert_eq!(commit_in(&lines), &first[..12], "{lines:?}");
    assert!(
        lines.contains(&"cargo::rustc-env=REDLOCK_BUILD_TARGET=x86_64-unknown-linux-gnu".into()),
        "{lines:?}"
    );
    assert_watched_files_exist(checkout.path(), &lines);
    // A new commit moves the branch's file, which cargo was told to watch.
    let branch = git(checkout.path(), &["symbolic-ref", "HEAD"]);
    let branch = String::from_utf8(branch.stdout).unwrap();
    let branch_file = checkout.path().join(".git").join(branch.trim());
    assert!(
        lines.contains(&format!(
            "cargo::rerun-if-changed={}",
            branch_file.display()
        )),
        "{lines:?}"
    );
}

#[test]
fn the_build_script_says_unknown_for_a_source_archive_without_git() {
    let script = BuildScript::compile();
    let archive = tempfile::tempdir().unwrap();
    let lines = script.run(crate_in(archive.path()));
    assert_eq!(commit_in(&lines), "unknown", "{lines:?}");
    assert_watched_files_exist(archive.path(), &lines);
}

#[test]
fn the_build_script_does_not_claim_the_commit_of_a_repository_around_the_source() {
    let script = BuildScript::compile();
    let packaging = tempfile::tempdir().unwrap();
    commit_all(packaging.path());
    let source = packaging.path().join("redlock-0.1.0");
    std::fs::create_dir(&source).unwrap();
    let lines = script.run(crate_in(&source));
    assert_eq!(commit_in(&lines), "unknown", "{lines:?}");
}

#[test]
fn the_build_script_reads_the_commit_cargo_package_recorded() {
    let script = BuildScript::compile();
    let crate_dir = tempfile::tempdir().unwrap();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let vcs_info =
        format!("{{\n  \"git\": {{\n    \"sha1\": \"{sha}\"\n  }},\n  \"path_in_vcs\": \"\"\n}}");
    std::fs::write(crate_dir.path().join(".cargo_vcs_info.json"), vcs_info).unwrap();
    let lines = script.run(crate_in(crate_dir.path()));
    assert_eq!(commit_in(&lines), &sha[..12], "{lines:?}");
    assert_watched_files_exist(crate_dir.path(), &lines);
}
