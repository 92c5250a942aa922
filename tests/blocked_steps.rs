//! What `--metrics-file` and the files redlock reads may name, and blocking steps that a signal
//! must still end.
//!
//! The metrics file is replaced by a rename, so it may only ever be a regular file: a device
//! node, a FIFO, a socket or a directory at its path is refused with one warning line, left as
//! it was, and nothing is created beside it; the command's status is kept. The nodes are made
//! in a temporary directory (never the real /dev/null); a device node needs root (CAP_MKNOD), as
//! CI runs. Every file redlock reads by name (the config file, the password file, the TLS CA,
//! certificate and key) is refused at once, exit 78, when it is not a regular file: a FIFO
//! there blocked redlock forever. And once redlock's signal handlers are installed, a step that
//! blocks (the metrics file's lock, a token written to a full pipe) still ends at once on
//! SIGTERM.

use crate::common;

use std::ffi::CString;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Captured, Cluster, Pki, Server, describe, send_signal};

/// Makes a character device node like the one at `like` (e.g. /dev/null) at `path`.
fn make_char_device(path: &Path, major: u32, minor: u32) {
    let name = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path; mknod has no other preconditions.
    let rc = unsafe {
        libc::mknod(
            name.as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(major, minor),
        )
    };
    assert_eq!(
        rc,
        0,
        "mknod {} c {major} {minor}: {} (making a device node needs root, CAP_MKNOD: run the \
         test suite as root, as CI does)",
        path.display(),
        std::io::Error::last_os_error()
    );
}

fn make_fifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path; mkfifo has no other preconditions.
    let rc = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo: {}", std::io::Error::last_os_error());
}

/// Waits for `child` at most `limit`; kills it (and says so) if it is still running then.
fn wait_at_most(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "redlock was still running after {limit:?} and was killed:\n{}",
                describe(&output)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// `redlock run --metrics-file PATH -- sh -c 'exit 3'`, bounded in time.
fn run_with_metrics(cluster: &Cluster, path: &Path) -> Output {
    let child = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "metrics-target",
            "--ttl",
            "5s",
            "--metrics-file",
        ])
        .arg(path)
        .args(["--", "sh", "-c", "exit 3"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_at_most(child, Duration::from_secs(20))
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs with the metrics file at `name` in `dir` (made by the caller) and checks the refusal:
/// status kept, one warning naming `kind`, the node untouched, nothing created beside it.
fn assert_refused(cluster: &Cluster, dir: &Path, name: &str, kind: &str) {
    let path = dir.join(name);
    let before = std::fs::symlink_metadata(&path).unwrap();
    let names_before = names_in(dir);
    let output = run_with_metrics(cluster, &path);
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one warning line: {stderr}");
    assert!(
        lines[0].contains(&format!("is {kind}")) && lines[0].contains("regular file"),
        "the warning names what the path is: {stderr}"
    );
    let after = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(
        (after.file_type(), after.rdev(), after.ino()),
        (before.file_type(), before.rdev(), before.ino()),
        "{name} was replaced"
    );
    assert_eq!(
        names_in(dir),
        names_before,
        "something was created beside {name}"
    );
}

#[test]
fn a_metrics_file_that_is_a_device_is_refused_and_left_as_it_was() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    // Like /dev/null and /dev/full.
    make_char_device(&dir.path().join("null"), 1, 3);
    make_char_device(&dir.path().join("full"), 1, 7);
    assert_refused(&cluster, dir.path(), "null", "a character device");
    assert_refused(&cluster, dir.path(), "full", "a character device");
    // Writing to it still reaches the device: nothing was put in its place.
    let mut null = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("null"))
        .unwrap();
    null.write_all(b"gone").unwrap();
    assert_eq!(std::fs::read(dir.path().join("null")).unwrap(), b"");
}

#[test]
fn a_metrics_file_that_is_a_fifo_is_refused_at_once() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    make_fifo(&dir.path().join("m.prom"));
    assert_refused(&cluster, dir.path(), "m.prom", "a FIFO");
}

#[test]
fn a_metrics_file_that_is_a_directory_or_a_socket_is_refused() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("m.prom")).unwrap();
    assert_refused(&cluster, dir.path(), "m.prom", "a directory");
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("s.prom")).unwrap();
    assert!(
        std::fs::metadata(dir.path().join("s.prom"))
            .unwrap()
            .file_type()
            .is_socket()
    );
    assert_refused(&cluster, dir.path(), "s.prom", "a socket");
}

#[test]
fn a_link_to_a_device_is_refused_and_a_link_to_a_file_is_kept() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    make_char_device(&dir.path().join("null"), 1, 3);
    std::os::unix::fs::symlink("null", dir.path().join("link.prom")).unwrap();
    assert_refused(&cluster, dir.path(), "link.prom", "a character device");
    assert!(
        std::fs::metadata(dir.path().join("null"))
            .unwrap()
            .file_type()
            .is_char_device()
    );

    // A link to a file not made yet: the file is made where it points, the link stays.
    std::os::unix::fs::symlink("real.prom", dir.path().join("to-real.prom")).unwrap();
    let output = run_with_metrics(&cluster, &dir.path().join("to-real.prom"));
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    assert!(output.stderr.is_empty(), "{}", describe(&output));
    let link = std::fs::symlink_metadata(dir.path().join("to-real.prom")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let text = std::fs::read_to_string(dir.path().join("real.prom")).unwrap();
    assert!(text.contains("redlock_outcomes_total"), "{text}");
}

/// A FIFO that nobody writes to, given as any file redlock reads, is refused after 5 s, and a
/// directory or a device at once, with exit 78 and one line naming it (issue 33: a FIFO as the
/// password file, the CA or the client certificate blocked forever, from every place each can
/// be named).
#[test]
fn a_fifo_nobody_writes_or_a_device_as_a_file_redlock_reads_is_refused() {
    let pki = Pki::generate();
    let server = Server::start_tls(&pki, true);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    make_fifo(&fifo);
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("redlock")).unwrap();
    make_fifo(&xdg.join("redlock").join("config.toml"));
    let null = dir.path().join("null");
    make_char_device(&null, 1, 3);
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let config = |body: &str| {
        let file = dir.path().join(format!("c{}.toml", fastrand::u32(..)));
        std::fs::write(&file, body).unwrap();
        path(&file)
    };
    let tls = |ca: &Path, cert: &Path, key: &Path| {
        vec![
            "-s".to_string(),
            server.tls_url(),
            "--tls-ca-cert".into(),
            path(ca),
            "--tls-cert".into(),
            path(cert),
            "--tls-key".into(),
            path(key),
        ]
    };
    let plain = vec!["-s".to_string(), server.url()];
    let with = |mut first: Vec<String>, more: &[&str]| {
        first.extend(more.iter().map(|s| s.to_string()));
        first
    };
    let (ca, cert, key) = (&pki.ca, &pki.client_cert, &pki.client_key);
    // What each case names, its arguments, its environment, and what the file is.
    type Case<'a> = (&'a str, Vec<String>, Vec<(&'a str, String)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "--password-file",
            with(plain.clone(), &["--password-file", &path(&fifo)]),
            vec![],
            "a FIFO",
        ),
        (
            "$REDLOCK_PASSWORD_FILE",
            plain.clone(),
            vec![("REDLOCK_PASSWORD_FILE", path(&fifo))],
            "a FIFO",
        ),
        (
            "password_file in the config file",
            with(
                plain.clone(),
                &[
                    "--config",
                    &config(&format!("password_file = {:?}\n", path(&fifo))),
                ],
            ),
            vec![],
            "a FIFO",
        ),
        ("--tls-ca-cert", tls(&fifo, cert, key), vec![], "a FIFO"),
        ("--tls-cert", tls(ca, &fifo, key), vec![], "a FIFO"),
        ("--tls-key", tls(ca, cert, &fifo), vec![], "a FIFO"),
        (
            "ca_cert in the config file",
            vec![
                "-s".to_string(),
                server.tls_url(),
                "--config".into(),
                config(&format!("[tls]\nca_cert = {:?}\n", path(&fifo))),
            ],
            vec![],
            "a FIFO",
        ),
        (
            "--config",
            with(plain.clone(), &["--config", &path(&fifo)]),
            vec![],
            "a FIFO",
        ),
        (
            "$REDLOCK_CONFIG",
            plain.clone(),
            vec![("REDLOCK_CONFIG", path(&fifo))],
            "a FIFO",
        ),
        (
            "the user's config file",
            plain.clone(),
            vec![("XDG_CONFIG_HOME", path(&xdg))],
            "a FIFO",
        ),
        (
            "a device as the password file",
            with(plain.clone(), &["--password-file", &path(&null)]),
            vec![],
            "a character device",
        ),
        (
            "a directory as the CA",
            tls(dir.path(), cert, key),
            vec![],
            "a directory",
        ),
    ];
    // All at once: a FIFO nobody writes to is waited on for 5 s (files::PIPE_PATIENCE).
    let running: Vec<_> = cases
        .into_iter()
        .map(|(case, args, env, is)| {
            let mut command = crate::common::redlock();
            command
                .args(&args)
                .args(["acquire", "--key", "files", "--ttl", "10s"])
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            (case, is, command.spawn().unwrap())
        })
        .collect();
    for (case, is, child) in running {
        let output = wait_at_most(child, Duration::from_secs(20));
        assert_eq!(
            output.status.code(),
            Some(78),
            "{case}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{case}: {stderr}");
        // A config file named outright is checked before it is read: never a pipe.
        let config_file = ["--config", "$REDLOCK_CONFIG"];
        let why = if is == "a FIFO" && !config_file.contains(&case) {
            "nothing wrote it whole within 5s"
        } else {
            "not a regular file"
        };
        assert!(
            stderr.starts_with("redlock: ")
                && stderr.contains(&format!("it is {is}"))
                && stderr.contains(why),
            "{case}: {stderr}"
        );
    }
    assert!(server.keys().is_empty(), "a lock was taken");
}

/// The reproduction: `timeout -k 3 2 redlock run ... --metrics-file FIFO -- true`
/// exited 137 (killed), because SIGTERM did not end redlock blocked on the FIFO.
#[test]
fn timeout_ends_a_run_whose_metrics_file_is_a_fifo() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("m.prom");
    make_fifo(&fifo);
    let output = std::process::Command::new("timeout")
        .args(["-k", "3", "2", crate::common::redlock_binary()])
        .args(["--server", &cluster.urls()[0]])
        .args(["run", "--key", "k", "--ttl", "5s", "--metrics-file"])
        .arg(&fifo)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
}

/// A metrics update waits (up to 5 s) for another writer's lock; SIGTERM meanwhile ends
/// redlock at once, with the command's status, and the lock was released before.
#[test]
fn sigterm_ends_a_run_waiting_for_the_metrics_lock() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.prom");
    let lock = std::fs::File::create(dir.path().join("m.prom.lock")).unwrap();
    // SAFETY: flock on a descriptor `lock` keeps open.
    let rc = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock");
    let mut child = cluster
        .redlock()
        .args([
            "-v",
            "run",
            "--key",
            "held-metrics",
            "--ttl",
            "5s",
            "--metrics-file",
        ])
        .arg(&path)
        .args(["--", "sh", "-c", "exit 3"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Captured::stderr_of(&mut child);
    // The command ran and the lock was released: redlock is now at the metrics file.
    stderr.wait_for("released \"held-metrics\"", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    send_signal(child.id(), libc::SIGTERM);
    let output = wait_at_most(child, Duration::from_secs(20));
    let took = signalled.elapsed();
    let stderr = stderr.finish();
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    // The lock wait alone lasts 5 s: an exit well before it was the signal's doing.
    assert!(took < Duration::from_secs(3), "took {took:?}: {stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert!(cluster.key_gone_everywhere("held-metrics"));
    drop(lock);
}

/// A pipe whose buffer is full and that nobody reads: a write to it blocks.
fn full_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
    let (reader, mut writer) = std::io::pipe().unwrap();
    let fd = writer.as_raw_fd();
    // SAFETY: fcntl on a descriptor `writer` keeps open.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) };
    let chunk = [b'x'; 4096];
    while writer.write(&chunk).is_ok() {}
    // SAFETY: as above; blocking again, as redlock's stdout will be.
    unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
    (reader, writer)
}

fn acquire_into(cluster: &Cluster, key: &str, ttl: &str, stdout: std::io::PipeWriter) -> Child {
    cluster
        .redlock()
        .args(["acquire", "--key", key, "--ttl", ttl])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_ends_an_acquire_blocked_on_a_full_stdout_and_releases() {
    let cluster = Cluster::start(1);
    let (_reader, writer) = full_pipe();
    let child = acquire_into(&cluster, "full-pipe", "60s", writer);
    assert!(
        common::eventually(Duration::from_secs(10), || cluster.values("full-pipe")[0]
            .is_some()),
        "acquire never took the lock"
    );
    std::thread::sleep(Duration::from_millis(200));
    send_signal(child.id(), libc::SIGTERM);
    let output = wait_at_most(child, Duration::from_secs(10));
    assert_eq!(
        output.status.code(),
        Some(128 + libc::SIGTERM),
        "{}",
        describe(&output)
    );
    assert!(
        common::eventually(Duration::from_secs(2), || cluster
            .key_gone_everywhere("full-pipe")),
        "the lock was not released"
    );
}

#[test]
fn a_token_nobody_reads_within_the_validity_releases_the_lock() {
    let cluster = Cluster::start(1);
    let (_reader, writer) = full_pipe();
    let child = acquire_into(&cluster, "unread", "2s", writer);
    let output = wait_at_most(child, Duration::from_secs(15));
    assert_eq!(output.status.code(), Some(71), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write the token") && stderr.contains("the lock was released"),
        "{stderr}"
    );
    assert!(cluster.key_gone_everywhere("unread"));
}

/// A name lookup that hangs (a resolver that never answers) is abandoned at the node timeout,
/// and redlock then exits: the client's runtime must not wait for the lookup's thread. The
/// resolver is faked in a mount namespace of the test's own (`unshare -m`, root), with
/// /etc/resolv.conf bound to a file naming a loopback address where nothing answers.
#[test]
fn a_hung_name_lookup_does_not_keep_redlock_from_exiting() {
    // Port 53 (resolv.conf names no port) on an address of loopback's /8 of its own: two
    // suites at once on one machine (a second clone, CI beside a developer) each get one.
    let (silent, address) = (0..100)
        .find_map(|_| {
            let address = format!("127.83.{}.{}", fastrand::u8(..), fastrand::u8(1..255));
            let silent = std::net::UdpSocket::bind((address.as_str(), 53)).ok()?;
            Some((silent, address))
        })
        .expect("bind port 53 of a 127.83.x.y address for a resolver that never answers (needs root, as CI runs)");
    let dir = tempfile::tempdir().unwrap();
    let resolv = dir.path().join("resolv.conf");
    std::fs::write(
        &resolv,
        format!("nameserver {address}\noptions timeout:30 attempts:2\n"),
    )
    .unwrap();
    let script = format!(
        "mount --bind '{}' /etc/resolv.conf && exec \"$0\" \"$@\"",
        resolv.display()
    );
    let child = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script, crate::common::redlock_binary()])
        .args([
            "--server",
            "redis://lock.example.com:6379",
            "status",
            "--key",
            "k",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) runs the test in a mount namespace of its own");
    // The lookup would hang for a minute; the node timeout gives up on it within seconds.
    let output = wait_at_most(child, Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("timed out"),
        "{}",
        describe(&output)
    );
    drop(silent);
}

/// A pipe whose writer closes it is a file like any other: `--password-file <(pass show ...)`
/// hands a secret over without a command line or an environment that shows it.
#[test]
fn a_password_from_a_process_substitution_is_read() {
    let server = Server::start_inner(&["--requirepass", "s3cret"], None);
    let script = format!(
        "exec \"$0\" -s {} --password-file <(sleep 0.2; printf %s s3cret) acquire --key piped --ttl 10s",
        server.url()
    );
    let mut command = crate::common::redlock_env(std::process::Command::new("bash"));
    command
        .args(["-c", &script, crate::common::redlock_binary()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = wait_at_most(command.spawn().unwrap(), Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
}
