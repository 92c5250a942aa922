//! The static build (the musl archive `scripts/package` makes) as it runs where nothing else is:
//! its archive, an ELF without interpreter or needed library, and the binary in an empty root
//! (`package_static/root.rs`: only it, a static busybox for its commands, /etc/hosts and
//! /etc/resolv.conf; no /lib, no /usr, no /proc) against real masters on the host's loopback:
//! masters named in /etc/hosts and found through a DNS server, TLS with a CA file and with the
//! system store where Debian, Alpine and RHEL keep it, the holder's user with and without
//! /etc/passwd, a signal forwarded, SIGKILL. And on this host, both builds as a uid that has
//! no passwd entry (the native one asks the name service, through NSS).

pub(crate) mod root;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{self, Aaaa, Captured, Cluster, Dns, Pki, Server, describe, eventually};
use crate::{archive_files, archive_holds, artifacts, run};
use root::{EmptyRoot, HOSTS_NAME};

/// The static archive's binary.
fn static_binary() -> PathBuf {
    artifacts().static_unpacked.join("redlock")
}

/// `urls`, each naming its master by `host` instead of 127.0.0.1, space-separated.
fn by_name(urls: Vec<String>, host: &str) -> String {
    let named: Vec<String> = urls
        .iter()
        .map(|url| url.replace("127.0.0.1", host))
        .collect();
    named.join(" ")
}

fn output(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e} (is util-linux installed?)"))
}

/// `run` in `root` against `servers`: the command exits 0, and the lock is released.
fn runs_a_command(root: &EmptyRoot, servers: &str, tls: &[&str]) -> Output {
    let mut args = tls.to_vec();
    args.extend([
        "run", "--key", "static", "--ttl", "10s", "--", "sh", "-c", "exit 0",
    ]);
    output(root.redlock(&args).env("REDLOCK_SERVERS", servers))
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_static_archive_holds_what_the_other_does_and_a_binary_without_dynamic_dependencies() {
    let artifacts = artifacts();
    let target = common::static_target();
    let top = format!("redlock-{}-{target}", env!("CARGO_PKG_VERSION"));
    let name = artifacts
        .static_archive
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(name, format!("{top}.tar.gz"));
    assert_eq!(artifacts.static_unpacked.file_name().unwrap(), &*top);
    assert_eq!(
        archive_files(&artifacts.static_archive),
        archive_holds(&top)
    );

    let found = common::elf::linkage(&static_binary());
    assert!(found.is_static(), "the static binary needs {found:?}");
    // The same reading of the native build finds its loader and libraries.
    let native = common::elf::linkage(&artifacts.unpacked.join("redlock"));
    assert!(
        native.interpreter.is_some() && native.needed > 0,
        "{native:?}"
    );
    let shown = run(common::redlock_at(&static_binary()).arg("--version"));
    common::assert_long_version_for(&shown, &target);
}

/// The static binary is the image's: built from the same commit on another machine, it must
/// be the same bytes, so it may not carry where it was built (scripts/build-static remaps the
/// paths that panic messages name: cargo's registry, the checkout).
#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn the_static_binary_names_no_path_of_the_machine_that_built_it() {
    let bytes = std::fs::read(static_binary()).unwrap();
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or(format!("{home}/.cargo"));
    for path in [env!("CARGO_MANIFEST_DIR"), cargo_home.as_str()] {
        let found = bytes
            .windows(path.len())
            .any(|window| window == path.as_bytes());
        assert!(!found, "the static binary names {path}");
    }
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn in_an_empty_root_the_static_binary_runs_a_command_against_masters_named_in_etc_hosts() {
    let root = EmptyRoot::new(&static_binary());
    assert_eq!(root.top_level(), ["bin", "etc", "redlock", "tmp"]);
    let shown = output(&mut root.redlock(&["--version"]));
    assert!(shown.status.success(), "{}", describe(&shown));
    common::assert_long_version_for(
        &String::from_utf8_lossy(&shown.stdout),
        &common::static_target(),
    );

    let cluster = Cluster::start(3);
    let script = "echo \"$REDLOCK_KEY is held\"; exit 3";
    let ran = output(
        root.redlock(&[
            "run", "--key", "hosts", "--ttl", "10s", "--", "sh", "-c", script,
        ])
        .env("REDLOCK_SERVERS", by_name(cluster.urls(), HOSTS_NAME)),
    );
    assert_eq!(ran.status.code(), Some(3), "{}", describe(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hosts is held\n");
    assert!(cluster.key_gone_everywhere("hosts"), "not released");
}

/// A name found through DNS; and what the page on the static binary says of a DNS server that
/// refuses the IPv6 (AAAA) query: musl waits for another answer, the name does not resolve in
/// time, and /etc/hosts is a way around it.
#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn in_an_empty_root_a_master_is_found_through_a_dns_server_on_loopback() {
    let root = EmptyRoot::new(&static_binary());
    let cluster = Cluster::start(3);
    let name = "master.dns.redlock.test";
    let dns = Dns::start(name, "127.0.0.1".parse().unwrap(), Aaaa::Empty);
    root.write("etc/resolv.conf", &dns.resolv_conf(5));
    let hosts = std::fs::read_to_string(root.path("etc/hosts")).unwrap();
    assert!(!hosts.contains(name), "{hosts}");
    let servers = by_name(cluster.urls(), name);
    let ran = runs_a_command(&root, &servers, &[]);
    assert!(ran.status.success(), "{}", describe(&ran));
    assert!(dns.asked_for(name), "asked: {:?}", dns.queries());
    assert!(cluster.key_gone_everywhere("static"), "not released");
    drop(dns);

    let refusing = Dns::start(name, "127.0.0.1".parse().unwrap(), Aaaa::Refused);
    root.write("etc/resolv.conf", &refusing.resolv_conf(5));
    let failed = runs_a_command(&root, &servers, &[]);
    assert_eq!(failed.status.code(), Some(69), "{}", describe(&failed));
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains(&format!("redis://{name}:")),
        "{}",
        describe(&failed)
    );
    root.write("etc/hosts", &format!("{hosts}127.0.0.1 {name}\n"));
    let ran = runs_a_command(&root, &servers, &[]);
    assert!(ran.status.success(), "{}", describe(&ran));
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn in_an_empty_root_tls_trusts_a_ca_file_and_the_system_store_of_each_distribution() {
    let root = EmptyRoot::new(&static_binary());
    let pki = Pki::generate();
    let servers: Vec<Server> = (0..3).map(|_| Server::start_tls(&pki, false)).collect();
    // By name (localhost, in /etc/hosts): the certificate's name is checked.
    let urls: Vec<String> = servers.iter().map(Server::tls_url).collect();
    let urls = urls.join(" ");
    let ca = std::fs::read_to_string(&pki.ca).unwrap();

    root.write("ca.pem", &ca);
    let ran = runs_a_command(&root, &urls, &["--tls-ca-cert", "/ca.pem"]);
    assert!(ran.status.success(), "--tls-ca-cert: {}", describe(&ran));
    root.remove("ca.pem");

    // No store at all: nothing to trust, and redlock says so.
    let refused = runs_a_command(&root, &urls, &[]);
    assert_eq!(refused.status.code(), Some(78), "{}", describe(&refused));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("no trusted certificates"), "{said}");

    // Where each keeps its bundle (rustls-native-certs looks there through openssl-probe).
    for (distribution, bundle) in [
        ("Debian", "etc/ssl/certs/ca-certificates.crt"),
        ("Alpine", "etc/ssl/cert.pem"),
        ("RHEL", "etc/pki/tls/certs/ca-bundle.crt"),
    ] {
        root.write(bundle, &ca);
        let ran = runs_a_command(&root, &urls, &[]);
        assert!(ran.status.success(), "{distribution}: {}", describe(&ran));
        root.remove(bundle);
    }
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn in_an_empty_root_status_names_the_holders_user_from_etc_passwd_else_its_uid() {
    let root = EmptyRoot::new(&static_binary());
    let cluster = Cluster::start(3);
    // The command is `status` itself, run while `run` holds the lock.
    let holders_user = |root: &EmptyRoot| {
        let status = ["/redlock", "status", "--key", "who", "--json"];
        let mut args = vec!["run", "--key", "who", "--ttl", "10s", "--"];
        args.extend(status);
        let ran = output(
            root.redlock(&args)
                .env("REDLOCK_SERVERS", cluster.servers_env()),
        );
        assert!(ran.status.success(), "{}", describe(&ran));
        let json: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("JSON");
        assert_eq!(json["verdict"], "held", "{json}");
        json["holder"]["user"].as_str().expect("a user").to_string()
    };
    // In the root's user namespace the caller is uid 0.
    root.write("etc/passwd", "locksmith:x:0:0:keeper of locks:/:/bin/sh\n");
    assert_eq!(holders_user(&root), "locksmith");
    root.remove("etc/passwd");
    assert_eq!(holders_user(&root), "0");
}

/// `run` in `root` in the background, with `script` as its command; returns redlock (the
/// child: unshare execs it) and its stderr, once the command wrote its pid to /tmp/ready.
fn start_in(root: &EmptyRoot, cluster: &Cluster, key: &str, script: &str) -> (i32, Background) {
    let mut child = root
        .redlock(&[
            "run", "--key", key, "--ttl", "10s", "--", "sh", "-c", script,
        ])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) starts redlock in the empty root");
    let stderr = Captured::stderr_of(&mut child);
    let ready = root.path("tmp/ready");
    let announced = eventually(Duration::from_secs(30), || {
        std::fs::read_to_string(&ready).is_ok_and(|pid| pid.ends_with('\n'))
    });
    assert!(announced, "the command never started: {}", stderr.text());
    let pid = std::fs::read_to_string(&ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_file(&ready).unwrap();
    (pid, Background { child, stderr })
}

struct Background {
    child: std::process::Child,
    stderr: Captured,
}

#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn in_an_empty_root_a_signal_reaches_the_command_and_sigkill_of_redlock_kills_it() {
    let root = EmptyRoot::new(&static_binary());
    let cluster = Cluster::start(3);
    let forever = "while :; do busybox sleep 0.05; done";

    // SIGTERM to redlock goes to the command, whose own exit status redlock passes on.
    let trapped =
        format!("trap 'echo TERM > /tmp/got; exit 7' TERM; echo $$ > /tmp/ready; {forever}");
    let (_, mut signalled) = start_in(&root, &cluster, "signalled", &trapped);
    common::send_signal(signalled.child.id(), libc::SIGTERM);
    let status = signalled.child.wait().unwrap();
    assert_eq!(status.code(), Some(7), "{}", signalled.stderr.text());
    assert_eq!(
        std::fs::read_to_string(root.path("tmp/got")).unwrap(),
        "TERM\n"
    );
    assert!(cluster.key_gone_everywhere("signalled"), "not released");

    // SIGKILL to redlock: the guard kills the command's group.
    let script = format!("echo $$ > /tmp/ready; {forever}");
    let (command, mut killed) = start_in(&root, &cluster, "killed", &script);
    assert!(common::process_alive(command));
    common::send_signal(killed.child.id(), libc::SIGKILL);
    killed.child.wait().unwrap();
    let gone = eventually(Duration::from_secs(10), || {
        common::live_group_members(command).is_empty()
    });
    assert!(
        gone,
        "the command's group outlived redlock: {}",
        killed.stderr.text()
    );
}

/// On this host, a uid without a passwd entry (as in containers run with `--user 4242`): the
/// static build reads /etc/passwd, the native one also asks NSS (which a static glibc would
/// crash in); both run the command, and the holder is the uid.
#[test]
#[ignore = "slow (a release build); scripts/test runs it"]
fn both_builds_run_as_a_uid_without_a_passwd_entry() {
    let artifacts = artifacts();
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "the test runs redlock as uid 4242 with setpriv: it needs root, as CI runs"
    );
    let lookup = Command::new("getent").args(["passwd", "4242"]).output();
    let entry = lookup.expect("getent (libc-bin) looks uid 4242 up");
    assert!(
        !entry.status.success(),
        "uid 4242 has a passwd entry here: {entry:?}"
    );

    // Where uid 4242 may read and run them: in /tmp itself, not under $TMPDIR, which
    // scripts/test makes private to the user running the tests (mktemp -d: mode 0700).
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let cluster = Cluster::start(3);
    for (build, binary) in [
        ("static", static_binary()),
        ("native", artifacts.unpacked.join("redlock")),
    ] {
        let copy = dir.path().join(build);
        std::fs::copy(&binary, &copy).unwrap();
        let key = format!("uid-{build}");
        let ran = output(
            Command::new("setpriv")
                .args(["--reuid", "4242", "--regid", "4242", "--clear-groups", "--"])
                .arg(&copy)
                .args(["run", "--key", &key, "--ttl", "10s", "--"])
                .arg(&copy)
                .args(["status", "--key", &key, "--json"])
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("REDLOCK_SERVERS", cluster.servers_env())
                .current_dir("/"),
        );
        assert_eq!(ran.status.code(), Some(0), "{build}: {}", describe(&ran));
        let json: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("JSON");
        assert_eq!(json["holder"]["user"], "4242", "{build}: {json}");
    }
}
