//! Real Redis masters: [`Server`] (one `redis-server` process) and [`Cluster`] (N of them).
//!
//! [`Cluster::start`] launches N `redis-server` processes on free loopback ports (below the
//! ephemeral range, see [`TEST_PORTS`]), each in its own temporary directory, and waits until
//! each answers PING and is the process listening on its port. Any of them can be killed,
//! paused (SIGSTOP), resumed and restarted on the same port and directory. Dropping the cluster
//! kills every server; a parent-death signal also takes them down if the test process dies.
//!
//! There is no skipping: without `redis-server` on PATH the test fails and says how to install
//! it.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::Pki;
use super::inspect::Inspector;
use super::redis_server::{before_7_0, free_port_with_bus, redis_server_binary};
use super::redlock;

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

    /// A server with extra arguments, and TLS with `pki` (client certificates required or not).
    pub fn start_inner(extra_args: &[&str], tls: Option<(&Pki, bool)>) -> Server {
        let mut last_error = String::new();
        for _ in 0..10 {
            let mut args: Vec<String> = extra_args.iter().map(|s| s.to_string()).collect();
            let port = match before_7_0(&mut args) {
                true => free_port_with_bus(),
                false => free_port(),
            };
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
            .stdin(Stdio::null());
        // What it says before its log is open (a refused argument, a build without TLS) goes
        // to its standard output and error: kept, for the reason it could not start.
        let early = std::fs::File::create(self.dir.path().join("redis.out"))
            .map_err(|e| format!("create redis.out: {e}"))?;
        cmd.stdout(early.try_clone().map_err(|e| format!("redis.out: {e}"))?)
            .stderr(early);
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
                let mut early =
                    std::fs::read_to_string(self.dir.path().join("redis.out")).unwrap_or_default();
                // Redis refuses the option; Valkey says so in its log.
                if early.contains("'tls-port") || log.contains("Failed finding TLS support") {
                    early.push_str(
                        "\n(this redis-server was built without TLS: build Redis with \
                         BUILD_TLS=yes, or test with one that has it)",
                    );
                }
                return Err(format!(
                    "{} exited with {status}: {}{log}",
                    redis_server_binary().display(),
                    early.trim()
                ));
            }
            if ping(self.port) {
                if !listens_on(child.id(), self.port) {
                    // Whoever answered, it is not our server: it lost the port to another
                    // test's. It exits on its own (it could not bind); make sure.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("port {} is taken by another server", self.port));
                }
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

    /// Stopped with [`Server::pause`] and not resumed.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    /// A fresh connection for inspecting the server from the test, whose reads survive EINTR
    /// (see `inspect.rs`).
    pub fn connection(&self) -> Inspector {
        Inspector::connect(self.port, Duration::from_secs(5)).unwrap_or_else(|error| {
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
        })
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

    /// [`Server::keys`] but the keys' histories (`redlock history`), which outlive a lock by
    /// design: each of those must have a TTL, so that "nothing left behind" still means no
    /// lock, no queue, and no key without a TTL.
    pub fn lock_keys(&self) -> Vec<String> {
        self.keys()
            .into_iter()
            .filter(|key| {
                let history = key.starts_with("__redlock:") && key.contains("}:history:");
                if history {
                    let ttl = self.pttl(key);
                    assert!(ttl > 0, "history {key} has no TTL ({ttl})");
                }
                !history
            })
            .collect()
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

    /// `redlock acquire --key KEY ARGS` on this cluster, which must succeed: the token.
    pub fn acquire(&self, key: &str, args: &[&str]) -> String {
        let output = self
            .redlock()
            .args(["acquire", "--key", key])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", super::describe(&output));
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// `redlock release --key KEY --token TOKEN` on this cluster, which must succeed.
    pub fn release(&self, key: &str, token: &str) {
        let output = self
            .redlock()
            .args(["release", "--key", key, "--token", token])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", super::describe(&output));
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

    /// Every key that has no TTL, as `master i: key`, on every master that is running and not
    /// paused. Everything redlock writes expires (the fencing counter excepted), so after a
    /// test without `--fence` this must be empty whatever faults it injected.
    pub fn keys_without_ttl(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (i, server) in self.servers.iter().enumerate() {
            if !server.is_running() || server.paused {
                continue;
            }
            for key in server.keys() {
                if server.pttl(&key) == -1 {
                    found.push(format!("master {i}: {key}"));
                }
            }
        }
        found
    }

    /// True when no running master has `key`, allowing a few seconds for a release that is
    /// still on its way: redlock exits once a release is on every master's wire, and a slow
    /// master runs it a moment later.
    pub fn key_gone_everywhere(&self, key: &str) -> bool {
        super::eventually(std::time::Duration::from_secs(5), || {
            self.values(key).iter().all(Option::is_none)
        })
    }
}

/// Loopback ports for test servers come from this range: below Linux's ephemeral range
/// (32768-60999 by default), where every outgoing connection of every process on the machine
/// takes its local port, so a test server's port is never taken from under it by some
/// client's connection; and above the ports that system services tend to use.
pub const TEST_PORTS: std::ops::Range<u16> = 10000..32000;

/// A random port in [`TEST_PORTS`] that nobody listens on right now. The server may still lose
/// a race for it with another test (`start` retries, and checks that the server answering on
/// the port is the one it started).
pub fn free_port() -> u16 {
    for _ in 0..1000 {
        let port = fastrand::u16(TEST_PORTS);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {TEST_PORTS:?} after 1000 tries");
}

/// Binds a listener on a random free port in [`TEST_PORTS`] (for servers the tests run
/// themselves, such as the fault proxy: holding the listener, they cannot lose the port).
pub fn bind_test_port() -> TcpListener {
    let mut last = None;
    for _ in 0..1000 {
        match TcpListener::bind(("127.0.0.1", fastrand::u16(TEST_PORTS))) {
            Ok(listener) => return listener,
            Err(error) => last = Some(error),
        }
    }
    panic!("no free loopback port in {TEST_PORTS:?} after 1000 tries: {last:?}");
}

/// True when process `pid` holds a socket listening on loopback TCP `port`: the server that
/// answers there is this process, not one that another test started on the same port while
/// ours failed to bind it.
pub fn listens_on(pid: u32, port: u16) -> bool {
    // /proc/net/tcp: "sl local_address rem_address st ... inode", addresses in hex; state 0A
    // is LISTEN. Then the socket's inode must be among the process's open files.
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    // The address is the u32 in host byte order, printed in hex.
    let loopback = u32::from_ne_bytes([127, 0, 0, 1]);
    let wanted = format!("{loopback:08X}:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(1) == Some(&wanted.as_str()) && fields.get(3) == Some(&"0A"))
                .then(|| fields.get(9).map(|inode| format!("socket:[{inode}]")))
                .flatten()
        })
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| {
            inodes
                .iter()
                .any(|inode| target.as_os_str() == inode.as_str())
        })
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
