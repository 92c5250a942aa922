//! Which `redis-server` the tests' masters run ([`redis_server_binary`]: the one
//! `REDLOCK_TEST_REDIS_SERVER` names, else the one on PATH), its version, and the arguments
//! written for Redis 7.0 rewritten for an older one (docs/redis-versions.md).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

use super::servers::TEST_PORTS;

/// The `redis-server` the masters run: the one named by `REDLOCK_TEST_REDIS_SERVER` (to test
/// against another Redis version or Valkey: docs/contributing.md, "Other Redis versions, and
/// Valkey"), else the first on PATH.
pub(super) fn redis_server_binary() -> PathBuf {
    if let Some(chosen) = std::env::var_os("REDLOCK_TEST_REDIS_SERVER") {
        let chosen = PathBuf::from(chosen);
        assert!(
            chosen.is_file(),
            "REDLOCK_TEST_REDIS_SERVER names {}, which is not a file: name a redis-server binary, \
             or unset it to use the one on PATH",
            chosen.display()
        );
        return chosen;
    }
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

/// The version of [`redis_server_binary`], as (major, minor), asked once.
fn redis_server_version() -> (u32, u32) {
    static VERSION: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let binary = redis_server_binary();
        let output = Command::new(&binary)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("{} --version: {e}", binary.display()));
        // "Redis server v=7.0.15 sha=..."
        let text = String::from_utf8_lossy(&output.stdout);
        let version = text
            .split_whitespace()
            .find_map(|word| word.strip_prefix("v="));
        let mut numbers = version
            .unwrap_or_default()
            .split('.')
            .map(str::parse::<u32>);
        match (numbers.next(), numbers.next()) {
            (Some(Ok(major)), Some(Ok(minor))) => (major, minor),
            _ => panic!("{} --version said {text:?}: no v=X.Y", binary.display()),
        }
    })
}

/// Whether the masters the tests start have sharded pub/sub (SPUBLISH, SSUBSCRIBE: Redis 7.0
/// and later); before, a cluster's waiters are woken by their heartbeat, not by a notice.
pub fn sharded_pub_sub() -> bool {
    redis_server_version() >= (7, 0)
}

/// Rewrites arguments written for Redis 7.0 for an older server, where they mean the same
/// thing by default: DEBUG needs no `enable-debug-command` (it came with 7.0, which turned
/// DEBUG off by default), and the cluster bus has no `cluster-port` but is always the client
/// port plus 10000. Returns whether it is such a bus, whose port must then be free too
/// ([`free_port_with_bus`]).
pub(super) fn before_7_0(args: &mut Vec<String>) -> bool {
    if redis_server_version() >= (7, 0) {
        return false;
    }
    let mut bus_at_port_plus_10000 = false;
    let mut kept = Vec::with_capacity(args.len());
    let mut words = std::mem::take(args).into_iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--enable-debug-command" => {
                words.next();
            }
            "--cluster-port" => {
                words.next();
                bus_at_port_plus_10000 = true;
            }
            _ => kept.push(word),
        }
    }
    *args = kept;
    bus_at_port_plus_10000
}

/// A free port in the lower part of [`TEST_PORTS`] whose port + 10000 is free too (a cluster
/// node's bus before Redis 7.0), both below the ephemeral range.
pub(super) fn free_port_with_bus() -> u16 {
    for _ in 0..1000 {
        let port = fastrand::u16(TEST_PORTS.start..TEST_PORTS.end - 10_000);
        let free = |port: u16| TcpListener::bind(("127.0.0.1", port)).is_ok();
        if free(port) && free(port + 10_000) {
            return port;
        }
    }
    panic!("no free pair of loopback ports 10000 apart in {TEST_PORTS:?} after 1000 tries");
}
