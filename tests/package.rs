//! The release artifacts as a user meets them. `scripts/package` builds the Debian package
//! and the archive (a release build: minutes), once for all the tests here, which then look at
//! what came out with the tools a user has: `dpkg-deb` for the file list and the control
//! fields; the binary, run from the unpacked package against real masters; `man` with
//! warnings on, for every page; bash, for the completion; `sha256sum -c`; and
//! `systemd-analyze verify` and a run of the command line of each systemd example. The static
//! (musl) archive's binary is tested in an empty root: `package_static`; the aarch64 artifacts
//! (its archive, .deb and image, and the multi-arch image index) in `package_arm64`, their
//! binary run under qemu-user on this x86_64 host; the CI install steps from the release in
//! `package_ci`.
//!
//! Slow, so a plain `cargo test` skips them; `scripts/test` (and so CI) runs them after the
//! suite, with `cargo test --test package -- --ignored`.

mod common;
mod package_arm64;
// The Action's and the GitLab component's install steps, from target/dist/.
mod package_ci;
mod package_static;
// The OCI image (scripts/image), run by runc.
mod package_image;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use common::{Cluster, Running, describe, eventually};

/// What `scripts/package` made, and where the tests unpacked it.
struct Artifacts {
    deb: PathBuf,
    archive: PathBuf,
    /// The archive of the static (musl) build.
    static_archive: PathBuf,
    /// The OCI image of the static build (scripts/image), an archive of its layout.
    pub image: PathBuf,
    /// The aarch64 (arm64) artifacts: its package, static archive and image.
    arm_deb: PathBuf,
    arm_archive: PathBuf,
    arm_image: PathBuf,
    /// The multi-arch image: an index of the two images (scripts/image-index).
    image_index: PathBuf,
    sums: PathBuf,
    /// The package unpacked (`dpkg-deb -x`) under a root of its own, as it installs.
    root: PathBuf,
    /// The archive unpacked: its one top directory.
    unpacked: PathBuf,
    /// The static archive unpacked: its one top directory.
    static_unpacked: PathBuf,
    /// The arm64 package unpacked, and the aarch64 archive.
    arm_root: PathBuf,
    arm_unpacked: PathBuf,
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The artifacts, built by the first test that asks; a failed build fails every test with
/// its output (instead of building again for each).
fn artifacts() -> &'static Artifacts {
    static BUILT: OnceLock<Result<Artifacts, String>> = OnceLock::new();
    match BUILT.get_or_init(build) {
        Ok(artifacts) => artifacts,
        Err(why) => panic!("{why}"),
    }
}

fn build() -> Result<Artifacts, String> {
    // Run as from a shell: without the variables cargo sets for a test, which crates' build
    // scripts watch (ring's CARGO_PKG_NAME, ...): the release build would otherwise be
    // redone whenever scripts/package is run by hand in between. Its progress (the release
    // builds) goes straight to the log: it takes minutes.
    let mut package = Command::new(repo().join("scripts/package"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_tests = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_BIN_",
            "CARGO_CRATE_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&&*name);
        if set_for_tests {
            package.env_remove(&*name);
        }
    }
    let output = package
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("scripts/package: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "scripts/package failed ({}): see its output above",
            output.status
        ));
    }
    // It prints the path of each artifact, one per line; each is known here by its name.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed = |what: &str, ends: &str| {
        let mut found = stdout.lines().filter(|line| line.ends_with(ends));
        match (found.next(), found.next()) {
            (Some(path), None) => Ok(PathBuf::from(path)),
            _ => Err(format!(
                "scripts/package printed no one {what} (*{ends}):\n{stdout}"
            )),
        }
    };
    let deb = printed("package", &format!("_{}.deb", debian_architecture()))?;
    let archive = printed("archive", "-linux-gnu.tar.gz")?;
    let static_archive = printed(
        "static archive",
        &format!("-{}.tar.gz", common::static_target()),
    )?;
    let image = printed("image", &format!("-{}-oci.tar", oci_architecture(&cpu())))?;
    let arm_deb = printed("arm64 package", "_arm64.deb")?;
    let arm_archive = printed("aarch64 archive", "-aarch64-unknown-linux-musl.tar.gz")?;
    let arm_image = printed("arm64 image", "-arm64-oci.tar")?;
    let index_name = format!("/redlock-{}-oci.tar", env!("CARGO_PKG_VERSION"));
    let image_index = printed("multi-arch image", &index_name)?;
    let sums = printed("checksum file", "/SHA256SUMS")?;
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("package");
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("root");
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    succeed(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root))?;
    let arm_root = work.join("arm-root");
    std::fs::create_dir_all(&arm_root).map_err(|e| format!("{}: {e}", arm_root.display()))?;
    succeed(
        Command::new("dpkg-deb")
            .arg("-x")
            .arg(&arm_deb)
            .arg(&arm_root),
    )?;
    Ok(Artifacts {
        unpacked: unpack(&archive, &work.join("archive"))?,
        static_unpacked: unpack(&static_archive, &work.join("static-archive"))?,
        arm_unpacked: unpack(&arm_archive, &work.join("arm-archive"))?,
        deb,
        archive,
        static_archive,
        image,
        arm_deb,
        arm_archive,
        arm_image,
        image_index,
        sums,
        root,
        arm_root,
    })
}

/// Unpacks `archive` into `into`, and returns its one top directory.
fn unpack(archive: &Path, into: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(into).map_err(|e| format!("{}: {e}", into.display()))?;
    succeed(
        Command::new("tar")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(into),
    )?;
    let top: Vec<PathBuf> = std::fs::read_dir(into)
        .map_err(|e| e.to_string())?
        .map(|entry| entry.unwrap().path())
        .collect();
    let [unpacked] = <[PathBuf; 1]>::try_from(top)
        .map_err(|top| format!("{} holds {top:?}, not one directory", archive.display()))?;
    Ok(unpacked)
}

/// The command's stdout, or why it failed.
fn succeed(command: &mut Command) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|e| format!("{command:?}: {e} (is it installed?)"))?;
    if !output.status.success() {
        return Err(format!("{command:?} failed:\n{}", describe(&output)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn run(command: &mut Command) -> String {
    succeed(command).unwrap_or_else(|why| panic!("{why}"))
}

/// The stdout of a checker (man, systemd-analyze) that must succeed and say nothing on
/// stderr: both report what they find wrong there, and still exit 0 for a mere warning.
fn without_a_word_on_stderr(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e} (is it installed?)"));
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{command:?}: {}",
        describe(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The names of the files in one of the repository's directories.
fn files_in(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// "x86_64" of "x86_64-unknown-linux-gnu".
fn cpu() -> String {
    let target = common::host_target();
    target.split('-').next().unwrap().to_string()
}

/// What OCI image configurations call a CPU ("amd64" for x86_64, "arm64" for aarch64).
fn oci_architecture(cpu: &str) -> &str {
    match cpu {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

fn debian_architecture() -> String {
    run(Command::new("dpkg").arg("--print-architecture"))
        .trim()
        .to_string()
}

/// Regular files of the package (`dpkg-deb -c`): path (without "./") -> (mode, owner).
fn package_files(deb: &Path) -> BTreeMap<String, (String, String)> {
    let listing = run(Command::new("dpkg-deb").arg("-c").arg(deb));
    listing
        .lines()
        .filter(|line| line.starts_with('-'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let path = fields.last().unwrap().trim_start_matches("./").to_string();
            (path, (fields[0].to_string(), fields[1].to_string()))
        })
        .collect()
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_package_puts_every_file_where_the_tools_look_for_it() {
    let artifacts = artifacts();
    let name = artifacts.deb.file_name().unwrap().to_str().unwrap();
    let expected_name = format!(
        "redlock_{}_{}.deb",
        env!("CARGO_PKG_VERSION"),
        debian_architecture()
    );
    assert_eq!(name, expected_name);

    let doc = "usr/share/doc/redlock";
    let mut expected = BTreeSet::from([
        "usr/bin/redlock".to_string(),
        "usr/share/bash-completion/completions/redlock".to_string(),
        "usr/share/zsh/vendor-completions/_redlock".to_string(),
        "usr/share/fish/vendor_completions.d/redlock.fish".to_string(),
        format!("{doc}/README.md"),
        format!("{doc}/CHANGELOG.md"),
        format!("{doc}/BENCHMARKS.md"),
        format!("{doc}/copyright"),
        format!("{doc}/examples/fenced-append.sh"),
    ]);
    for page in files_in("man") {
        expected.insert(format!("usr/share/man/man1/{page}.gz"));
    }
    for example in files_in("examples/systemd") {
        expected.insert(format!("{doc}/examples/{example}"));
    }
    for page in files_in("docs") {
        expected.insert(format!("{doc}/docs/{page}"));
    }
    let files = package_files(&artifacts.deb);
    let found: BTreeSet<String> = files.keys().cloned().collect();
    assert_eq!(found, expected, "the package's files");

    for (path, (mode, owner)) in &files {
        assert!(owner == "root/root" || owner == "0/0", "{path}: {owner}");
        let executable = path == "usr/bin/redlock" || path.ends_with(".sh");
        let want = if executable {
            "-rwxr-xr-x"
        } else {
            "-rw-r--r--"
        };
        assert_eq!(mode, want, "{path}");
    }

    // What the package ships is what the repository checks in (and tests/generated.rs keeps
    // up to date): the pages, gzipped; the completion scripts as they are.
    for page in files_in("man") {
        let packaged = artifacts.root.join(format!("usr/share/man/man1/{page}.gz"));
        let unzipped = run(Command::new("gzip").arg("-dc").arg(&packaged));
        let checked_in = std::fs::read_to_string(repo().join("man").join(&page)).unwrap();
        assert!(unzipped == checked_in, "{page} differs from man/{page}");
    }
    for (checked_in, packaged) in [
        (
            "redlock.bash",
            "usr/share/bash-completion/completions/redlock",
        ),
        ("_redlock", "usr/share/zsh/vendor-completions/_redlock"),
        (
            "redlock.fish",
            "usr/share/fish/vendor_completions.d/redlock.fish",
        ),
    ] {
        let packaged = std::fs::read(artifacts.root.join(packaged)).unwrap();
        let checked_in_bytes = std::fs::read(repo().join("completions").join(checked_in)).unwrap();
        assert!(packaged == checked_in_bytes, "{checked_in} differs");
    }
    // Debian's machine-readable copyright file, with the MIT text (Apache-2.0's is in
    // /usr/share/common-licenses on every Debian system).
    let copyright = std::fs::read_to_string(artifacts.root.join(doc).join("copyright")).unwrap();
    for needed in [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "License: MIT or Apache-2.0",
        " Permission is hereby granted, free of charge",
        "/usr/share/common-licenses/Apache-2.0",
    ] {
        assert!(copyright.contains(needed), "no {needed:?} in:\n{copyright}");
    }
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_control_fields_name_the_package_and_it_depends_on_nothing() {
    let artifacts = artifacts();
    let field = |name: &str| {
        run(Command::new("dpkg-deb")
            .arg("--field")
            .arg(&artifacts.deb)
            .arg(name))
        .trim_end()
        .to_string()
    };
    assert_eq!(field("Package"), "redlock");
    assert_eq!(field("Version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(field("Architecture"), debian_architecture());
    assert_eq!(field("Section"), "admin");
    assert_eq!(field("Priority"), "optional");
    assert!(!field("Maintainer").is_empty());
    assert!(field("Installed-Size").parse::<u64>().is_ok());
    // A synopsis line (the crate's description), then the long description.
    let description = field("Description");
    let mut lines = description.lines();
    let synopsis = lines.next().unwrap();
    assert_eq!(synopsis, env!("CARGO_PKG_DESCRIPTION"));
    assert!(synopsis.len() < 80, "{synopsis}");
    assert!(
        lines.next().is_some(),
        "no long description:\n{description}"
    );

    // The package holds the static binary, the static archive's own bytes, so it depends on
    // nothing: it installs and runs on a Debian or Ubuntu whose glibc is older than the
    // native build needs (Ubuntu 20.04, Debian 11).
    assert_eq!(field("Depends"), "", "a static binary needs no package");
    let packaged = artifacts.root.join("usr/bin/redlock");
    let linkage = common::elf::linkage(&packaged);
    assert!(
        linkage.is_static(),
        "the packaged binary is not static: {linkage:?}"
    );
    assert_eq!(
        std::fs::read(&packaged).unwrap(),
        std::fs::read(artifacts.static_unpacked.join("redlock")).unwrap(),
        "the packaged binary is not the static archive's"
    );
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_packaged_binary_says_what_it_is_and_runs_a_command_under_the_lock() {
    let artifacts = artifacts();
    let redlock = artifacts.root.join("usr/bin/redlock");
    common::assert_long_version_for(
        &run(common::redlock_at(&redlock).arg("--version")),
        &common::static_target(),
    );

    let cluster = Cluster::start(3);
    let output = common::redlock_at(&redlock)
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .args(["run", "--key", "packaged", "--ttl", "10s", "--"])
        .args(["sh", "-c", "echo \"$REDLOCK_KEY is held\"; exit 3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "packaged is held\n"
    );
    assert!(cluster.key_gone_everywhere("packaged"), "not released");
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn every_man_page_renders_without_warnings_and_man_finds_them_by_name() {
    let artifacts = artifacts();
    let man1 = artifacts.root.join("usr/share/man/man1");
    for page in files_in("man") {
        let path = man1.join(format!("{page}.gz"));
        let text = without_a_word_on_stderr(
            Command::new("man")
                // groff's "w" is every warning ("all" leaves out undefined macros and strings).
                .args(["--warnings=w", "-P", "cat", "-l"])
                .arg(&path)
                .env("MANWIDTH", "80"),
        );
        assert!(
            text.contains("NAME") && text.contains("redlock"),
            "{page}:\n{text}"
        );
        // `man redlock-run` as typed after installing: found in the package's man directory.
        let name = page.trim_end_matches(".1");
        let found = run(Command::new("man")
            .args(["-w", name])
            .env("MANPATH", artifacts.root.join("usr/share/man")));
        assert_eq!(Path::new(found.trim()), path, "man -w {name}");
    }
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_bash_completion_completes_a_subcommand_and_its_options() {
    let artifacts = artifacts();
    let script = artifacts
        .root
        .join("usr/share/bash-completion/completions/redlock");
    // What bash does on TAB: the function registered for `redlock` (complete -p), called with
    // the command, the word being completed and the one before, COMP_WORDS and COMP_CWORD set.
    let program = r#"
        source "$1"
        spec=$(complete -p redlock) || exit 1
        function=${spec#*-F }
        function=${function%% *}
        complete_line() {
            COMP_LINE=$1
            COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"
            [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            COMPREPLY=()
            "$function" redlock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\n' "${COMPREPLY[@]}"
        }
        complete_line "redlock ru"
        echo ---
        complete_line "redlock run --k"
    "#;
    let output = run(Command::new("bash")
        .args(["--norc", "--noprofile", "-c", program, "bash"])
        .arg(&script));
    let (subcommands, options) = output.split_once("---\n").expect(&output);
    assert_eq!(subcommands.trim(), "run", "{output}");
    assert!(
        options.lines().any(|word| word.trim() == "--key"),
        "{output}"
    );
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_archive_holds_the_binary_pages_completions_docs_and_licenses() {
    let artifacts = artifacts();
    let top = format!("redlock-{}-{}-linux-gnu", env!("CARGO_PKG_VERSION"), cpu());
    let name = artifacts.archive.file_name().unwrap().to_str().unwrap();
    assert_eq!(name, format!("{top}.tar.gz"));
    assert_eq!(
        artifacts.unpacked.file_name().unwrap().to_str().unwrap(),
        top
    );

    assert_eq!(archive_files(&artifacts.archive), archive_holds(&top));
    let redlock = artifacts.unpacked.join("redlock");
    common::assert_long_version_for(
        &run(common::redlock_at(&redlock).arg("--version")),
        &common::host_target(),
    );
}

/// The files (not directories) `archive` lists.
fn archive_files(archive: &Path) -> BTreeSet<String> {
    let listing = run(Command::new("tar").arg("-tzf").arg(archive));
    listing
        .lines()
        .filter(|entry| !entry.ends_with('/'))
        .map(str::to_string)
        .collect()
}

/// The files an archive whose top directory is `top` must hold, and only they.
fn archive_holds(top: &str) -> BTreeSet<String> {
    let mut expected: BTreeSet<String> = [
        "redlock",
        "README.md",
        "CHANGELOG.md",
        "BENCHMARKS.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "examples/fenced-append.sh",
    ]
    .iter()
    .map(|file| format!("{top}/{file}"))
    .collect();
    for dir in ["man", "completions", "examples/systemd", "docs"] {
        for file in files_in(dir) {
            expected.insert(format!("{top}/{dir}/{file}"));
        }
    }
    expected
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn sha256sums_checks_every_artifact() {
    let artifacts = artifacts();
    let dist = artifacts.sums.parent().unwrap();
    let checked = run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(dist));
    let mut lines: Vec<&str> = checked.lines().collect();
    lines.sort();
    let name = |path: &Path| path.file_name().unwrap().to_str().unwrap().to_string();
    let mut expected = vec![
        format!("{}: OK", name(&artifacts.archive)),
        format!("{}: OK", name(&artifacts.static_archive)),
        format!("{}: OK", name(&artifacts.deb)),
        format!("{}: OK", name(&artifacts.image)),
        format!("{}: OK", name(&artifacts.arm_deb)),
        format!("{}: OK", name(&artifacts.arm_archive)),
        format!("{}: OK", name(&artifacts.arm_image)),
        format!("{}: OK", name(&artifacts.image_index)),
    ];
    expected.sort();
    assert_eq!(lines, expected);
}

/// A service unit's `Environment=` assignments and `ExecStart=` words, read as systemd reads
/// our examples: each checked to be plain words (no quotes, `%` specifiers, `$` expansion or
/// continued lines), for which splitting on white space is exact.
struct Service {
    environment: Vec<(String, String)>,
    exec_start: Vec<String>,
}

fn service(unit: &str) -> Service {
    let mut environment = Vec::new();
    let mut exec_start = Vec::new();
    for line in unit.lines() {
        if let Some(assignment) = line.strip_prefix("Environment=") {
            let (name, value) = assignment.split_once('=').expect(line);
            environment.push((name.to_string(), value.to_string()));
        } else if let Some(command) = line.strip_prefix("ExecStart=") {
            assert!(
                !command.contains(['"', '\'', '\\', '%', '$']),
                "not plain words: {line}"
            );
            exec_start = command.split_whitespace().map(str::to_string).collect();
        }
    }
    Service {
        environment,
        exec_start,
    }
}

/// `redlock run ...` as the unit's ExecStart= has it, from the package's binary, against
/// `cluster` instead of the example's masters; its command (after `--`) is the test's.
fn exec_start(artifacts: &Artifacts, unit: &str, cluster: &Cluster) -> std::process::Command {
    let service = service(unit);
    assert_eq!(service.exec_start[0], "/usr/bin/redlock", "{unit}");
    let dash = service
        .exec_start
        .iter()
        .position(|w| w == "--")
        .expect(unit);
    assert!(dash + 1 < service.exec_start.len(), "no command: {unit}");
    let mut command = common::redlock_at(&artifacts.root.join("usr/bin/redlock"));
    command.args(&service.exec_start[1..dash]);
    for (name, value) in &service.environment {
        command.env(name, value);
    }
    assert!(
        service
            .environment
            .iter()
            .any(|(name, _)| name == "REDLOCK_SERVERS"),
        "the example names no masters: {unit}"
    );
    command.env("REDLOCK_SERVERS", cluster.servers_env());
    command
}

/// The value of `--key` in a unit's ExecStart=.
fn key_of(unit: &str) -> String {
    let words = service(unit).exec_start;
    let at = words.iter().position(|w| w == "--key").expect(unit);
    words[at + 1].clone()
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_systemd_examples_verify_and_their_command_lines_work_as_written() {
    let artifacts = artifacts();
    let examples = artifacts.root.join("usr/share/doc/redlock/examples");
    let read = |name: &str| std::fs::read_to_string(examples.join(name)).unwrap();

    // systemd-analyze checks the units as systemd would load them after the package is
    // installed: the binary at /usr/bin/redlock (here: in the unpacked package) and the man
    // page of Documentation= (found through MANPATH).
    let units = tempfile::tempdir().unwrap();
    let binary = artifacts.root.join("usr/bin/redlock");
    let mut names = Vec::new();
    for name in files_in("examples/systemd") {
        let text = read(&name).replace("/usr/bin/redlock", binary.to_str().unwrap());
        std::fs::write(units.path().join(&name), text).unwrap();
        names.push(units.path().join(&name));
    }
    without_a_word_on_stderr(
        Command::new("systemd-analyze")
            .arg("verify")
            .args(&names)
            .env("MANPATH", artifacts.root.join("usr/share/man")),
    );

    // The nightly job: the first host runs it; a host firing later that night finds the lock
    // (kept by --hold-min) and finishes at once, successfully, without running it.
    let cluster = Cluster::start(3);
    let backup = read("nightly-backup.service");
    for (host, runs) in [("first", true), ("late", false)] {
        let mut job =
            Running::start_script(&mut exec_start(artifacts, &backup, &cluster), "", "exit 0");
        let output = job.wait_output();
        assert!(
            output.status.success(),
            "{host} host: {}",
            describe(&output)
        );
        assert_eq!(job.path("ready").exists(), runs, "{host} host ran the job");
    }

    // The standby worker: with the lock held elsewhere it waits in line, and takes over when
    // the active host lets go.
    let worker = read("standby-worker.service");
    let key = key_of(&worker);
    let mut active = Running::start(
        common::redlock_at(&binary)
            .env("REDLOCK_SERVERS", cluster.servers_env())
            .args(["run", "--key", &key, "--ttl", "20s"]),
    );
    active.wait_ready();
    let mut standby = Running::start(&mut exec_start(artifacts, &worker, &cluster));
    let queued = eventually(Duration::from_secs(10), || {
        let status = common::redlock_at(&binary)
            .env("REDLOCK_SERVERS", cluster.servers_env())
            .args(["status", "--key", &key, "--json"])
            .output()
            .unwrap();
        let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap_or_default();
        status["waiting"] == 1
    });
    assert!(
        queued,
        "the standby never queued: {}",
        standby.stderr_so_far()
    );
    assert!(
        !standby.path("ready").exists(),
        "ran while the lock was held"
    );
    active.open_gate();
    assert!(active.wait_output().status.success());
    standby.wait_ready();
    standby.open_gate();
    let output = standby.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}
