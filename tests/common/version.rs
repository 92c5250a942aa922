//! What a build of redlock says it is (`redlock --version`), checked against this checkout.

use std::path::Path;
use std::process::Command;

/// The target rustc builds for by default: the one the tests' own binaries were built for.
pub fn host_target() -> String {
    let output = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("run rustc");
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("a host line from rustc -vV")
        .to_string()
}

/// The static (musl) target of this machine's CPU, which `scripts/package` also builds for.
pub fn static_target() -> String {
    let host = host_target();
    format!("{}-unknown-linux-musl", host.split('-').next().unwrap())
}

/// The target `binary` was built for, as its `--version` must name it, read from its ELF
/// header ([`super::elf`]): its CPU (an aarch64 build tested on an x86_64 host, under
/// emulation, names aarch64), and for a static binary (no loader, no library) the musl target
/// of that CPU, else the host's target.
pub fn target_of(binary: &Path) -> String {
    let linkage = super::elf::linkage(binary);
    let host = host_target();
    let cpu = linkage.cpu();
    match linkage.is_static() {
        true => format!("{cpu}-unknown-linux-musl"),
        false if host.starts_with(&format!("{cpu}-")) => host,
        false => format!("{cpu}-unknown-linux-gnu"),
    }
}

/// Checks what `binary --version` printed, for the target its linkage says ([`target_of`]).
pub fn assert_long_version(shown: &str, binary: &Path) {
    assert_long_version_for(shown, &target_of(binary));
}

/// Checks what `redlock --version` printed: this crate's version, the commit this checkout is
/// at (the suite runs from a checkout, as CI clones one; outside one, "unknown"), and `target`.
pub fn assert_long_version_for(shown: &str, target: &str) {
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert_eq!(lines[0], format!("redlock {}", env!("CARGO_PKG_VERSION")));
    let commit = lines[1].strip_prefix("commit ").expect(shown);
    let head = Command::new("git")
        .arg("-C")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["rev-parse", "HEAD"])
        .output()
        .expect("run git");
    if head.status.success() {
        let head = String::from_utf8(head.stdout).unwrap();
        assert!(
            commit.len() >= 12 && head.trim().starts_with(commit),
            "{shown}: HEAD is {head}"
        );
    } else {
        assert_eq!(commit, "unknown", "{shown}");
    }
    assert_eq!(lines[2], format!("target {target}"), "{shown}");
}
