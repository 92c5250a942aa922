//! Real Redis masters for integration tests.
//!
//! [`Cluster::start`] launches N `redis-server` processes on free loopback ports, each in its
//! own temporary directory, and waits until each answers PING. Any of them can be killed,
//! paused (SIGSTOP), resumed and restarted on the same port and directory. Dropping the cluster
//! kills every server; a parent-death signal also takes them down if the test process dies.
//!
//! There is no skipping: without `redis-server` on PATH the test fails and says how to install
//! it.

#![allow(dead_code)] // each test binary uses a different part of this module
pub mod procfs;

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The redlock binary under test, with a clean environment for redlock's own variables, and
/// no user config file (a developer's own ~/.config/redlock must not leak into the tests).
pub fn redlock() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_redlock"));
    for var in [
        "REDLOCK_SERVERS",
        "REDLOCK_KEY",
        "REDLOCK_TOKEN",
        "REDLOCK_VALIDITY_MS",
        "REDLOCK_CONFIG",
        "REDLOCK_FENCE",
        "REDLOCK_PASSWORD",
        "REDLOCK_PASSWORD_FILE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/redlock-tests");
    cmd
}

fn redis_server_binary() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("redis-server"))
            .find(|candidate| candidate.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "redis-server was not found on PATH. The integration tests start real Redis \
             masters. Install it with `sudo apt-get install -y redis-server` (Debian/Ubuntu), \
             `brew install redis` (macOS), or run `scripts/test`, which installs it."
        )
    })
}

/// One redis-server process.
pub struct Server {
    pub port: u16,
    /// The TLS port, for servers started with [`Server::start_tls`].
    pub tls_port: Option<u16>,
    dir: TempDir,
    extra_args: Vec<String>,
    process: Option<Child>,
    paused: bool,
}

impl Server {
    fn start(extra_args: &[&str]) -> Server {
        Server::start_inner(extra_args, None)
    }

    /// A server that also listens for TLS, with `pki`'s server certificate; with
    /// `require_client_cert`, clients must present a certificate signed by the CA. The plain
    /// port stays open for the test's own inspection.
    pub fn start_tls(pki: &Pki, require_client_cert: bool) -> Server {
        Server::start_inner(&[], Some((pki, require_client_cert)))
    }

    fn start_inner(extra_args: &[&str], tls: Option<(&Pki, bool)>) -> Server {
        let mut last_error = String::new();
        for _ in 0..10 {
            let port = free_port();
            let mut args: Vec<String> = extra_args.iter().map(|s| s.to_string()).collect();
            let tls_port = tls.map(|(pki, require)| {
                let tls_port = free_port();
                let path = |p: &Path| p.to_string_lossy().into_owned();
                args.extend([
                    "--tls-port".into(),
                    tls_port.to_string(),
                    "--tls-cert-file".into(),
                    path(&pki.server_cert),
                    "--tls-key-file".into(),
                    path(&pki.server_key),
                    "--tls-ca-cert-file".into(),
                    path(&pki.ca),
                    "--tls-auth-clients".into(),
                    if require { "yes" } else { "no" }.into(),
                ]);
                tls_port
            });
            let mut server = Server {
                port,
                tls_port,
                dir: tempfile::Builder::new()
                    .prefix("redlock-test-")
                    .tempdir()
                    .expect("create temp dir"),
                extra_args: args,
                process: None,
                paused: false,
            };
            match server.launch() {
                Ok(()) => return server,
                // Another test took the port between our probe and the server's bind.
                Err(error) => last_error = error,
            }
        }
        panic!("could not start redis-server: {last_error}");
    }

    fn launch(&mut self) -> Result<(), String> {
        let log = self.dir.path().join("redis.log");
        let mut cmd = Command::new(redis_server_binary());
        cmd.args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--dir", &self.dir.path().to_string_lossy()])
            .args(["--logfile", &log.to_string_lossy()])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--protected-mode", "no"])
            .args(["--daemonize", "no"])
            .args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl takes plain integers and is async-signal-safe; it makes the server die
        // with the test thread that started it, so no server outlives a crashed test.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("spawn redis-server: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!("redis-server exited with {status}: {log}"));
            }
            if ping(self.port) {
                self.process = Some(child);
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("redis-server on port {} never answered", self.port));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The TLS URL, by host name (the certificate names `localhost` and `127.0.0.1`).
    pub fn tls_url(&self) -> String {
        format!(
            "rediss://localhost:{}",
            self.tls_port.expect("not a TLS server")
        )
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn pid(&self) -> libc::pid_t {
        self.process.as_ref().expect("server is not running").id() as libc::pid_t
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill takes plain integers; the pid is our own unreaped child.
        let rc = unsafe { libc::kill(self.pid(), signal) };
        assert_eq!(rc, 0, "kill({signal}) failed");
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.take() {
            if self.paused {
                // SAFETY: as in `signal`.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGCONT) };
                self.paused = false;
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn pause(&mut self) {
        self.signal(libc::SIGSTOP);
        self.paused = true;
    }

    pub fn resume(&mut self) {
        self.signal(libc::SIGCONT);
        self.paused = false;
    }

    /// Kills the server (if running) and starts it again on the same port and directory.
    pub fn restart(&mut self) {
        self.kill();
        let mut last = String::new();
        for _ in 0..50 {
            match self.launch() {
                Ok(()) => return,
                // The old socket may linger for a moment.
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "could not restart redis-server on port {}: {last}",
            self.port
        );
    }

    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    /// A fresh connection for inspecting the server from the test.
    pub fn connection(&self) -> redis::Connection {
        let client = redis::Client::open(self.url()).expect("client");
        let connection = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|error| {
                let log =
                    std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                panic!(
                    "cannot connect to the test redis-server on port {} ({error}); running: {}, \
                     paused: {}; last log lines: {tail:?}",
                    self.port,
                    self.process.is_some(),
                    self.paused
                )
            });
        connection
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("read timeout");
        connection
    }

    pub fn get(&self, key: &str) -> Option<String> {
        redis::cmd("GET")
            .arg(key)
            .query(&mut self.connection())
            .expect("GET")
    }

    /// PTTL: -2 missing, -1 no expiry, else milliseconds left.
    pub fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query(&mut self.connection())
            .expect("PTTL")
    }

    pub fn set(&self, key: &str, value: &str) {
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query(&mut self.connection())
            .expect("SET");
    }

    pub fn del(&self, key: &str) {
        let _: i64 = redis::cmd("DEL")
            .arg(key)
            .query(&mut self.connection())
            .expect("DEL");
    }

    /// How many times the server ran `command` (from INFO commandstats), including calls made
    /// from Lua scripts.
    pub fn command_calls(&self, command: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connection())
            .expect("INFO");
        let prefix = format!("cmdstat_{}:calls=", command.to_lowercase());
        info.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |calls| calls.parse().expect("calls"))
    }

    pub fn keys(&self) -> Vec<String> {
        redis::cmd("KEYS")
            .arg("*")
            .query(&mut self.connection())
            .expect("KEYS")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// N masters.
pub struct Cluster {
    pub servers: Vec<Server>,
}

impl Cluster {
    pub fn start(n: usize) -> Cluster {
        Cluster::start_with(n, &[])
    }

    /// Starts `n` masters with extra `redis-server` arguments (e.g. `--appendonly yes`).
    pub fn start_with(n: usize, extra_args: &[&str]) -> Cluster {
        // Started from the test's own thread: the servers' parent-death signal fires when the
        // thread that spawned them exits, so a helper thread would take them down with it.
        let servers = (0..n).map(|_| Server::start(extra_args)).collect();
        Cluster { servers }
    }

    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(Server::url).collect()
    }

    /// The value for REDLOCK_SERVERS.
    pub fn servers_env(&self) -> String {
        self.urls().join(",")
    }

    /// `redlock` with REDLOCK_SERVERS pointing at this cluster.
    pub fn redlock(&self) -> Command {
        let mut cmd = redlock();
        cmd.env("REDLOCK_SERVERS", self.servers_env());
        cmd
    }

    pub fn server(&mut self, i: usize) -> &mut Server {
        &mut self.servers[i]
    }

    /// The value of `key` on every running master (None where missing or not running).
    pub fn values(&self, key: &str) -> Vec<Option<String>> {
        self.servers
            .iter()
            .map(|s| {
                if s.is_running() && !s.paused {
                    s.get(key)
                } else {
                    None
                }
            })
            .collect()
    }

    /// How many masters hold `key` with value `token`.
    pub fn holding(&self, key: &str, token: &str) -> usize {
        self.values(key)
            .iter()
            .filter(|v| v.as_deref() == Some(token))
            .count()
    }

    /// True when no running master has `key`.
    pub fn key_gone_everywhere(&self, key: &str) -> bool {
        self.values(key).iter().all(Option::is_none)
    }
}

/// A test PKI: a CA, a server certificate for localhost / 127.0.0.1, and a client
/// certificate, all signed by the CA, as PEM files in a temporary directory.
pub struct Pki {
    _dir: TempDir,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl Pki {
    pub fn generate() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, content: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, content).expect("write PEM");
            path
        };
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "redlock test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let ca = write("ca.pem", ca_cert.pem());
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf = |names: Vec<String>, cn: &str| {
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(DnType::CommonName, cn);
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &issuer).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server_pem, server_key_pem) = leaf(
            vec!["localhost".to_string(), "127.0.0.1".to_string()],
            "localhost",
        );
        let (client_pem, client_key_pem) = leaf(vec!["redlock-client".to_string()], "client");
        Pki {
            ca,
            server_cert: write("server.pem", server_pem),
            server_key: write("server.key", server_key_pem),
            client_cert: write("client.pem", client_pem),
            client_key: write("client.key", client_key_pem),
            _dir: dir,
        }
    }
}

/// A port nobody listens on right now (the server may still lose a race for it; `start`
/// retries).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a free port")
}

fn ping(port: u16) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else {
        return false;
    };
    let Ok(mut connection) = client.get_connection_with_timeout(Duration::from_millis(200)) else {
        return false;
    };
    let _ = connection.set_read_timeout(Some(Duration::from_millis(500)));
    // Any reply means the server is up, an error reply included (NOAUTH when the default user
    // is disabled), except LOADING: a restarted server still reading its append-only file.
    match redis::cmd("PING").query::<String>(&mut connection) {
        Ok(_) => true,
        Err(error) => error.code().is_some_and(|code| code != "LOADING"),
    }
}

/// Waits until `condition` holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Sends `signal` to `pid`.
pub fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill takes plain integers.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal})");
}

/// True while a process with this pid is alive: it exists and is not a zombie waiting to be
/// reaped (orphans are reparented to an init that may reap them late, or never in a sandbox).
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself contain spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The pids of live processes in process group `group`.
pub fn live_group_members(group: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    let fields: Vec<&str> = rest.split_whitespace().collect();
                    // fields[0] state, [1] ppid, [2] pgrp
                    Some(fields.first()? != &"Z" && fields.get(2)?.parse::<i32>().ok()? == group)
                })
                .unwrap_or(false)
        })
        .collect()
}

/// Reads a file the child writes, waiting until it exists and is non-empty.
pub fn wait_for_file(path: &Path, timeout: Duration) -> String {
    let mut content = String::new();
    let ok = eventually(timeout, || {
        content = std::fs::read_to_string(path).unwrap_or_default();
        !content.trim().is_empty()
    });
    assert!(ok, "{} never appeared", path.display());
    content.trim().to_string()
}

/// Milliseconds since the Unix epoch, comparable with `date +%s%3N` in a child.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A `redlock run` started in the background, whose command tells the test when it runs and
/// then waits for the test to let it finish.
///
/// The command is `sh -c SCRIPT sh DIR`, where DIR is [`Running::dir`] (`$d` in the script):
///
/// ```text
/// d=$1
/// echo "$REDLOCK_TOKEN" > "$d/token"
/// SETUP
/// echo $$ > "$d/ready"        # the shell's pid, which leads the command's process group
/// BODY                        # by default: wait until "$d/gate" exists, then exit 0
/// ```
///
/// redlock's stdout and stderr are read as they come, so a test can wait for a line
/// ([`Running::wait_for_stderr`]) while the command runs. Dropping a `Running` that is still
/// running SIGKILLs redlock (whose guard then takes the command down).
pub struct Running {
    pub child: Child,
    pub dir: TempDir,
    stdout: Captured,
    stderr: Captured,
}

/// The shell loop that waits for the gate file ([`Running::open_gate`]).
pub const WAIT_FOR_GATE: &str = "while [ ! -e \"$d/gate\" ]; do sleep 0.02; done";

impl Running {
    /// Spawns `cmd` (a `redlock ... run [options]`, without `--`) with the default command:
    /// write the token, announce ready, wait for the gate, exit 0.
    pub fn start(cmd: &mut Command) -> Running {
        Running::start_script(cmd, "", WAIT_FOR_GATE)
    }

    /// Like [`Running::start`], with `setup` run before the ready file is written and `body`
    /// after it (instead of waiting for the gate; include [`WAIT_FOR_GATE`] to keep it).
    pub fn start_script(cmd: &mut Command, setup: &str, body: &str) -> Running {
        let dir = tempfile::tempdir().expect("temp dir");
        let script = format!(
            "d=$1\necho \"$REDLOCK_TOKEN\" > \"$d/token\"\n{setup}\necho $$ > \"$d/ready\"\n{body}\n"
        );
        let mut child = cmd
            .args(["--", "sh", "-c", &script, "sh"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn redlock");
        let stdout = Captured::start(child.stdout.take().expect("stdout"));
        let stderr = Captured::start(child.stderr.take().expect("stderr"));
        Running {
            child,
            dir,
            stdout,
            stderr,
        }
    }

    /// A file in the command's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Waits until the command announced itself, and returns its pid (the leader of its
    /// process group). Fails at once, with redlock's output, if redlock exits first.
    pub fn wait_ready(&mut self) -> i32 {
        let ready = self.path("ready");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let content = std::fs::read_to_string(&ready).unwrap_or_default();
            // Written by one `echo`: the pid and a newline.
            if content.ends_with('\n') {
                return content.trim().parse().expect("pid in the ready file");
            }
            if self.child.try_wait().expect("try_wait").is_some() {
                let output = self.wait_output();
                panic!(
                    "redlock ended before the command was ready:\n{}",
                    describe(&output)
                );
            }
            assert!(
                Instant::now() < deadline,
                "the command never became ready; stderr so far:\n{}",
                self.stderr_so_far()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `$REDLOCK_TOKEN` as the command saw it (call after [`Running::wait_ready`]).
    pub fn token(&self) -> String {
        let token = std::fs::read_to_string(self.path("token")).expect("token file");
        token.trim().to_string()
    }

    /// Lets the default command (or a body that waits with [`WAIT_FOR_GATE`]) finish.
    pub fn open_gate(&self) {
        std::fs::write(self.path("gate"), "open\n").expect("write the gate file");
    }

    /// True while redlock has not exited.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// What redlock wrote on stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.stderr.text()
    }

    /// Waits until redlock's stderr contains `needle`; returns whether it did in time.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        eventually(timeout, || self.stderr.text().contains(needle))
    }

    /// Waits for redlock to exit, and returns its status and everything it wrote.
    pub fn wait_output(&mut self) -> Output {
        let status = self.child.wait().expect("wait for redlock");
        // The pipes close when the last process holding them (the command's included) exits;
        // whatever is left running after a few seconds is not waited for.
        eventually(Duration::from_secs(5), || {
            self.stdout.finished() && self.stderr.finished()
        });
        Output {
            status,
            stdout: self.stdout.bytes(),
            stderr: self.stderr.bytes(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One of a child's output pipes, read to the end by a thread of its own, so that a test can
/// wait for a line while the child runs.
pub struct Captured {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Captured {
    pub fn start(mut pipe: impl std::io::Read + Send + 'static) -> Captured {
        let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&bytes);
        let reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
        Captured { bytes, reader }
    }

    /// The child's stderr, which must be piped.
    pub fn stderr_of(child: &mut Child) -> Captured {
        Captured::start(child.stderr.take().expect("stderr must be piped"))
    }

    /// The child's stdout, which must be piped.
    pub fn stdout_of(child: &mut Child) -> Captured {
        Captured::start(child.stdout.take().expect("stdout must be piped"))
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }

    pub fn finished(&self) -> bool {
        self.reader.is_finished()
    }

    /// Waits until `needle` was written; panics with what was written otherwise.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let found = eventually(timeout, || self.text().contains(needle));
        let text = self.text();
        assert!(found, "{needle:?} never appeared: {text}");
        text
    }

    /// Everything written, once every writer closed the pipe.
    pub fn finish(self) -> String {
        self.reader.join().unwrap();
        String::from_utf8_lossy(&self.bytes.lock().unwrap()).into_owned()
    }
}

/// This machine's host name, as holder records have it.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, which outlives the call.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, 0, "gethostname");
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The user running the tests (and so the holders they start).
pub fn this_user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(name) = std::env::var(var)
            && !name.is_empty()
        {
            return name;
        }
    }
    let output = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// `command` as messages show it: cut to 60 characters, with an ellipsis when cut.
pub fn abbreviated(command: &str) -> String {
    if command.chars().count() <= 60 {
        return command.to_string();
    }
    let mut cut: String = command.chars().take(59).collect();
    cut.push('…');
    cut
}

/// Checks that `text` names the holder as `HOST (pid PID, user USER, "COMMAND") for AGE`, with
/// this machine's host name and user, and returns AGE.
pub fn holder_age(text: &str, pid: impl std::fmt::Display, command: &str) -> Duration {
    let expected = format!(
        "{} (pid {pid}, user {}, \"{}\") for ",
        hostname(),
        this_user(),
        abbreviated(command)
    );
    let start = text
        .find(&expected)
        .unwrap_or_else(|| panic!("expected `{expected}` in: {text}"))
        + expected.len();
    let rest = &text[start..];
    let end = rest.find([',', ';', '\n', '\r']).unwrap_or(rest.len());
    humantime::parse_duration(&rest[..end])
        .unwrap_or_else(|e| panic!("the holder's age is not a duration ({e}): {text}"))
}
