//! From flags and environment to validated settings. Clap types stop here: everything past this
//! module works with checked values, and every rejection is one line naming the option and
//! what to do, with exit code 64 (usage) or 78 (configuration).

use std::collections::HashMap;
use std::ffi::OsString;
use std::time::Duration;

use crate::cli::{AcquireArgs, Format, LockArgs, RunArgs, TokenArgs};
use crate::exit::{self, Failure};
use crate::lock::{Master, Timing};
use crate::supervise;

/// The environment variable with the server list.
pub const SERVERS_ENV: &str = "REDLOCK_SERVERS";
/// Where redlock looks when nothing names a server.
pub const DEFAULT_SERVER: &str = "redis://127.0.0.1:6379";

/// The masters to use: `--server` flags, else `$REDLOCK_SERVERS`, else the local default.
/// Rejects malformed URLs and the same master listed twice (it would fake a quorum).
pub fn masters(flags: &[String]) -> Result<Vec<Master>, Failure> {
    let from_env;
    let (urls, source): (Vec<&str>, &str) = if !flags.is_empty() {
        (flags.iter().map(String::as_str).collect(), "--server")
    } else if let Ok(value) = std::env::var(SERVERS_ENV) {
        from_env = value;
        let urls: Vec<&str> = from_env
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        if urls.is_empty() {
            return Err(Failure::config(format!(
                "{SERVERS_ENV} is set but empty: list one or more redis:// URLs, or unset it"
            )));
        }
        (urls, SERVERS_ENV)
    } else {
        (vec![DEFAULT_SERVER], "the default")
    };
    let mut masters = Vec::with_capacity(urls.len());
    let mut seen = HashMap::new();
    for url in urls {
        let master =
            Master::parse(url).map_err(|e| Failure::config(format!("{e} (from {source})")))?;
        if let Some(first) = seen.insert(master.identity(), master.to_string()) {
            return Err(Failure::config(format!(
                "{first} and {master} are the same master (from {source}): a master listed \
                 twice would count twice toward the quorum; list each master once"
            )));
        }
        masters.push(master);
    }
    Ok(masters)
}

/// How a lock is named and taken.
#[derive(Clone, Debug, PartialEq)]
pub struct LockSettings {
    pub key: String,
    pub timing: Timing,
    /// How long to keep retrying; zero means one attempt.
    pub wait: Duration,
    /// The exit code for "held by someone else".
    pub conflict_exit_code: i32,
}

/// Everything `redlock run` needs.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub lock: LockSettings,
    pub supervise: supervise::Options,
    pub command: Vec<OsString>,
}

pub fn lock_settings(args: &LockArgs) -> Result<LockSettings, Failure> {
    if args.key.is_empty() {
        return Err(Failure::usage(
            "--key must not be empty: name the lock, e.g. --key deploy-prod",
        ));
    }
    let ttl = args.ttl;
    if ttl < Duration::from_millis(10) {
        return Err(Failure::usage(format!(
            "--ttl {} is too short: use at least 10ms (30s suits most jobs; renewal keeps the \
             lock while the command runs)",
            show(ttl)
        )));
    }
    if ttl.as_millis() > i64::MAX as u128 {
        return Err(Failure::usage(
            "--ttl is too long for Redis: use a shorter TTL",
        ));
    }
    if !(0.0..0.5).contains(&args.drift_factor) || args.drift_factor.is_nan() {
        return Err(Failure::usage(format!(
            "--drift-factor {} is out of range: use a value from 0 to 0.5 (default 0.01)",
            args.drift_factor
        )));
    }
    let node_timeout = args
        .node_timeout
        .unwrap_or_else(|| Timing::default_node_timeout(ttl));
    if node_timeout.is_zero() || node_timeout * 2 >= ttl {
        return Err(Failure::usage(format!(
            "--node-timeout {} must be above zero and under half of --ttl {}: a slow master \
             would eat the whole validity; raise --ttl or lower --node-timeout",
            show(node_timeout),
            show(ttl)
        )));
    }
    let timing = Timing {
        ttl,
        node_timeout,
        drift_factor: args.drift_factor,
    };
    if timing.drift() + node_timeout >= ttl {
        return Err(Failure::usage(format!(
            "--ttl {} leaves no validity after the clock-drift allowance and one node timeout: \
             raise --ttl",
            show(ttl)
        )));
    }
    let wait = if args.no_wait {
        Duration::ZERO
    } else {
        args.wait.unwrap_or(Duration::ZERO)
    };
    Ok(LockSettings {
        key: args.key.clone(),
        timing,
        wait,
        conflict_exit_code: args.conflict_exit_code.map_or(exit::CONFLICT, i32::from),
    })
}

pub fn run_settings(args: RunArgs) -> Result<RunSettings, Failure> {
    let lock = lock_settings(&args.lock)?;
    let ttl = lock.timing.ttl;
    let kill_after = args
        .kill_after
        .unwrap_or_else(|| supervise::Options::default_kill_after(ttl));
    let longest = supervise::Options::max_kill_after(ttl);
    if kill_after > longest {
        return Err(Failure::usage(format!(
            "--kill-after {} does not fit inside --ttl {}: the command must be dead before the \
             lock's validity ends; use at most {} or raise --ttl",
            show(kill_after),
            show(ttl),
            show(longest)
        )));
    }
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(Failure::usage(
            "no command to run: put it after --, e.g. redlock run --key k -- ./job.sh",
        ));
    }
    Ok(RunSettings {
        supervise: supervise::Options::new(ttl, kill_after),
        lock,
        command: args.command,
    })
}

/// Everything `redlock acquire` needs.
#[derive(Clone, Debug)]
pub struct AcquireSettings {
    pub lock: LockSettings,
    pub format: Format,
    pub renew_while: Option<i32>,
}

pub fn acquire_settings(args: AcquireArgs) -> Result<AcquireSettings, Failure> {
    let lock = lock_settings(&args.lock)?;
    if let Some(pid) = args.renew_while
        && !supervise::watch::process_exists(pid)
    {
        return Err(Failure::usage(format!(
            "--renew-while {pid}: no such process; pass the pid of a running process, e.g. $$ \
             for the calling shell"
        )));
    }
    Ok(AcquireSettings {
        lock,
        format: args.format,
        renew_while: args.renew_while,
    })
}

/// The per-node timeout of commands that have no TTL to derive it from.
pub const DEFAULT_NODE_TIMEOUT: Duration = Duration::from_secs(1);

/// A lock named by key and token (`release`, `extend`), with the timing to use on it.
#[derive(Clone, Debug)]
pub struct TokenSettings {
    pub key: String,
    pub token: String,
    pub timing: Timing,
}

pub fn token_settings(args: &TokenArgs, ttl: Option<Duration>) -> Result<TokenSettings, Failure> {
    if args.key.is_empty() {
        return Err(Failure::usage(
            "--key must not be empty: name the lock, e.g. --key deploy-prod",
        ));
    }
    if args.token.trim().is_empty() {
        return Err(Failure::usage(
            "--token must not be empty: pass the token `redlock acquire` printed",
        ));
    }
    let node_timeout = args.node_timeout.unwrap_or(DEFAULT_NODE_TIMEOUT);
    if node_timeout.is_zero() {
        return Err(Failure::usage("--node-timeout must be above zero, e.g. 1s"));
    }
    let ttl = ttl.unwrap_or(Duration::from_secs(30));
    if ttl < Duration::from_millis(10) || node_timeout * 2 >= ttl {
        return Err(Failure::usage(format!(
            "--ttl {} is too short: use at least 10ms and more than twice --node-timeout {}",
            show(ttl),
            show(node_timeout)
        )));
    }
    Ok(TokenSettings {
        key: args.key.clone(),
        token: args.token.trim().to_string(),
        timing: Timing {
            ttl,
            node_timeout,
            drift_factor: Timing::DEFAULT_DRIFT_FACTOR,
        },
    })
}

fn show(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn run(args: &[&str]) -> Result<RunSettings, Failure> {
        let mut argv = vec!["redlock", "run"];
        argv.extend_from_slice(args);
        let Command::Run(run) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not run")
        };
        run_settings(run)
    }

    #[test]
    fn defaults_are_derived_from_the_ttl() {
        let s = run(&["--key", "k", "--ttl", "10s", "--", "true"]).unwrap();
        assert_eq!(s.lock.timing.node_timeout, Duration::from_millis(500));
        assert_eq!(s.lock.wait, Duration::ZERO);
        assert_eq!(s.supervise.kill_after, Duration::from_millis(2500));
        assert_eq!(s.supervise.renew_every, Duration::from_secs(10) / 3);
        assert_eq!(s.lock.conflict_exit_code, 75);
    }

    #[test]
    fn rejects_values_that_make_no_sense() {
        let cases: &[&[&str]] = &[
            &["--key", "", "--", "true"],
            &["--key", "k", "--ttl", "0s", "--", "true"],
            &[
                "--key",
                "k",
                "--ttl",
                "1s",
                "--node-timeout",
                "600ms",
                "--",
                "true",
            ],
            &[
                "--key",
                "k",
                "--ttl",
                "1s",
                "--node-timeout",
                "0s",
                "--",
                "true",
            ],
            &[
                "--key",
                "k",
                "--ttl",
                "10s",
                "--kill-after",
                "6s",
                "--",
                "true",
            ],
            &["--key", "k", "--drift-factor", "0.7", "--", "true"],
            &["--key", "k", "--", ""],
        ];
        for args in cases {
            let failure = run(args).expect_err(&format!("{args:?} accepted"));
            assert_eq!(failure.code, exit::USAGE, "{args:?}");
            assert!(!failure.message.contains('\n'), "{}", failure.message);
        }
    }

    #[test]
    fn duplicate_masters_are_a_configuration_error() {
        let flags = vec![
            "redis://localhost:7001".to_string(),
            "redis://127.0.0.1:7001/2".into(),
        ];
        let failure = masters(&flags).unwrap_err();
        assert_eq!(failure.code, exit::CONFIG);
        assert!(
            failure.message.contains("same master"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn bad_urls_are_a_configuration_error() {
        let failure = masters(&["localhost:6379".to_string()]).unwrap_err();
        assert_eq!(failure.code, exit::CONFIG);
    }
}
