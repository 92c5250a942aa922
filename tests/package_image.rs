//! The OCI image (`scripts/image`) as a container runtime runs it: the archive read as an OCI
//! image layout (its digest, annotations, configuration and one layer), unpacked by umoci into
//! a runtime bundle as any runtime unpacks an image, and run by runc against real masters on
//! loopback: TLS with a CA file mounted in, a certificate the image's own CA bundle refuses,
//! and SIGTERM to redlock as the container's PID 1. And scripts/image run again on the
//! binary in the image, twice: the same archive, byte for byte.
//!
//! The containers share the host's network namespace (the masters listen on 127.0.0.1) and
//! are run as root by runc (Debian package `runc`), with umoci (`umoci`, which scripts/image
//! installs) to unpack the image.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{repo, run};
use crate::common::{self, Captured, Pki, Server, describe, eventually};

pub(crate) mod oci;

use oci::{Container, entrypoint, image, tag};

/// The user the image runs as: not root, with a name in the image's /etc/passwd.
const USER: &str = "redlock";
const UID: u32 = 65532;

/// A TLS master signed by a test CA, and a directory to mount at /etc/redlock: a config file
/// naming the master by address (the image has no /etc/hosts) and the CA, readable by the
/// image's user.
struct TlsMaster {
    pki: Pki,
    server: Server,
    etc: TempDir,
}

fn tls_master() -> TlsMaster {
    use std::os::unix::fs::PermissionsExt;
    let pki = Pki::generate();
    let server = Server::start_tls(&pki, false);
    let etc = tempfile::tempdir().unwrap();
    let config = format!(
        "servers = [\"{}\"]\n\n[tls]\nca_cert = \"/etc/redlock/ca.pem\"\n",
        tls_url_by_address(&server)
    );
    std::fs::write(etc.path().join("config.toml"), config).unwrap();
    std::fs::copy(&pki.ca, etc.path().join("ca.pem")).unwrap();
    for (path, mode) in [
        (etc.path().to_path_buf(), 0o755),
        (etc.path().join("config.toml"), 0o644),
        (etc.path().join("ca.pem"), 0o644),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    TlsMaster { pki, server, etc }
}

fn tls_url_by_address(server: &Server) -> String {
    server.tls_url().replace("localhost", "127.0.0.1")
}

/// `redlock status --key KEY --json` from the host, against the master.
fn status(master: &TlsMaster, key: &str) -> Value {
    let output = common::redlock()
        .args(["-s", &master.server.tls_url(), "--tls-ca-cert"])
        .arg(&master.pki.ca)
        .args(["status", "--key", key, "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{}", describe(&output)))
}

/// No key of `key`'s lock (the lock, its holder record, its queue) is left on `server`; the
/// keys left otherwise.
fn nothing_left_of(server: &Server, key: &str) -> bool {
    let gone = eventually(Duration::from_secs(5), || {
        server
            .lock_keys()
            .iter()
            .all(|stored| !stored.ends_with(key))
    });
    if !gone {
        eprintln!("left on the master: {:?}", server.lock_keys());
    }
    gone
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_image_runs_a_command_under_a_lock_on_a_tls_master_as_its_own_user() {
    let master = tls_master();
    // The command is the image's only program: redlock, saying who holds the lock.
    let container = Container::new(
        "run --key image-tls -- redlock status --key image-tls --json",
        &[(master.etc.path(), "/etc/redlock")],
    );
    let output = container.output();
    assert!(output.status.success(), "{}", describe(&output));
    let status: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    assert_eq!(status["verdict"], "held", "{status}");
    // The holder is redlock as the container's PID 1, under the name /etc/passwd gives its uid.
    assert_eq!(status["holder"]["user"], USER, "{status}");
    assert_eq!(status["holder"]["pid"], 1, "{status}");
    assert!(nothing_left_of(&master.server, "image-tls"));
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_images_own_ca_bundle_refuses_a_private_ca_with_78() {
    let master = tls_master();
    let url = tls_url_by_address(&master.server);
    let container = Container::new(&format!("-s {url} run --key k -- redlock -V"), &[]);
    let output = container.output();
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The store was found and read (an empty one says so), and it does not hold the test CA.
    assert!(
        stderr.contains("its certificate is not signed by a CA that redlock trusts"),
        "{stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "the command ran: {}",
        describe(&output)
    );
    let keys = master.server.lock_keys();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn sigterm_to_redlock_as_pid_1_stops_the_command_releases_the_lock_and_exits_143() {
    let master = tls_master();
    // A command that waits until signalled: redlock waiting in line for a lock the host holds.
    let busy = common::redlock()
        .args(["-s", &master.server.tls_url(), "--tls-ca-cert"])
        .arg(&master.pki.ca)
        .args(["acquire", "--key", "image-busy", "--ttl", "2m"])
        .output()
        .unwrap();
    assert!(busy.status.success(), "{}", describe(&busy));
    let container = Container::new(
        "run --key image-term -- redlock acquire --key image-busy --wait 10m",
        &[(master.etc.path(), "/etc/redlock")],
    );
    let mut runc = container
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("runc: {e} (install Debian's package runc)"));
    let stderr = Captured::stderr_of(&mut runc);
    let queued = eventually(Duration::from_secs(30), || {
        status(&master, "image-busy")["waiting"] == 1
    });
    assert!(queued, "the command never queued: {}", stderr.text());
    let held = status(&master, "image-term");
    assert_eq!(held["holder"]["pid"], 1, "{held}");

    run(Command::new("runc").args(["kill", &container.id, "TERM"]));
    let exit = runc.wait().unwrap();
    // README's exit codes: 128+N for a command ended by signal N, forwarded by redlock.
    assert_eq!(exit.code(), Some(128 + 15), "{exit}: {}", stderr.finish());
    assert!(nothing_left_of(&master.server, "image-term"));
    let busy = status(&master, "image-busy");
    assert_eq!(
        busy["waiting"], 0,
        "the command kept its place in line: {busy}"
    );
}

/// The annotations scripts/image writes, from the package's metadata and the commit of the
/// binary in the image.
fn expected_annotations() -> BTreeMap<String, String> {
    let container = Container::new("--version", &[]);
    let version = container.output();
    assert!(version.status.success(), "{}", describe(&version));
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let lines: Vec<&str> = version.lines().collect();
    let musl = format!("target {}-unknown-linux-musl", super::cpu());
    assert_eq!(lines.len(), 3, "{version}");
    assert_eq!(lines[0], format!("redlock {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(lines[2], musl, "the static build");
    let commit = lines[1].strip_prefix("commit ").expect(&version);
    let revision = run(Command::new("git")
        .args(["rev-parse", "--verify", &format!("{commit}^{{commit}}")])
        .current_dir(repo()));
    let revision = revision.trim().to_string();
    // The commit's time, in UTC, as the OCI spec's RFC 3339.
    let created = run(Command::new("git")
        .args([
            "show",
            "-s",
            "--date=format-local:%Y-%m-%dT%H:%M:%SZ",
            "--format=%cd",
        ])
        .arg(&revision)
        .env("TZ", "UTC")
        .current_dir(repo()));
    let mut expected = BTreeMap::new();
    let prefix = "org.opencontainers.image.";
    for (name, value) in [
        ("title", "redlock"),
        ("description", env!("CARGO_PKG_DESCRIPTION")),
        ("version", env!("CARGO_PKG_VERSION")),
        ("revision", &revision),
        ("created", created.trim()),
        ("licenses", env!("CARGO_PKG_LICENSE")),
        // Cargo.toml's repository, when it names one.
        ("source", env!("CARGO_PKG_REPOSITORY")),
    ] {
        if !value.is_empty() {
            expected.insert(format!("{prefix}{name}"), value.to_string());
        }
    }
    expected
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_image_is_described_by_oci_annotations_and_runs_redlock_as_a_non_root_user() {
    let image = image();
    let expected = expected_annotations();
    let annotations: BTreeMap<String, String> =
        serde_json::from_value(image.manifest["annotations"].clone()).unwrap();
    assert_eq!(annotations, expected, "the manifest's annotations");
    let config = &image.config;
    let labels: BTreeMap<String, String> =
        serde_json::from_value(config["config"]["Labels"].clone()).unwrap();
    assert_eq!(labels, expected, "the configuration's labels");
    let created = &expected["org.opencontainers.image.created"];
    assert_eq!(config["created"], json!(created), "{config}");
    for entry in config["history"].as_array().unwrap() {
        assert_eq!(entry["created"], json!(created), "{config}");
    }
    let architecture = super::oci_architecture(&super::cpu()).to_string();
    assert_eq!(config["architecture"], json!(architecture), "{config}");
    assert_eq!(config["os"], "linux", "{config}");
    assert_eq!(config["config"]["User"], format!("{UID}:{UID}"), "{config}");
    assert_eq!(entrypoint(), ["/usr/local/bin/redlock"]);
    assert_eq!(config["config"]["Cmd"], json!(["--help"]), "{config}");
    // `podman load` names the image so (localhost/redlock:VERSION); `skopeo copy
    // oci-archive:FILE:redlock:VERSION` finds it by that name.
    let name = &image.descriptor["annotations"]["org.opencontainers.image.ref.name"];
    assert_eq!(name, &tag(), "{}", image.descriptor);
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_image_holds_the_binary_the_ca_bundle_a_named_user_and_the_licenses_only() {
    let image = image();
    let listing = run(Command::new("tar")
        .args(["-tvzf"])
        .arg(&image.layer)
        .args(["--numeric-owner"]));
    let mut files = BTreeMap::new();
    for line in listing.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[1], "0/0", "owned by root: {line}");
        files.insert(fields[5].to_string(), fields[0].to_string());
    }
    let dirs = [
        "etc/",
        "etc/ssl/",
        "etc/ssl/certs/",
        "usr/",
        "usr/local/",
        "usr/local/bin/",
        "usr/local/share/",
        "usr/local/share/doc/",
        "usr/local/share/doc/redlock/",
        "usr/share/",
        "usr/share/doc/",
        "usr/share/doc/ca-certificates/",
    ];
    let mut expected: BTreeMap<String, String> = dirs
        .iter()
        .map(|dir| (dir.to_string(), "drwxr-xr-x".to_string()))
        .collect();
    for file in [
        "etc/group",
        "etc/passwd",
        "etc/ssl/certs/ca-certificates.crt",
        "usr/local/share/doc/redlock/LICENSE-APACHE",
        "usr/local/share/doc/redlock/LICENSE-MIT",
        "usr/share/doc/ca-certificates/copyright",
    ] {
        expected.insert(file.to_string(), "-rw-r--r--".to_string());
    }
    expected.insert("usr/local/bin/redlock".into(), "-rwxr-xr-x".into());
    assert_eq!(files, expected, "the layer's files");

    let unpacked = tempfile::tempdir().unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&image.layer)
        .arg("-C")
        .arg(unpacked.path()));
    let read = |path: &str| std::fs::read_to_string(unpacked.path().join(path)).unwrap();
    let passwd = read("etc/passwd");
    let entry = format!("{USER}:x:{UID}:{UID}:");
    assert!(
        passwd.lines().any(|line| line.starts_with(&entry)),
        "{passwd}"
    );
    let group = read("etc/group");
    assert!(
        group.lines().any(|line| line == format!("{USER}:x:{UID}:")),
        "{group}"
    );
    // The certificates of Debian's ca-certificates package, and only those: none of the CAs
    // this host added for itself (update-ca-certificates puts them in /etc/ssl/certs).
    let bundle = read("etc/ssl/certs/ca-certificates.crt");
    let packaged = std::fs::read_dir("/usr/share/ca-certificates/mozilla")
        .unwrap()
        .count();
    assert_eq!(
        bundle.matches("-----BEGIN CERTIFICATE-----").count(),
        packaged
    );
    if let Ok(local) = std::fs::read_dir("/usr/local/share/ca-certificates") {
        for cert in local {
            let pem = std::fs::read_to_string(cert.unwrap().path()).unwrap_or_default();
            let body = pem.lines().nth(1).unwrap_or("not a certificate");
            assert!(!bundle.contains(body), "this host's own CA is in the image");
        }
    }
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let shipped = read(&format!("usr/local/share/doc/redlock/{license}"));
        assert_eq!(
            shipped,
            std::fs::read_to_string(repo().join(license)).unwrap()
        );
    }
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn scripts_image_makes_the_same_archive_again_from_the_same_binary_and_commit() {
    let image = image();
    let digest_file = image.archive.with_extension("digest");
    let digest = std::fs::read_to_string(&digest_file).unwrap();
    assert_eq!(
        digest.trim(),
        image.descriptor["digest"].as_str().unwrap(),
        "{} names the manifest",
        digest_file.display()
    );
    let binary = tempfile::tempdir().unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&image.layer)
        .arg("-C")
        .arg(binary.path())
        .arg("usr/local/bin/redlock"));
    let binary = binary.path().join("usr/local/bin/redlock");
    let original = std::fs::read(&image.archive).unwrap();
    for build in ["first", "second"] {
        let out = tempfile::tempdir().unwrap();
        let printed = run(Command::new(repo().join("scripts/image"))
            .arg(&binary)
            .arg(out.path())
            .stderr(Stdio::inherit()));
        let archive = out.path().join(image.archive.file_name().unwrap());
        assert_eq!(
            printed.lines().collect::<Vec<_>>(),
            [
                archive.to_str().unwrap(),
                out.path()
                    .join(digest_file.file_name().unwrap())
                    .to_str()
                    .unwrap()
            ]
        );
        let again = std::fs::read(&archive).unwrap();
        assert!(
            again == original,
            "the {build} rebuild differs from {}",
            image.archive.display()
        );
    }
}
