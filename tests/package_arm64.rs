//! The aarch64 (arm64) artifacts scripts/package builds beside the x86_64 ones, checked as
//! those are where this x86_64 host can: the .deb's control fields and files, the archive's
//! contents and its binary's ELF header (aarch64, static: no interpreter, no library), the
//! arm64 image's configuration, and the multi-arch index of the two images, read by skopeo as a
//! registry client would. The binary itself runs only under emulation: qemu-user, registered
//! with the kernel's binfmt_misc for aarch64 ELF files (scripts/test-aarch64 registers it, as
//! root, from Debian's qemu-user-static); where it is not registered those tests fail and say
//! so, rather than pass without running it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{self, describe, elf};
use crate::package_image::oci::{self, Container, arm64_image};
use crate::package_static::root::EmptyRoot;
use crate::{archive_files, archive_holds, artifacts, package_files, run};

const TARGET: &str = "aarch64-unknown-linux-musl";

/// Where the kernel lists the aarch64 interpreter once scripts/test-aarch64 registered it.
const BINFMT: &str = "/proc/sys/fs/binfmt_misc/qemu-aarch64";

/// Panics, saying how to fix it, unless the kernel runs aarch64 binaries through qemu-user.
pub(crate) fn require_emulation() {
    let registered = std::fs::read_to_string(BINFMT).unwrap_or_default();
    assert!(
        registered.lines().next() == Some("enabled"),
        "{BINFMT} is not an enabled entry: this x86_64 host cannot run the aarch64 binary; \
         register qemu-user with binfmt_misc: run scripts/binfmt-aarch64 as root (it installs \
         Debian's qemu-user-static)"
    );
}

fn arm_binary() -> PathBuf {
    artifacts().arm_unpacked.join("redlock")
}

/// The binary is a static aarch64 ELF: e_machine EM_AARCH64, no PT_INTERP, no DT_NEEDED.
fn assert_static_aarch64(binary: &Path) {
    let linkage = elf::linkage(binary);
    assert_eq!(
        linkage.machine,
        elf::EM_AARCH64,
        "{}: {linkage:?}",
        binary.display()
    );
    assert!(
        linkage.is_static(),
        "{} needs {linkage:?}",
        binary.display()
    );
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_arm64_package_says_arm64_and_holds_what_the_amd64_one_does() {
    let artifacts = artifacts();
    let name = artifacts.arm_deb.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        name,
        format!("redlock_{}_arm64.deb", env!("CARGO_PKG_VERSION"))
    );
    let field = |deb: &Path, name: &str| {
        run(Command::new("dpkg-deb").arg("--field").arg(deb).arg(name))
            .trim_end()
            .to_string()
    };
    assert_eq!(field(&artifacts.arm_deb, "Architecture"), "arm64");
    assert_eq!(
        field(&artifacts.arm_deb, "Depends"),
        "",
        "a static binary needs no package"
    );
    for same in [
        "Package",
        "Version",
        "Section",
        "Priority",
        "Maintainer",
        "Description",
    ] {
        assert_eq!(
            field(&artifacts.arm_deb, same),
            field(&artifacts.deb, same),
            "the two packages' {same}"
        );
    }
    assert_eq!(
        package_files(&artifacts.arm_deb),
        package_files(&artifacts.deb),
        "the two packages' files, modes and owners"
    );
    let packaged = artifacts.arm_root.join("usr/bin/redlock");
    assert_static_aarch64(&packaged);
    assert_eq!(
        std::fs::read(&packaged).unwrap(),
        std::fs::read(arm_binary()).unwrap(),
        "the arm64 package's binary is not the aarch64 archive's"
    );
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_aarch64_archive_holds_what_the_others_do_and_a_static_aarch64_binary() {
    let artifacts = artifacts();
    let top = format!("redlock-{}-{TARGET}", env!("CARGO_PKG_VERSION"));
    let name = artifacts.arm_archive.file_name().unwrap().to_str().unwrap();
    assert_eq!(name, format!("{top}.tar.gz"));
    assert_eq!(artifacts.arm_unpacked.file_name().unwrap(), &*top);
    assert_eq!(archive_files(&artifacts.arm_archive), archive_holds(&top));
    assert_static_aarch64(&arm_binary());
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn under_emulation_the_aarch64_binary_says_its_target_here_and_in_an_empty_root() {
    require_emulation();
    let shown = run(common::redlock_at(&arm_binary()).arg("--version"));
    common::assert_long_version_for(&shown, TARGET);
    // binfmt_misc's F flag (Debian's registration has it) opens qemu at registration, so the
    // binary runs where no qemu is: in an empty root.
    let root = EmptyRoot::new(&arm_binary());
    let shown = root.redlock(&["--version"]).output().unwrap();
    assert!(
        shown.status.success(),
        "in an empty root: {}",
        describe(&shown)
    );
    common::assert_long_version_for(&String::from_utf8_lossy(&shown.stdout), TARGET);
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_arm64_image_says_arm64_and_under_emulation_its_entrypoint_runs() {
    let image = arm64_image();
    let config = &image.config;
    assert_eq!(config["architecture"], "arm64", "{config}");
    assert_eq!(config["os"], "linux", "{config}");
    let host = oci::image();
    for same in ["Entrypoint", "Cmd", "User", "Env", "WorkingDir", "Labels"] {
        assert_eq!(
            config["config"][same], host.config["config"][same],
            "the two images' {same}"
        );
    }
    let layer = tempfile::tempdir().unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&image.layer)
        .arg("-C")
        .arg(layer.path()));
    let binary = layer.path().join("usr/local/bin/redlock");
    assert_static_aarch64(&binary);
    assert_eq!(
        std::fs::read(&binary).unwrap(),
        std::fs::read(arm_binary()).unwrap(),
        "the arm64 image's binary is not the aarch64 archive's"
    );

    require_emulation();
    let output = Container::of(image, "--version", &[]).output();
    assert!(output.status.success(), "runc: {}", describe(&output));
    common::assert_long_version_for(&String::from_utf8_lossy(&output.stdout), TARGET);
}

/// The index's `platform` -> the manifest digest it names.
fn platforms(index: &Value) -> Vec<(String, String)> {
    let manifests = index["manifests"].as_array().expect("an index's manifests");
    manifests
        .iter()
        .map(|entry| {
            let platform = &entry["platform"];
            let name = format!(
                "{}/{}",
                platform["os"].as_str().unwrap(),
                platform["architecture"].as_str().unwrap()
            );
            (name, entry["digest"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_multi_arch_index_lists_both_images_and_skopeo_copies_it_whole() {
    let artifacts = artifacts();
    let layout = tempfile::tempdir().unwrap();
    run(Command::new("tar")
        .arg("-xf")
        .arg(&artifacts.image_index)
        .arg("-C")
        .arg(layout.path()));
    let top = oci::json_file(&layout.path().join("index.json"));
    let entries = top["manifests"].as_array().expect("index.json: manifests");
    assert_eq!(entries.len(), 1, "one entry, the multi-arch image: {top}");
    let entry = &entries[0];
    assert_eq!(
        entry["mediaType"], "application/vnd.oci.image.index.v1+json",
        "{entry}"
    );
    assert_eq!(
        entry["annotations"]["org.opencontainers.image.ref.name"],
        oci::tag(),
        "{entry}"
    );
    let index = oci::blob_json(layout.path(), entry);
    let digest_of = |archive: &Path| {
        std::fs::read_to_string(archive.with_extension("digest"))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(
        platforms(&index),
        [
            ("linux/amd64".to_string(), digest_of(&artifacts.image)),
            ("linux/arm64".to_string(), digest_of(&artifacts.arm_image)),
        ],
        "{index}"
    );
    assert_eq!(
        std::fs::read_to_string(artifacts.image_index.with_extension("digest"))
            .unwrap()
            .trim(),
        entry["digest"].as_str().unwrap(),
        "the .digest file names the index"
    );
    // Every blob each manifest names is in the layout, as its digest and size say.
    for descriptor in index["manifests"].as_array().unwrap() {
        let manifest = oci::blob_json(layout.path(), descriptor);
        oci::blob_path(layout.path(), &manifest["config"]);
        for layer in manifest["layers"].as_array().unwrap() {
            oci::blob_path(layout.path(), layer);
        }
    }

    // skopeo, as a release pushes it (to a registry: here an OCI layout), copies both images
    // and the index, which keeps its digest; and picks each platform's image from it.
    let source = format!(
        "oci-archive:{}:{}",
        artifacts.image_index.display(),
        oci::tag()
    );
    let copied = tempfile::tempdir().unwrap();
    let destination = format!("oci:{}:{}", copied.path().display(), oci::tag());
    run(Command::new("skopeo").args(["copy", "--all", "--quiet", &source, &destination]));
    let raw = run(Command::new("skopeo").args(["inspect", "--raw", &destination]));
    let raw: Value = serde_json::from_str(&raw).expect("skopeo inspect --raw: JSON");
    assert_eq!(raw, index, "skopeo's copy of the index");
    for architecture in ["amd64", "arm64"] {
        let config = run(Command::new("skopeo").args([
            "--override-os",
            "linux",
            "--override-arch",
            architecture,
            "inspect",
            "--config",
            &destination,
        ]));
        let config: Value = serde_json::from_str(&config).expect("skopeo inspect --config: JSON");
        assert_eq!(config["architecture"], architecture, "{config}");
    }

    // podman, without a daemon, in a store of its own: `podman load` takes this machine's
    // image from the index, and `podman pull --arch` the other one.
    let store = tempfile::tempdir().unwrap();
    let podman = |args: &[&str]| {
        let mut command = Command::new("podman");
        command
            .arg("--root")
            .arg(store.path().join("root"))
            .arg("--runroot")
            .arg(store.path().join("run"))
            .args(["--storage-driver", "vfs"])
            .args(args);
        run(&mut command)
    };
    let index = artifacts.image_index.to_str().unwrap();
    podman(&["load", "--quiet", "--input", index]);
    let loaded = podman(&[
        "image",
        "inspect",
        "--format",
        "{{.Architecture}}",
        &oci::tag(),
    ]);
    assert_eq!(
        loaded.trim(),
        super::oci_architecture(&super::cpu()),
        "podman load"
    );
    let pulled = podman(&["pull", "--quiet", "--arch", "arm64", &source]);
    let pulled = podman(&[
        "image",
        "inspect",
        "--format",
        "{{.Architecture}}",
        pulled.trim(),
    ]);
    assert_eq!(pulled.trim(), "arm64", "podman pull --arch arm64");
}
