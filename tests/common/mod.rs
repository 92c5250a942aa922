//! The integration tests' harness, one file per job:
//!
//! - `servers`: real `redis-server` masters ([`Server`], [`Cluster`]) on loopback ports below
//!   the ephemeral range ([`TEST_PORTS`]), killed, paused and restarted on demand;
//! - `redis_server`: which `redis-server` the masters run, and arguments for older versions;
//! - `redis_cluster`: real Redis Clusters ([`RedisCluster`]), each of which redlock counts as
//!   one master (a [`Cluster`] here is a set of independent masters);
//! - `proxy`: a fault proxy that can sit in front of any master;
//! - `dispositions`: the default action for every signal redlock handles, however the suite
//!   was started (a background job starts with SIGINT ignored);
//! - `dns`: a DNS server for one name on loopback ([`Dns`]), for a resolver in an empty root;
//! - `inspect`: the tests' own connection to a master ([`Inspector`]), whose reads survive EINTR;
//! - `pki`: test certificates for the TLS tests ([`Pki`]);
//! - `processes`: processes started and watched by the tests ([`Running`], [`Captured`],
//!   signals, process groups, [`eventually`]);
//! - `measure`: a process's peak memory ([`run_measured`]);
//! - `holder`: what a holder record names (host, user, command);
//! - `elf`: how a binary is linked (static or not), from its ELF headers;
//! - `version`: what `redlock --version` must say for this checkout;
//! - `manual`: README.md and the pages of docs/, as the tests that check them read them;
//! - `ci`: CI runners (GitHub Actions, GitLab Runner, Jenkins) starting and cancelling a job's
//!   shell as their sources say they do.
//!
//! Test files use the re-exports below (`use common::{Cluster, Running, ...}`), so a file's
//! place in this directory is not part of any test.

#![allow(dead_code)] // each test binary uses a different part of this module
pub mod ci;
pub mod manual;
pub mod procfs;
pub mod release;

mod dispositions;
mod dns;
pub mod elf;
mod holder;
mod inspect;
mod measure;
mod pki;
mod processes;
pub mod proxy;
mod redis_cluster;
mod redis_server;
mod servers;
mod version;

use std::path::Path;
use std::process::Command;

// Each test binary uses a different part of these, as of the items themselves (dead_code above).
#[allow(unused_imports)]
pub use dns::{Aaaa, Dns};
#[allow(unused_imports)]
pub use holder::{abbreviated, holder_age, hostname, this_user};
#[allow(unused_imports)]
pub use inspect::Inspector;
#[allow(unused_imports)]
pub use measure::{Measured, run_measured};
#[allow(unused_imports)]
pub use pki::Pki;
#[allow(unused_imports)]
pub use processes::{
    Captured, Running, WAIT_FOR_GATE, closing, describe, eventually, live_group_members, now_ms,
    process_alive, send_signal, wait_for_file,
};
#[allow(unused_imports)]
pub use redis_cluster::{Layout, RedisCluster};
#[allow(unused_imports)]
pub use redis_server::sharded_pub_sub;
#[allow(unused_imports)]
pub use servers::{Cluster, Server, TEST_PORTS, bind_test_port, free_port, listens_on};
#[allow(unused_imports)]
pub use version::{assert_long_version, assert_long_version_for, host_target, static_target};

/// The redlock binary under test: the one this build made, or the one `REDLOCK_TEST_BINARY`
/// names (an artifact to test as it ships, such as the package's or a static build), read
/// when the tests run, not when they are built.
pub fn redlock_binary() -> &'static str {
    static BINARY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| match std::env::var("REDLOCK_TEST_BINARY") {
        Ok(path) if !path.is_empty() => {
            // Tests run it by name from a shell (its directory on PATH) and read its name in
            // its help, as a user's shell would: an artifact renamed would fail them for that.
            let named = Path::new(&path).file_name() == Some("redlock".as_ref());
            assert!(
                named && Path::new(&path).is_file(),
                "REDLOCK_TEST_BINARY={path}: name a file called redlock (the binary to test, as \
                 installed), or unset it to test this build's"
            );
            path
        }
        _ => env!("CARGO_BIN_EXE_redlock").to_string(),
    })
}

/// The redlock binary under test ([`redlock_binary`]), with a clean environment for redlock's
/// own variables, and no user config file (a developer's own ~/.config/redlock must not leak
/// into the tests).
pub fn redlock() -> Command {
    redlock_at(Path::new(redlock_binary()))
}

/// Like [`redlock`], for another build of it (the one a package installs).
pub fn redlock_at(program: &Path) -> Command {
    redlock_env(Command::new(program))
}

/// `cmd` (redlock, or a shell that runs it) with redlock's environment cleaned as for
/// [`redlock`].
pub fn redlock_env(mut cmd: Command) -> Command {
    for var in [
        "REDLOCK_SERVERS",
        "REDLOCK_KEY",
        "REDLOCK_TOKEN",
        "REDLOCK_VALIDITY_MS",
        "REDLOCK_CONFIG",
        "REDLOCK_FENCE",
        "REDLOCK_PASSWORD",
        "REDLOCK_PASSWORD_FILE",
        "REDLOCK_NOTE",
        "REDLOCK_ORDER",
        // What makes redlock note a CI job's URL in the holder record (src/config/note.rs):
        // tests that run in a CI job would otherwise see it in every holder's description.
        "GITHUB_ACTIONS",
        "GITLAB_CI",
        "JENKINS_URL",
        "BUILDKITE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/redlock-tests");
    cmd
}
