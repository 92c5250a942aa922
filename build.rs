//! Build facts for `redlock --version`, which users paste into bug reports: the git commit the
//! binary was built from (`REDLOCK_BUILD_COMMIT`) and the target it was built for
//! (`REDLOCK_BUILD_TARGET`).
//!
//! The commit is HEAD's when the source is a git checkout of this crate, else the one that
//! `cargo package` records in `.cargo_vcs_info.json` (a crate from crates.io), else "unknown"
//! (a source archive without `.git`). A checkout counts only when its top level is this
//! directory: a source archive unpacked inside some other repository (a distribution's
//! packaging tree) must not claim that repository's commit.
//!
//! Cargo reruns this script when HEAD, or the branch it names, moves; never on an ordinary
//! edit, which would rebuild the crate for nothing. So a build with uncommitted changes names
//! the commit they sit on. Only files that exist are watched: a missing one would make cargo
//! rerun the script, and rebuild the crate, every time.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let target = std::env::var("TARGET").expect("set by cargo");
    let (commit, watched) = match git_head(&dir) {
        Some(found) => found,
        None => match vcs_info_commit(&dir) {
            Some(commit) => (commit, vec![dir.join(".cargo_vcs_info.json")]),
            None => ("unknown".to_string(), Vec::new()),
        },
    };
    println!("cargo::rerun-if-changed=build.rs");
    for path in watched.iter().filter(|path| path.exists()) {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    println!("cargo::rustc-env=REDLOCK_BUILD_COMMIT={commit}");
    println!("cargo::rustc-env=REDLOCK_BUILD_TARGET={target}");
}

/// HEAD's commit (12 hex digits) and the files that move with it, when `dir` is the top level
/// of a git checkout and git is installed.
fn git_head(dir: &Path) -> Option<(String, Vec<PathBuf>)> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let mut watched = Vec::new();
    for name in ["HEAD", "packed-refs"] {
        watched.extend(git_path(dir, name));
    }
    // HEAD names a branch, whose own file moves at each commit (a detached HEAD has none).
    if let Some(branch) = git(dir, &["symbolic-ref", "--quiet", "HEAD"]) {
        watched.extend(git_path(dir, &branch));
    }
    Some((commit, watched))
}

/// Where git keeps `name` (HEAD, a ref), also in a worktree, whose HEAD and refs live apart.
fn git_path(dir: &Path, name: &str) -> Option<PathBuf> {
    git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", name],
    )
    .map(PathBuf::from)
}

/// git's one-line answer, or None when git is missing or refuses (not a repository).
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The commit in `.cargo_vcs_info.json` (`{"git": {"sha1": "..."}}`), cut to 12 digits like
/// git's. Read by hand: a JSON parser as a build dependency would cost every build.
fn vcs_info_commit(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let value = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let sha: String = value.chars().take_while(char::is_ascii_hexdigit).collect();
    (sha.len() >= 12).then(|| sha[..12].to_string())
}
